/**
 * The informer: client-go's controller + sharedIndexInformer for one resource, durable. It owns the
 * reflector's persisted state (informer-state.ts), the DeltaFIFO, the indexer and the event log,
 * and runs one bounded slice of work per `tick` (one alarm): the process loop (process-loop.ts),
 * then reflector steps.
 *
 * Guarantees:
 * - Invariant 1: watch deltas and the lastSyncResourceVersion they bring are written in one
 *   transaction (`applyWatch`); a list's Replace, its RV and the reflector's next state likewise
 *   (`commitList`). After an eviction at any instant the loop resumes from the stored RV and state:
 *   nothing lost, nothing applied twice (a replayed event is a no-op, process-deltas.ts).
 * - Invariant 2: each pop, its indexer updates and its log events are one transaction (process-loop.ts).
 * - The queue is drained before the reflector takes its next step, so a list never starts while an
 *   earlier Replace is half processed, and staging is never reused under pending deltas.
 * - A tick ends after a list completes or after one watch session, or at its deadline, so every
 *   alarm stays within the platform's CPU and wall-clock limits; `wakeAt` is durable and the
 *   Durable Object re-arms its alarm from it. A failure inside a tick (a bug, our storage) backs
 *   off as the reflector does and shows in status: it never re-arms at once.
 * - Queries read `queryView()`: the RV the indexer is complete up to (never the reflector's RV
 *   while a Replace is still being popped), and synced only while the cache holds a whole list of
 *   what the spec selects.
 * - An object the cache cannot hold is skipped and counted (admission.ts), never a failed batch.
 * - A relist whose staged copy would not fit the object's storage is refused (stage-room.ts): its
 *   lastError says so (reason "Storage"), it backs off and tries again, the cache stays as it was.
 */
import type { Clock, Random } from "../clock.ts";
import type { ListerWatcher } from "../kube/client.ts";
import type { KubeObject, WatchEvent } from "../kube/types.ts";
import { type Db, migrate } from "../sql.ts";
import { DELTA_FIFO_MIGRATIONS, DeltaFIFO } from "./delta-fifo.ts";
import { EVENT_LOG_MIGRATIONS, EventLog } from "./event-log.ts";
import { INDEXER_MIGRATIONS, Indexer } from "./indexer.ts";
import { POP_BATCH, ProcessLoop } from "./process-loop.ts";
import { CACHE_PROGRESS_MIGRATIONS, CacheProgress } from "./cache-progress.ts";
import { INFORMER_MIGRATIONS, InformerState } from "./informer-state.ts";
import { ResourceVersionPositions, type WatchStart } from "./rv-positions.ts";
import { type ReflectorOptions, type ReflectorSink, type ReflectorState, step } from "./reflector.ts";
import { initialMemory, type ReflectorMemory } from "./reflector-memory.ts";
import { makeTransform, type TransformSpec } from "./transform.ts";
import { nextBackoff } from "./backoff.ts";
import { countLogInTx, type InformerMetrics, LOG_COUNTER_MIGRATIONS, logBytes } from "./log-counters.ts";
import type { InformerIdentity } from "../log-identity.ts";
import { countersOf, type ErrorReason } from "./reflector-counters.ts";
import { logStep } from "./reflector-log.ts";
import { logger } from "../log.ts";
import type { StorageVerdict } from "./storage-ceiling.ts";
import { InformerRetention, type RetentionSettings } from "./informer-retention.ts";
import { StageRefused } from "./stage-room.ts";
import type { InformerProgress, WatchStateName } from "./cache-progress.ts";

export type { InformerProgress, WatchStateName };

/** What the informer needs of its spec (config/informer-spec.ts validates the full spec). */
export interface InformerSettings extends RetentionSettings {
  indexers: Record<string, string>;
  transform: TransformSpec;
  reflector: ReflectorOptions;
}

/** What a query reads: the RV the cache is complete up to, and whether it holds the whole list (HasSynced). */
export interface QueryView {
  resourceVersion: string;
  synced: boolean;
}

/** Creates the informer's tables (idempotent; runs on every wake). */
export function migrateInformer(db: Db): void {
  // The indexer first: it takes its objects' bodies from the per-event log before the log moves to segments.
  migrate(db, "indexer", INDEXER_MIGRATIONS);
  migrate(db, "event_log", EVENT_LOG_MIGRATIONS);
  migrate(db, "delta_fifo", DELTA_FIFO_MIGRATIONS);
  migrate(db, "informer", INFORMER_MIGRATIONS);
  migrate(db, "cache_progress", CACHE_PROGRESS_MIGRATIONS);
  migrate(db, "informer_metrics", LOG_COUNTER_MIGRATIONS);
}

