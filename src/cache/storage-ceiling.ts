/**
 * The storage ceiling: a Durable Object's SQLite database holds at most 10 GB, and a full one fails
 * every write with SQLITE_FULL, which the informer can only retry forever (review B10). Past a
 * ceiling below that limit the event log's retention shrinks, so that what the log holds makes room
 * for the cache, which cannot shrink (it is the cluster's state).
 *
 * Guarantees:
 * - `storageVerdict` is a pure function of what is measured now (the database's size, and over the
 *   ceiling the log's bytes and events): under the ceiling, the configured retention; over it, a `maxEvents` that
 *   keeps the share of the log's events that would bring the size back to the ceiling, never below
 *   MIN_SHRUNK_EVENTS nor above the configured one. Nothing is stored: once compaction has freed
 *   the room (locally, sql.databaseSize falls as rows are deleted), the configured retention
 *   applies again, so the log settles at about the ceiling rather than shrinking for good.
 * - Age retention (`maxAgeSeconds`) is kept as configured: only the count can free room at once.
 * - Over the ceiling, `shrunk` says why in words fit for a status field and a log line.
 */
import type { Retention } from "./log-retention.ts";

/** The platform's limit per Durable Object (reference: "SQL limits"), in bytes (decimal GB: the lower reading). */
export const STORAGE_LIMIT_BYTES = 10_000_000_000;
/** The share of the limit past which retention shrinks: room left for a relist's staged copy and a burst. */
export const STORAGE_CEILING_FRACTION = 0.7;
export const DEFAULT_STORAGE_CEILING_BYTES = STORAGE_LIMIT_BYTES * STORAGE_CEILING_FRACTION;
/** STORAGE_CEILING_MB's range: from a database that barely holds a cache to the platform's limit. */
export const MIN_CEILING_MB = 100;
export const MAX_CEILING_MB = STORAGE_LIMIT_BYTES / 1_000_000;

/**
 * The ceiling an operator set (`STORAGE_CEILING_MB`, whole decimal megabytes, MIN_CEILING_MB to
 * MAX_CEILING_MB), or the default (70% of the limit) when unset. A value out of range or not a whole
 * number is an error (the caller records it and keeps the default: ingest must not stop on it).
 */
export function storageCeilingOf(setting: string | undefined): { ceilingBytes: number; error?: string } {
  if (setting === undefined || setting.trim() === "") return { ceilingBytes: DEFAULT_STORAGE_CEILING_BYTES };
  const mb = Number(setting);
  if (Number.isInteger(mb) && mb >= MIN_CEILING_MB && mb <= MAX_CEILING_MB) return { ceilingBytes: mb * 1_000_000 };
  return {
    ceilingBytes: DEFAULT_STORAGE_CEILING_BYTES,
    error: `STORAGE_CEILING_MB must be a whole number of megabytes from ${MIN_CEILING_MB} to ${MAX_CEILING_MB}, not '${setting}': the default (${DEFAULT_STORAGE_CEILING_BYTES / 1_000_000}) applies`,
  };
}

/** The fewest events a shrunk log keeps: the smallest `retention.maxEvents` a spec may ask for (config/informer-spec.ts). */
export const MIN_SHRUNK_EVENTS = 1_000;

/** The event log, measured only over the ceiling: under it, a status or a compaction reads no row for this. */
export interface LogMeasures {
  /** What the event log's retained events store (log-counters.ts logBytes). */
  logBytes: number;
  /** Events the log retains (tail - head + 1). */
  retainedEvents: number;
}

export interface StorageVerdict {
  bytes: number;
  ceilingBytes: number;
  /** The retention compaction applies: the configured one, or a smaller maxEvents while over the ceiling. */
  retention: Retention;
  /** Why retention is shrunk; null under the ceiling. */
  shrunk: string | null;
}

/** `bytes`: the whole database (sql.databaseSize); `measureLog` is called only when it is over `ceilingBytes`. */
export function storageVerdict(bytes: number, measureLog: () => LogMeasures, ceilingBytes: number, configured: Retention): StorageVerdict {
  if (bytes <= ceilingBytes) return { bytes, ceilingBytes, retention: configured, shrunk: null };
  const { logBytes, retainedEvents } = measureLog();
  // The log's bytes per event are about even: keep the share of its events the ceiling leaves room for.
  const keepShare = logBytes > 0 ? Math.max(0, logBytes - (bytes - ceilingBytes)) / logBytes : 0;
  const maxEvents = Math.min(configured.maxEvents, Math.max(MIN_SHRUNK_EVENTS, Math.floor(retainedEvents * keepShare)));
  const shrunk =
    `storage of ${bytes} bytes is over its ceiling of ${ceilingBytes} (the platform's limit is ${STORAGE_LIMIT_BYTES} per object): ` +
    (maxEvents < configured.maxEvents
      ? `event log retention shrunk to ${maxEvents} events (configured ${configured.maxEvents})`
      : `event log retention is already at its minimum of ${maxEvents} events: the cache itself is too large for one object`);
  return { bytes, ceilingBytes, retention: { ...configured, maxEvents }, shrunk };
}

/** What GET /informers/{name} reports (docs/api.md `storage`). */
export interface StorageStatus {
  bytes: number;
  ceilingBytes: number;
  /** The retention in force. */
  maxEvents: number;
  /** `shrunk`: why retention is below the configured one; null under the ceiling. */
  retentionShrunk: string | null;
}

export function storageStatus(verdict: StorageVerdict): StorageStatus {
  return { bytes: verdict.bytes, ceilingBytes: verdict.ceilingBytes, maxEvents: verdict.retention.maxEvents, retentionShrunk: verdict.shrunk };
}
