/**
 * Events appended to an informer's log, counted by type, a per-minute series of the last hour (the
 * status page's sparkline), and the bytes of bodies the log holds. Counted lazily from the log
 * itself: the write path pays nothing.
 *
 * Guarantees:
 * - Every event is counted exactly once: `counted_seq` (the last event counted) advances in the
 *   transaction that adds the counts, and counting runs before retention deletes rows (in the
 *   same transaction: EventLog.compactInTx's `beforeDelete`) and whenever metrics are read —
 *   never per applied batch (a row written per batch, issue 19).
 * - `log_bytes` is the bytes of the segments of counted events still stored (their states and the
 *   states they replaced): added as they are counted, taken off as retention deletes them
 *   (`logBytesDeletedInTx`), so reading it reads one row. Counting ends at a segment's end: appends
 *   are whole segments and counts run between them.
 * - The counts are durable and only grow: Prometheus counters across evictions and restarts; only
 *   deleting the informer (all its storage) resets them.
 * - The series keeps SERIES_MINUTES minutes, keyed by the minute of each event's `at`, so counting
 *   late files events under the minute they happened.
 *
 * Cost: the entries (not the bodies) of the segments since the last count, a page at a time, and one
 * UPDATE, per scrape and per retention step, never per applied batch. event-log.ts owns the log's
 * tables: this module reads them through it.
 */
import type { EventLog, LogEventType } from "./event-log.ts";
import { type Db, stmt } from "../sql.ts";

export const SERIES_MINUTES = 60;
const MINUTE_MS = 60_000;

export const LOG_COUNTER_MIGRATIONS = [
  `CREATE TABLE informer_metrics (
     id INTEGER PRIMARY KEY CHECK (id = 1), counted_seq INTEGER NOT NULL, events TEXT NOT NULL, minutes TEXT NOT NULL);
   INSERT INTO informer_metrics (id, counted_seq, events, minutes)
     VALUES (1, 0, '{"add":0,"update":0,"delete":0,"sync":0}', '[]')`,
  // log_bytes: see the contract; counted from the segments when this release first runs.
  `ALTER TABLE informer_metrics ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0`,
  // The log became segments (issue 19): what counted_seq covers is counted again in their bytes.
  `UPDATE informer_metrics SET log_bytes = (SELECT coalesce(sum(octet_length(bodies)), 0) FROM event_segments WHERE last_seq <= informer_metrics.counted_seq)
     + (SELECT coalesce(sum(octet_length(p.text)), 0) FROM event_segment_parts p JOIN event_segments s ON s.first_seq = p.first_seq WHERE s.last_seq <= informer_metrics.counted_seq)`,
] as const;

const GET = stmt("logCounters.get", "SELECT counted_seq, events, minutes FROM informer_metrics WHERE id = 1");
const SET = stmt("logCounters.set", "UPDATE informer_metrics SET counted_seq = ?, events = ?, minutes = ?, log_bytes = log_bytes + ? WHERE id = 1");
const BYTES_DELETED = stmt("logCounters.bytesDeleted", "UPDATE informer_metrics SET log_bytes = log_bytes - ? WHERE id = 1");
const LOG_BYTES = stmt("logCounters.bytes", "SELECT log_bytes FROM informer_metrics WHERE id = 1");

export type EventCounts = Record<LogEventType, number>;

export interface LogCounts {
  events: EventCounts;
  /** The minutes (since the epoch) of the last hour that had events, oldest first. */
  minutes: { minute: number; events: number }[];
}

/** Segments whose entries one read takes while counting. */
const COUNT_PAGE = 64;

/** Counts the events appended since the last count; inside a transaction. */
export function countLogInTx(db: Db, log: EventLog, now: number): LogCounts {
  const row = db.first<{ counted_seq: number; events: string; minutes: string }>(GET)!;
  const events = JSON.parse(row.events) as EventCounts;
  const byMinute = new Map<number, number>(JSON.parse(row.minutes) as [number, number][]);
  const oldest = Math.floor(now / MINUTE_MS) - SERIES_MINUTES + 1;
  let counted = row.counted_seq;
  let bytes = 0;
  for (let read = log.entriesAfter(counted, COUNT_PAGE); read.entries.length > 0; read = log.entriesAfter(counted, COUNT_PAGE)) {
    for (const { type, at, seq } of read.entries) {
      events[type] = (events[type] ?? 0) + 1;
      const minute = Math.floor(at / MINUTE_MS);
      if (minute >= oldest) byMinute.set(minute, (byMinute.get(minute) ?? 0) + 1);
      counted = Math.max(counted, seq);
    }
    bytes += read.bytes;
  }
  const minutes = [...byMinute].filter(([minute]) => minute >= oldest).sort((a, b) => a[0] - b[0]);
  if (counted > row.counted_seq || minutes.length !== byMinute.size) db.run(SET, counted, JSON.stringify(events), JSON.stringify(minutes), bytes);
  return { events, minutes: minutes.map(([minute, n]) => ({ minute, events: n })) };
}

/** The last hour as one number per minute, oldest first, ending with the current minute. */
export function perMinute(counts: LogCounts, now: number): number[] {
  const current = Math.floor(now / MINUTE_MS);
  const byMinute = new Map(counts.minutes.map(({ minute, events }) => [minute, events]));
  return Array.from({ length: SERIES_MINUTES }, (_, i) => byMinute.get(current - SERIES_MINUTES + 1 + i) ?? 0);
}

/** Bytes the log's segments hold, as of the last count. */
export function logBytes(db: Db): number {
  return db.first<{ log_bytes: number }>(LOG_BYTES)!.log_bytes;
}

/** Bytes the log's segments hold now: as of the last count, plus the segments appended since, read and not counted (a status writes nothing). */
export function logBytesNow(db: Db, log: EventLog): number {
  let counted = db.first<{ counted_seq: number }>(GET)!.counted_seq;
  let bytes = logBytes(db);
  for (let read = log.entriesAfter(counted, COUNT_PAGE); read.entries.length > 0; read = log.entriesAfter(counted, COUNT_PAGE)) {
    for (const { seq } of read.entries) counted = Math.max(counted, seq);
    bytes += read.bytes;
  }
  return bytes;
}

/** Retention deleted `bytes` of counted bodies; inside its transaction. */
export function logBytesDeletedInTx(db: Db, bytes: number): void {
  if (bytes > 0) db.run(BYTES_DELETED, bytes);
}

/** An informer's metrics as read at `at` (Informer.metrics). */
export interface InformerMetrics extends LogCounts {
  progress: import("./cache-progress.ts").InformerProgress;
  counters: import("./reflector-counters.ts").ReflectorCounters;
  lastErrorReason: import("./reflector-counters.ts").ErrorReason | null;
  lastErrorAt: number | null;
  lastEventAt: number | null;
  logBytes: number;
  /** The database's size against its ceiling and whether retention is shrunk (cache/storage-ceiling.ts). */
  storage: import("./storage-ceiling.ts").StorageVerdict;
  at: number;
}

