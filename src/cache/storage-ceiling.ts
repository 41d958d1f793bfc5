/**
 * The storage ceiling: a Durable Object's SQLite database holds at most 10 GB, and a full one fails
 * every write with SQLITE_FULL, which the informer can only retry forever (review B10). Past a
 * ceiling below that limit the event log's retention shrinks, so that what the log holds makes room
 * for the cache, which cannot shrink (it is the cluster's state).
 *
 * Guarantees:
 * - `storageVerdict` is a pure function of what is measured now (the database's size, and over the
 *   ceiling the log's bytes, events and readers): under the ceiling, the configured retention; over
 *   it, a `maxEvents` that gives up at most the overage's worth of the log's events (an overage
 *   that is not the log's — the cache, a staged relist — takes nothing more from it: review N5),
 *   never below MIN_SHRUNK_EVENTS nor above the configured one, and, below holdLimitBytes, never
 *   below the last MIN_SHRUNK_SECONDS of events nor past the oldest reader (a subscription's
 *   position, a recent /k8s watch read: log-readers.ts). Past holdLimitBytes readers may be cut
 *   past: `cutPast` names them. Nothing is stored: once compaction has freed
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
/**
 * The history a shrink keeps below holdLimitBytes however small the log's share: a client-go
 * reflector's watch lasts at most 10 minutes, so a re-watch from the last RV it saw finds it here.
 */
export const MIN_SHRUNK_SECONDS = 600;

/**
 * Where a shrink stops holding the log for its readers: halfway from the ceiling to the platform's
 * limit (8.5 GB with the default ceiling). Below it a shrink never moves the head past a reader;
 * past it the database is nearer SQLITE_FULL than any reader is worth, and the readers cut past are
 * named (`cutPast`).
 */
export function holdLimitBytes(ceilingBytes: number, limitBytes = STORAGE_LIMIT_BYTES): number {
  return ceilingBytes + Math.max(0, limitBytes - ceilingBytes) / 2;
}

/** A reader of the event log a shrink holds for: it still needs the events after `after`. */
export interface LogReader {
  /** Fit for a status field and a log line: "subscription <id>", "/k8s watchers". */
  name: string;
  after: number;
}

/** The event log, measured only over the ceiling: under it, a status or a compaction reads no row for this. */
export interface LogMeasures {
  /** What the event log's retained events store (log-counters.ts logBytes). */
  logBytes: number;
  /** Events the log retains (tail - head + 1). */
  retainedEvents: number;
  /** The log's newest event (0: none). */
  tail: number;
  /** Events appended within the last MIN_SHRUNK_SECONDS. */
  recentEvents: number;
  /** Its readers (the oldest subscription, recent /k8s watch reads: log-readers.ts); one the log left behind holds nothing. */
  readers: LogReader[];
}

export interface StorageVerdict {
  bytes: number;
  ceilingBytes: number;
  /** The retention compaction applies: the configured one, or a smaller maxEvents while over the ceiling. */
  retention: Retention;
  /** Why retention is shrunk; null under the ceiling. */
  shrunk: string | null;
  /**
   * Readers the shrunk retention moves (or moved) the head past, which the configured retention
   * would keep by count: only past holdLimitBytes, or once the database fell back below it, until they read again.
   */
  cutPast: string[];
}

/**
 * `bytes`: the whole database (sql.databaseSize); `measureLog` is called only when it is over `ceilingBytes`.
 *
 * Over the ceiling the log gives up at most the overage, at its own bytes per event: an overage
 * that is not the log's (a large cache, a relist's staged copy) is not taken out of it (review N5).
 * Whatever that leaves, the log keeps MIN_SHRUNK_EVENTS and, below holdLimitBytes, the last
 * MIN_SHRUNK_SECONDS of events and every event its oldest reader still needs; past that line
 * readers may be cut past, and are named.
 */
export function storageVerdict(
  bytes: number,
  measureLog: () => LogMeasures,
  ceilingBytes: number,
  configured: Retention,
  limitBytes = STORAGE_LIMIT_BYTES,
): StorageVerdict {
  if (bytes <= ceilingBytes) return { bytes, ceilingBytes, retention: configured, shrunk: null, cutPast: [] };
  const { logBytes, retainedEvents, tail, recentEvents, readers } = measureLog();
  const overage = bytes - ceilingBytes;
  // The log's bytes per event are about even: it keeps the share of its events the overage leaves.
  const byBytes = overage < logBytes ? Math.floor((retainedEvents * (logBytes - overage)) / logBytes) : 0;
  const needs = readers.map((reader) => ({ ...reader, events: tail - reader.after })).filter((r) => r.events > 0);
  // A reader the log has left behind already (it starts over anyway) holds nothing.
  const oldest = needs.filter((r) => r.events <= retainedEvents).reduce<(typeof needs)[number] | undefined>((a, b) => (a === undefined || b.events > a.events ? b : a), undefined);
  const holding = bytes < holdLimitBytes(ceilingBytes, limitBytes);
  const floor = Math.max(MIN_SHRUNK_EVENTS, holding ? Math.max(oldest?.events ?? 0, recentEvents) : 0);
  const maxEvents = Math.min(configured.maxEvents, Math.max(byBytes, floor));
  const cutPast = needs.filter((r) => r.events > maxEvents && r.events <= configured.maxEvents).map((r) => r.name);
  const heldFor = !holding || floor <= byBytes || floor === MIN_SHRUNK_EVENTS ? ""
    : oldest !== undefined && floor === oldest.events ? `, held there for ${oldest.name} (the oldest reader)`
      : `, held there for the last ${MIN_SHRUNK_SECONDS} s of events`;
  const shrunk =
    `storage of ${bytes} bytes is over its ceiling of ${ceilingBytes} (the platform's limit is ${limitBytes} per object): ` +
    (maxEvents < configured.maxEvents
      ? `event log retention shrunk to ${maxEvents} events (configured ${configured.maxEvents})${heldFor}`
      : `event log retention kept at its configured ${maxEvents} events${heldFor}`) +
    (overage >= logBytes ? "; the overage is not the log's: the cache (or a relist's staged copy) is too large for one object" : "") +
    (cutPast.length === 0 ? "" : `; past ${holdLimitBytes(ceilingBytes, limitBytes)} bytes it cuts past ${cutPast.join(", ")}, which must start over`);
  return { bytes, ceilingBytes, retention: { ...configured, maxEvents }, shrunk, cutPast };
}

/** What GET /informers/{name} reports (docs/api.md `storage`). */
export interface StorageStatus {
  bytes: number;
  ceilingBytes: number;
  /** The retention in force. */
  maxEvents: number;
  /** `shrunk`: why retention is below the configured one; null under the ceiling. */
  retentionShrunk: string | null;
  /** Readers (subscriptions, /k8s watchers) the shrunk retention moves the log's head past. */
  retentionCutPast: string[];
}

export function storageStatus(verdict: StorageVerdict): StorageStatus {
  return { bytes: verdict.bytes, ceilingBytes: verdict.ceilingBytes, maxEvents: verdict.retention.maxEvents, retentionShrunk: verdict.shrunk, retentionCutPast: verdict.cutPast };
}
