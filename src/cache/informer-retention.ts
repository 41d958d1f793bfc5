/**
 * An informer's event-log retention (Informer.compactLog): the configured retention, shrunk while
 * the database is past its storage ceiling (storage-ceiling.ts), applied in bounded transactions.
 *
 * Guarantees:
 * - Events are counted for the metrics (log-counters.ts) in the transaction that deletes them,
 *   before they go: no event is deleted uncounted.
 * - Age never expires the last transaction run (review F20): on a quiet resource a watch resuming
 *   from any of its RVs starts after the mark before it, which an upstream bookmark cannot move.
 *   The last mark before the head is kept: a watch from it starts at the head.
 * - A shrink is logged once when it starts (warn) and once when it ends, not at every compaction;
 *   readers it cuts past (storage-ceiling.ts `cutPast`) are logged (warn) whenever they change.
 * - Measuring (`storage`, what a status reads) only reads: it writes no row and opens no
 *   transaction (review: "status reads write"); the log's bytes not counted yet are read, not counted.
 */
import type { Clock } from "../clock.ts";
import type { InformerIdentity } from "../log-identity.ts";
import { logger } from "../log.ts";
import type { Db } from "../sql.ts";
import type { CacheProgress } from "./cache-progress.ts";
import type { EventLog } from "./event-log.ts";
import { countLogInTx, logBytesDeletedInTx, logBytesNow } from "./log-counters.ts";
import type { LogReaders } from "./log-readers.ts";
import { firstSince, type Retention } from "./log-retention.ts";
import { type StageRefused, stagePageRefusal, stageStartRefusal } from "./stage-room.ts";
import { DEFAULT_STORAGE_CEILING_BYTES, MIN_SHRUNK_SECONDS, STORAGE_LIMIT_BYTES, type StorageVerdict, storageVerdict } from "./storage-ceiling.ts";

/** Segments one retention transaction deletes at most. */
const COMPACT_BATCH = 2_000;

export interface RetentionSettings {
  retention: Retention;
  /**
   * The object's database size (sql.databaseSize) and the ceiling past which the log's retention
   * shrinks (storage-ceiling.ts; default 70% of the 10 GB limit, lower in tests). None: never measured.
   */
  storage?: {
    bytes: () => number;
    ceilingBytes?: number;
    /** The platform's limit (STORAGE_LIMIT_BYTES): lower in tests, as workerd enforces none. */
    limitBytes?: number;
    /** Who still reads the log (log-readers.ts): a shrink holds for them. None: no reader is known. */
    readers?: Pick<LogReaders, "readers" | "noteWatchRead">;
  };
}

export class InformerRetention {
  readonly #db: Db;
  readonly #log: EventLog;
  readonly #cacheProgress: CacheProgress;
  readonly #clock: Clock;
  readonly #settings: RetentionSettings;
  readonly #identity: InformerIdentity | undefined;
  /** Whether retention was last applied shrunk: a warn line when it starts, not every slice. */
  #shrunk = false;
  /** The readers the last compaction cut past, so a warn line says when they change. */
  #cutPast = "";

  constructor(parts: { db: Db; log: EventLog; cacheProgress: CacheProgress; clock: Clock; settings: RetentionSettings; identity: InformerIdentity | undefined }) {
    this.#db = parts.db;
    this.#log = parts.log;
    this.#cacheProgress = parts.cacheProgress;
    this.#clock = parts.clock;
    this.#settings = parts.settings;
    this.#identity = parts.identity;
  }

  /** Applies the retention, a bounded amount per transaction. */
  compact(): void {
    const now = this.#clock.now();
    const storage = this.storage();
    if ((storage.shrunk !== null) !== this.#shrunk) {
      this.#shrunk = storage.shrunk !== null;
      if (storage.shrunk !== null) logger.warn("storage ceiling: event log retention shrunk", { ...this.#identity, reason: storage.shrunk, bytes: storage.bytes, ceilingBytes: storage.ceilingBytes, maxEvents: storage.retention.maxEvents });
      else logger.info("storage back under its ceiling: configured retention", { ...this.#identity, bytes: storage.bytes, ceilingBytes: storage.ceilingBytes });
    }
    if (storage.cutPast.join("\n") !== this.#cutPast) {
      this.#cutPast = storage.cutPast.join("\n");
      if (storage.cutPast.length > 0) logger.warn("storage ceiling: event log retention cuts past readers", { ...this.#identity, readers: storage.cutPast.join(", "), reason: storage.shrunk });
    }
    const lastRun = this.#cacheProgress.lastMarkBelow(this.#log.bounds().tail) + 1;
    // Metrics count events from the log: before retention deletes any (log-counters.ts), in its transaction.
    const options = {
      keepFrom: lastRun,
      continuing: false,
      beforeDelete: () => countLogInTx(this.#db, this.#log, now),
      deleted: (bytes: number) => logBytesDeletedInTx(this.#db, bytes),
    };
    while (this.#db.transaction(() => this.#log.compactInTx(now, storage.retention, COMPACT_BATCH, options))) {
      options.continuing = true; // a full batch was deleted: more may be left
    }
    this.#db.transaction(() => this.#cacheProgress.compactInTx(this.#log.bounds().head));
  }

  /** Whether a relist may stage its first page (estimate: the database less the log) or its next one (stage-room.ts); reads only. */
  stageRefusal(first: boolean): StageRefused | undefined {
    const storage = this.#settings.storage;
    if (storage === undefined) return undefined;
    const bytes = storage.bytes();
    const limitBytes = storage.limitBytes ?? STORAGE_LIMIT_BYTES;
    return first ? stageStartRefusal(bytes, Math.max(0, bytes - logBytesNow(this.#db, this.#log)), limitBytes) : stagePageRefusal(bytes, limitBytes);
  }

  /** The database's size against its ceiling, and the retention that applies (storage-ceiling.ts); reads only. */
  storage(): StorageVerdict {
    const now = this.#clock.now();
    const storage = this.#settings.storage;
    const measureLog = () => {
      const { head, tail } = this.#log.bounds();
      const recentFrom = tail === 0 ? undefined : firstSince(this.#db, head, now - MIN_SHRUNK_SECONDS * 1000);
      return {
        logBytes: logBytesNow(this.#db, this.#log),
        retainedEvents: Math.max(0, tail - head + 1),
        tail,
        recentEvents: recentFrom === undefined ? 0 : tail - recentFrom + 1,
        readers: storage?.readers?.readers(now) ?? [],
      };
    };
    return storageVerdict(
      storage?.bytes() ?? 0,
      measureLog,
      storage?.ceilingBytes ?? DEFAULT_STORAGE_CEILING_BYTES,
      this.#settings.retention,
      storage?.limitBytes ?? STORAGE_LIMIT_BYTES,
    );
  }
}
