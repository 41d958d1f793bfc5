/**
 * The informer: client-go's controller + sharedIndexInformer for one resource, durable. It owns the
 * reflector's persisted state, the DeltaFIFO, the indexer and the event log, and runs one bounded
 * slice of work per `tick` (one alarm).
 *
 * Guarantees:
 * - Invariant 1: watch deltas and the lastSyncResourceVersion they bring are written in one
 *   transaction (`applyWatch`); a list's Replace, its RV and the reflector's next state likewise
 *   (`commitList`). After an eviction at any instant the loop resumes from the stored RV and state:
 *   nothing lost, nothing applied twice (a replayed event is a no-op, process-deltas.ts).
 * - Invariant 2: each pop, its indexer updates and its log events are one transaction.
 * - The queue is drained before the reflector takes its next step, so a list never starts while an
 *   earlier Replace is half processed, and staging is never reused under pending deltas.
 * - A tick ends after a list completes or after one watch session, or at its deadline, so every
 *   alarm stays within the platform's CPU and wall-clock limits; `wakeAt` is durable and the
 *   Durable Object re-arms its alarm from it.
 */
import { type Clock, type Random, yieldToEventLoop } from "../clock.ts";
import type { ListerWatcher } from "../kube/client.ts";
import type { KubeObject, WatchEvent } from "../kube/types.ts";
import { type Db, migrate, stmt } from "../sql.ts";
import { DELTA_FIFO_MIGRATIONS, DeltaFIFO } from "./delta-fifo.ts";
import { EVENT_LOG_MIGRATIONS, EventLog, type LogBounds, type Retention } from "./event-log.ts";
import { INDEXER_MIGRATIONS, Indexer } from "./indexer.ts";
import { processDeltasInTx } from "./process-deltas.ts";
import {
  initialMemory,
  type ReflectorMemory,
  type ReflectorOptions,
  type ReflectorSink,
  type ReflectorState,
  step,
} from "./reflector.ts";
import { makeTransform, type TransformSpec } from "./transform.ts";

/** What the informer needs of its spec (config.ts validates the full spec). */
export interface InformerSettings {
  indexers: Record<string, string>;
  transform: TransformSpec;
  retention: Retention;
  reflector: ReflectorOptions;
}

export type WatchStateName = "idle" | "listing" | "watching" | "backoff";

export interface InformerProgress {
  synced: boolean;
  lastSyncResourceVersion: string;
  objects: number;
  queueDepth: number;
  watch: { state: WatchStateName; since: string | null; restarts: number };
  relists: number;
  lastError: string | null;
  eventLog: LogBounds;
  wakeAt: number;
}

export const INFORMER_MIGRATIONS = [
  `CREATE TABLE informer_state (
     id INTEGER PRIMARY KEY CHECK (id = 1), last_sync_rv TEXT NOT NULL, reflector TEXT NOT NULL,
     memory TEXT NOT NULL, wake_at INTEGER NOT NULL);
   INSERT INTO informer_state (id, last_sync_rv, reflector, memory, wake_at) VALUES (1, '', '{"kind":"idle"}', '${JSON.stringify(initialMemory)}', 0)`,
] as const;

const LAST_SYNC_RV = stmt("informer.lastSyncRv", "SELECT last_sync_rv FROM informer_state WHERE id = 1");
const SET_LAST_SYNC_RV = stmt("informer.setLastSyncRv", "UPDATE informer_state SET last_sync_rv = ? WHERE id = 1");
const LOAD = stmt("informer.load", "SELECT reflector, memory, wake_at FROM informer_state WHERE id = 1");
const SAVE_MEMORY = stmt("informer.saveMemory", "UPDATE informer_state SET memory = ? WHERE id = 1");
const SAVE = stmt("informer.save", "UPDATE informer_state SET reflector = ?, memory = ?, wake_at = ? WHERE id = 1");
const RESTART = stmt(
  "informer.restart",
  "UPDATE informer_state SET last_sync_rv = '', reflector = '{\"kind\":\"idle\"}', memory = ?, wake_at = 0 WHERE id = 1",
);

/** Keys popped per transaction: bounds the memory and duration of one processing transaction. */
export const POP_BATCH = 500;
/** Rows retention deletes per transaction. */
const COMPACT_BATCH = 2_000;

/** Creates the informer's tables (idempotent; runs on every wake). */
export function migrateInformer(db: Db): void {
  migrate(db, "event_log", EVENT_LOG_MIGRATIONS);
  migrate(db, "indexer", INDEXER_MIGRATIONS);
  migrate(db, "delta_fifo", DELTA_FIFO_MIGRATIONS);
  migrate(db, "informer", INFORMER_MIGRATIONS);
}