export class Informer implements ReflectorSink {
  readonly indexer: Indexer;
  readonly log: EventLog;
  readonly fifo: DeltaFIFO;
  readonly cacheProgress: CacheProgress;
  readonly #state: InformerState;
  readonly #positions: ResourceVersionPositions;
  readonly #loop: ProcessLoop;
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #settings: InformerSettings;
  readonly #retention: InformerRetention;
  /** Whom log lines name (src/log.ts); nobody for an informer built without one (tests). */
  readonly #identity: InformerIdentity | undefined;

  /**
   * @param onAppended called after a transaction that appended events, with the log's new tail
   *   (the informer object nudges its subscriptions with it).
   * @param identity whom log lines name.
   */
  constructor(
    db: Db,
    settings: InformerSettings,
    clock: Clock,
    random: Random,
    onAppended?: (tail: number) => void,
    identity?: InformerIdentity,
  ) {
    this.#db = db;
    this.#identity = identity;
    this.#clock = clock;
    this.#random = random;
    this.#settings = settings;
    this.#state = new InformerState(db);
    this.indexer = new Indexer(db, settings.indexers);
    this.log = new EventLog(db);
    this.fifo = new DeltaFIFO(db, this.indexer, makeTransform(settings.transform), (reason) => this.#recordSkipInTx(reason));
    this.cacheProgress = new CacheProgress(db, () => this.log.bounds().tail, () => this.fifo.isEmpty());
    this.#positions = new ResourceVersionPositions(this.log, this.cacheProgress, this.#state);
    this.#retention = new InformerRetention({ db, log: this.log, cacheProgress: this.cacheProgress, clock, settings, identity });
    this.#loop = new ProcessLoop({
      db,
      fifo: this.fifo,
      indexer: this.indexer,
      log: this.log,
      cacheProgress: this.cacheProgress,
      state: this.#state,
      clock,
      referBack: settings.retention.maxEvents,
      ...(onAppended ? { onAppended } : {}),
    });
  }

  /**
   * Runs one slice: drains the queue, then reflector steps while they are due, until a list
   * completes, a watch session ends, or `deadline`. Returns when the next slice is due.
   */
  async tick(lw: ListerWatcher, deadline: number, signal?: AbortSignal): Promise<number> {
    try {
      return await this.#slice(lw, deadline, signal);
    } catch (error) {
      // A bug or a storage failure, not an API answer (those are the reflector's): record it and
      // back off as the reflector does, so a failure that recurs cannot become a hot loop.
      if (signal?.aborted) throw error;
      const current = this.#state.load();
      const { waitMs, state: backoff } = nextBackoff(current.memory.backoff, this.#clock.now(), this.#random);
      const refused = error instanceof StageRefused;
      const lastError = refused ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
      const lastErrorReason = refused ? ("Storage" as const) : ("Internal" as const);
      const memory = { ...current.memory, lastError, lastErrorReason, lastErrorAt: this.#clock.now(), backoff };
      this.#state.save({ state: current.state, memory, wakeAt: this.#clock.now() + waitMs });
      if (!refused) logger.error("informer loop failed", { ...this.#identity, error: lastError, retryInMs: waitMs });
      throw error;
    }
  }

  async #slice(lw: ListerWatcher, deadline: number, signal?: AbortSignal): Promise<number> {
    for (;;) {
      if (!(await this.processQueue(deadline))) return this.#clock.now();
      this.compactLog();
      const current = this.#state.load();
      const now = this.#clock.now();
      if (current.wakeAt > now) return current.wakeAt;
      if (now >= deadline || signal?.aborted) return now;
      const result = await step(current.state, current.memory, {
        lw,
        sink: this,
        clock: this.#clock,
        random: this.#random,
        options: this.#settings.reflector,
        deadline,
        ...(signal ? { signal } : {}),
      });
      // Stopped for a reconfiguration or deletion: keep the last persisted position (e.g. mid-list)
      // rather than the aborted step's error.
      if (signal?.aborted) return this.#clock.now();
      this.#state.save(result);
      if (this.#identity) logStep(this.#identity, current, result);
      const sliceDone =
        current.state.kind === "watching" || (current.state.kind === "listing" && result.state.kind === "watching");
      if (sliceDone) {
        await this.processQueue(deadline);
        return result.wakeAt;
      }
    }
  }

  /** Pops the queue into the indexer and the log until it is empty (true) or `deadline` passes (process-loop.ts). */
  processQueue(deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    return this.#loop.drain(deadline);
  }

  /** Applies the log's retention, a bounded amount per transaction (informer-retention.ts). */
  compactLog(): void {
    this.#retention.compact();
  }

  /** The database's size against its ceiling, and the retention that applies (storage-ceiling.ts). */
  storage(): StorageVerdict {
    return this.#retention.storage();
  }

  /** A `/k8s` watch (or a relay for one) reads the events after `after`: a shrink holds for it (log-readers.ts). */
  noteWatchRead(after: number): void {
    this.#settings.storage?.readers?.noteWatchRead(after, this.#clock.now());
  }

  /** Where a watch from `resourceVersion` starts in the log, or expired (rv-positions.ts). */
  positionOf(resourceVersion: string): WatchStart {
    return this.#positions.positionOf(resourceVersion);
  }

  /**
   * The end of the next whole transaction runs after log position `after`: a mark, so every event
   * up to it was applied and the cache was complete there. The last mark within `span` events,
   * else the first one after `after` (one run longer than `span`); undefined while the events after
   * `after` (a Replace still being popped) are not complete. Within such a run the log is not in
   * resourceVersion order (the DeltaFIFO pops key by key, a Replace in key order), so a watch sorts
   * a whole run before it delivers any of it (k8s/watch-hub.ts).
   */
  boundaryAfter(after: number, span: number): number | undefined {
    return this.cacheProgress.boundaryAfter(after, span);
  }

  /** Whether `resourceVersion` beyond `newest` was handed out by an API server the cluster left (rv-positions.ts). */
  fromEarlierServer(resourceVersion: string, newest = this.queryView().resourceVersion): boolean {
    return this.#positions.fromEarlierServer(resourceVersion, newest);
  }

  // --- ReflectorSink -------------------------------------------------------------------------

  lastSyncResourceVersion(): string {
    return this.cacheProgress.lastSyncResourceVersion();
  }

  hasCachedObjects(): boolean {
    return !this.indexer.isEmpty() || !this.fifo.isEmpty();
  }

  beginList(): void {
    this.#db.transaction(() => this.fifo.beginReplaceInTx({ allowDirect: true }));
    // A relist over a cache stages a copy of it: refused when it could not fit (stage-room.ts).
    if (!this.fifo.isDirectReplace()) this.#refuseStagingIf(this.#retention.stageRefusal(true));
  }

  stage(objects: KubeObject[]): void {
    if (!this.fifo.isDirectReplace()) this.#refuseStagingIf(this.#retention.stageRefusal(false));
    this.#db.transaction(() => {
      if (!this.fifo.isDirectReplace()) return this.fifo.stageInTx(objects, { keepBodies: this.#state.retransforming() });
      // The initial list: queue and pop the page at once, writing each body once.
      const { objectDelta } = this.fifo.bufferedInTx(() => {
        this.fifo.replaceDirectInTx(objects);
        return this.#loop.popInTx(Number.POSITIVE_INFINITY);
      });
      this.cacheProgress.addObjectsInTx(objectDelta);
    });
    this.#loop.announce();
  }

  commitList(resourceVersion: string, next: { state: ReflectorState; memory: ReflectorMemory }): void {
    this.#db.transaction(() => {
      this.fifo.commitReplaceInTx(resourceVersion);
      this.cacheProgress.advanceInTx({ lastSyncRv: resourceVersion, objectDelta: 0 });
      this.#state.retransformCommittedInTx();
      this.#state.saveInTx({ ...next, wakeAt: this.#clock.now() });
    });
    this.#loop.announce();
  }

  applyWatch(events: WatchEvent[], resourceVersion: string): void {
    // One transaction: the chunk's deltas and its RV (invariant 1), then their pops (invariant 2).
    // The FIFO keeps the deltas in memory meanwhile, so bodies popped at once are never stored twice.
    // An older backlog (rare while watching) is popped up to a bound here and drained by `tick`.
    this.#db.transaction(() => {
      // Its events alone follow the tail found here only if nothing older was queued (a Replace's
      // backlog is popped with them otherwise, and a relist's events must start a run of their own).
      const watchFrom = this.fifo.isEmpty() ? this.log.bounds().tail : undefined;
      const { objectDelta, inferredDeleteAt } = this.fifo.bufferedInTx(() => {
        for (const event of events) {
          if (event.type === "ADDED") this.fifo.addInTx(event.object);
          else if (event.type === "MODIFIED") this.fifo.updateInTx(event.object);
          else if (event.type === "DELETED") this.fifo.deleteInTx(event.object);
        }
        return this.#loop.popInTx(events.length + POP_BATCH);
      });
      this.cacheProgress.advanceInTx({
        lastSyncRv: resourceVersion,
        objectDelta,
        ...(watchFrom !== undefined ? { watchFrom } : {}),
        ...(inferredDeleteAt !== undefined ? { inferredDeleteAt } : {}),
      });
    });
    this.#loop.announce();
  }

  watchOpened(memory: ReflectorMemory): void {
    this.#state.saveMemory(memory);
  }

  // --- lifecycle and status -------------------------------------------------------------------

  /**
   * Forgets the reflector's position so the next tick relists from scratch. Used when what is
   * listed changed (resource, namespace, selectors): the relist's Replace turns the difference
   * into events — objects no longer selected are deleted (finalStateUnknown), new ones added.
   * `serverMoved`: the cluster is now served by another API server, whose resourceVersions do not
   * compare with the old one's (rv-positions.ts).
   */
  restart(options: { transformChanged?: boolean; serverMoved?: boolean } = {}): void {
    // Until the relist is applied the cache holds what the old spec selected: not synced, no RV.
    this.#db.transaction(() => {
      if (options.serverMoved === true) this.#positions.forgetServerInTx();
      // The operators' counters go on (Prometheus counters); a relist over a synced cache is counted.
      const counters = countersOf(this.#state.load().memory);
      if (this.lastSyncResourceVersion() !== "") counters.relists = { ...counters.relists, config: counters.relists.config + 1 };
      this.#state.restartInTx({ ...initialMemory, counters }, options.transformChanged === true);
      this.fifo.resetSyncedInTx();
    });
  }

  /** What a query reads (X-Resource-Version, X-Synced): never ahead of what the indexer holds. */
  queryView(): QueryView {
    return { resourceVersion: this.cacheProgress.cacheResourceVersion(), synced: this.fifo.hasSynced() };
  }

  /**
   * Where a list that starts now reads (review F18): the last mark, when a committed Replace is
   * being popped after it (its half-applied state is no snapshot); undefined while the cache is
   * complete at the tail, or nothing is marked yet.
   */
  snapshotPosition(): number | undefined {
    if (this.fifo.isEmpty()) return undefined;
    return this.cacheProgress.lastMark();
  }

  /** The reflector's last error and its kind, or null after a success (what `/k8s` passes on, k8s/cache-readiness.ts). */
  lastFailure(): { message: string; reason: ErrorReason } | null {
    const { memory } = this.#state.load();
    return memory.lastError === null ? null : { message: memory.lastError, reason: memory.lastErrorReason ?? "Internal" };
  }

  #refuseStagingIf(refusal: StageRefused | undefined): void {
    if (refusal === undefined) return;
    logger.warn("relist refused: no room to stage it", { ...this.#identity, reason: refusal.message });
    throw refusal;
  }

  #recordSkipInTx(reason: string): void {
    logger.warn("object skipped", { ...this.#identity, reason });
    this.#state.recordSkipInTx(reason);
  }

  /** Records a failure outside the reflector (e.g. no API server configured) and retries at `retryAt`. */
  recordFailure(message: string, retryAt: number): void {
    const current = this.#state.load();
    const memory = { ...current.memory, lastError: message, lastErrorReason: "Config" as const, lastErrorAt: this.#clock.now() };
    this.#state.save({ ...current, memory, wakeAt: retryAt });
    if (current.memory.lastError !== message) logger.error("informer cannot run", { ...this.#identity, cause: "config", error: message });
  }

  /** Wakes the loop now (e.g. after a configuration change), keeping its state. */
  wakeNow(): void {
    const current = this.#state.load();
    this.#state.save({ ...current, wakeAt: 0 });
  }

  /** Rebuilds every index entry (the configured indexers changed), one transaction per batch. */
  rebuildIndexes(): void {
    let after = this.#db.transaction(() => this.indexer.rebuildInTx(undefined, POP_BATCH));
    while (after !== undefined) {
      const from = after;
      after = this.#db.transaction(() => this.indexer.rebuildInTx(from, POP_BATCH));
    }
  }

  /**
   * What /metrics and the status page read (src/metrics): status, the reflector's counters and the
   * log's counts, brought up to date first (log-counters.ts: a count per read, nothing per batch).
   */
  metrics(): InformerMetrics {
    const now = this.#clock.now();
    const counts = this.#db.transaction(() => countLogInTx(this.#db, this.log, now));
    const { memory } = this.#state.load();
    const progress = this.progress();
    return {
      progress,
      counters: countersOf(memory),
      lastErrorReason: memory.lastError === null ? null : (memory.lastErrorReason ?? "Internal"),
      lastErrorAt: memory.lastError === null ? null : (memory.lastErrorAt ?? null),
      ...counts,
      lastEventAt: this.log.lastEventAt(),
      logBytes: logBytes(this.#db),
      storage: this.storage(),
      at: now,
    };
  }

  progress(): InformerProgress {
    const { state, memory, wakeAt } = this.#state.load();
    const now = this.#clock.now();
    const stateName: WatchStateName = wakeAt > now && memory.lastError !== null ? "backoff" : state.kind;
    const skipped = this.#state.skipped();
    return {
      synced: this.fifo.hasSynced(),
      lastSyncResourceVersion: this.lastSyncResourceVersion(),
      cacheResourceVersion: this.queryView().resourceVersion,
      skippedObjects: skipped.count,
      lastSkipped: skipped.last,
      objects: this.cacheProgress.objectCount(),
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
}