interface Persisted {
  state: ReflectorState;
  memory: ReflectorMemory;
  wakeAt: number;
}

export class Informer implements ReflectorSink {
  readonly indexer: Indexer;
  readonly log: EventLog;
  readonly fifo: DeltaFIFO;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #settings: InformerSettings;
  readonly #onAppended: ((tail: number) => void) | undefined;
  /** The log's tail as last announced through `onAppended`. */
  #announced = 0;

  /**
   * @param onAppended called after a transaction that appended events, with the log's new tail
   *   (the informer object nudges its subscriptions with it).
   */
  constructor(db: Db, settings: InformerSettings, clock: Clock, random: Random, onAppended?: (tail: number) => void) {
    this.#db = db;
    this.#onAppended = onAppended;
    this.#clock = clock;
    this.#random = random;
    this.#settings = settings;
    this.indexer = new Indexer(db, settings.indexers);
    this.log = new EventLog(db, Indexer.pinsEventSql);
    this.fifo = new DeltaFIFO(db, this.indexer, makeTransform(settings.transform));
  }

  /**
   * Runs one slice: drains the queue, then reflector steps while they are due, until a list
   * completes, a watch session ends, or `deadline`. Returns when the next slice is due.
   */
  async tick(lw: ListerWatcher, deadline: number, signal?: AbortSignal): Promise<number> {
    for (;;) {
      if (!(await this.processQueue(deadline))) return this.#clock.now();
      this.compactLog();
      const current = this.#load();
      const now = this.#clock.now();
      if (current.wakeAt > now) return current.wakeAt;
      if (now >= deadline || signal?.aborted) return now;
      let result;
      try {
        result = await step(current.state, current.memory, {
          lw,
          sink: this,
          clock: this.#clock,
          random: this.#random,
          options: this.#settings.reflector,
          deadline,
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        // A bug or a storage failure, not an API answer: record it and retry later rather than spin.
        const memory = { ...current.memory, lastError: `internal error: ${error instanceof Error ? error.message : String(error)}` };
        this.#save({ state: current.state, memory, wakeAt: this.#clock.now() + 30_000 });
        throw error;
      }
      // Stopped for a reconfiguration or deletion: keep the last persisted position (e.g. mid-list)
      // rather than the aborted step's error.
      if (signal?.aborted) return this.#clock.now();
      this.#save(result);
      const sliceDone =
        current.state.kind === "watching" || (current.state.kind === "listing" && result.state.kind === "watching");
      if (sliceDone) {
        await this.processQueue(deadline);
        return result.wakeAt;
      }
    }
  }

  /**
   * Pops and processes queued keys until the queue is empty (true) or `deadline` passes (false),
   * one transaction per POP_BATCH keys, yielding between them so the object keeps answering
   * queries while a large Replace is processed.
   */
  async processQueue(deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    for (let first = true; ; first = false) {
      if (!first) await yieldToEventLoop();
      const popped = this.#db.transaction(() => this.#popInTx(POP_BATCH));
      this.#announce();
      if (popped === 0) {
        this.#db.transaction(() => this.fifo.releaseStagingInTx());
        return true;
      }
      if (this.#clock.now() >= deadline) return this.fifo.isEmpty();
    }
  }

  /** Pops up to `max` keys (in POP_BATCH batches) into the indexer and the log; inside a transaction. */
  #popInTx(max: number): number {
    const deps = { indexer: this.indexer, log: this.log, clock: this.#clock };
    let total = 0;
    while (total < max) {
      const popped = this.fifo.popInTx(Math.min(POP_BATCH, max - total), (batch) => processDeltasInTx(batch, deps));
      if (popped === 0) break;
      total += popped;
    }
    return total;
  }

  #announce(): void {
    if (!this.#onAppended) return;
    const tail = this.log.nextSeq() - 1;
    if (tail <= this.#announced) return;
    this.#announced = tail;
    this.#onAppended(tail);
  }

  /** Applies the log's retention, a bounded amount per transaction. */
  compactLog(): void {
    const now = this.#clock.now();
    while (this.#db.transaction(() => this.log.compactInTx(now, this.#settings.retention, COMPACT_BATCH))) {
      // keep going while rows were deleted
    }
  }

  // --- ReflectorSink -------------------------------------------------------------------------

  lastSyncResourceVersion(): string {
    return this.#db.first<{ last_sync_rv: string }>(LAST_SYNC_RV)!.last_sync_rv;
  }

  beginList(): void {
    this.#db.transaction(() => this.fifo.beginReplaceInTx({ allowDirect: true }));
  }

  stage(objects: KubeObject[]): void {
    this.#db.transaction(() => {
      if (!this.fifo.isDirectReplace()) return this.fifo.stageInTx(objects);
      // The initial list: queue and pop the page at once, writing each body once.
      this.fifo.bufferedInTx(() => {
        this.fifo.replaceDirectInTx(objects);
        this.#popInTx(Number.POSITIVE_INFINITY);
      });
    });
    this.#announce();
  }

  commitList(resourceVersion: string, next: { state: ReflectorState; memory: ReflectorMemory }): void {
    this.#db.transaction(() => {
      this.fifo.commitReplaceInTx();
      this.#db.run(SET_LAST_SYNC_RV, resourceVersion);
      this.#saveInTx({ ...next, wakeAt: this.#clock.now() });
    });
  }

  applyWatch(events: WatchEvent[], resourceVersion: string): void {
    // One transaction: the chunk's deltas and its RV (invariant 1), then their pops (invariant 2).
    // The FIFO keeps the deltas in memory meanwhile, so bodies popped at once are never stored twice.
    // An older backlog (rare while watching) is popped up to a bound here and drained by `tick`.
    this.#db.transaction(() =>
      this.fifo.bufferedInTx(() => {
        for (const event of events) {
          if (event.type === "ADDED") this.fifo.addInTx(event.object);
          else if (event.type === "MODIFIED") this.fifo.updateInTx(event.object);
          else if (event.type === "DELETED") this.fifo.deleteInTx(event.object);
        }
        this.#db.run(SET_LAST_SYNC_RV, resourceVersion);
        this.#popInTx(events.length + POP_BATCH);
      }),
    );
    this.#announce();
  }

  watchOpened(memory: ReflectorMemory): void {
    this.#db.run(SAVE_MEMORY, JSON.stringify(memory));
  }

  // --- lifecycle and status -------------------------------------------------------------------

  /**
   * Forgets the reflector's position so the next tick relists from scratch. Used when what is
   * listed changed (resource, namespace, selectors): the relist's Replace turns the difference
   * into events — objects no longer selected are deleted (finalStateUnknown), new ones added.
   */
  restart(): void {
    this.#db.run(RESTART, JSON.stringify(initialMemory));
  }

  /** Records a failure outside the reflector (e.g. no API server configured) and retries at `retryAt`. */
  recordFailure(message: string, retryAt: number): void {
    const current = this.#load();
    this.#save({ ...current, memory: { ...current.memory, lastError: message }, wakeAt: retryAt });
  }

  /** Wakes the loop now (e.g. after a configuration change), keeping its state. */
  wakeNow(): void {
    const current = this.#load();
    this.#save({ ...current, wakeAt: 0 });
  }

  /** Rebuilds every index entry (the configured indexers changed), one transaction per batch. */
  rebuildIndexes(): void {
    let after = this.#db.transaction(() => this.indexer.rebuildInTx(undefined, POP_BATCH));
    while (after !== undefined) {
      const from = after;
      after = this.#db.transaction(() => this.indexer.rebuildInTx(from, POP_BATCH));
    }
  }

  progress(): InformerProgress {
    const { state, memory, wakeAt } = this.#load();
    const now = this.#clock.now();
    const stateName: WatchStateName = wakeAt > now && memory.lastError !== null ? "backoff" : state.kind;
    return {
      synced: this.fifo.hasSynced(),
      lastSyncResourceVersion: this.lastSyncResourceVersion(),
      objects: this.indexer.count(),
      queueDepth: this.fifo.length(),
      watch: {
        state: stateName,
        since: memory.watchSince === null ? null : new Date(memory.watchSince).toISOString(),
        restarts: memory.watchRestarts,
      },
      relists: memory.relists,
      lastError: memory.lastError,
      eventLog: this.log.bounds(),
      wakeAt,
    };
  }

  #load(): Persisted {
    const row = this.#db.first<{ reflector: string; memory: string; wake_at: number }>(LOAD)!;
    return { state: JSON.parse(row.reflector), memory: JSON.parse(row.memory), wakeAt: row.wake_at };
  }

  #save(persisted: Persisted): void {
    this.#db.transaction(() => this.#saveInTx(persisted));
  }

  #saveInTx(persisted: Persisted): void {
    this.#db.run(SAVE, JSON.stringify(persisted.state), JSON.stringify(persisted.memory), persisted.wakeAt);
  }
}
