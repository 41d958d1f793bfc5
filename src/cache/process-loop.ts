/**
 * The informer's process loop (client-go controller.processLoop + sharedIndexInformer.HandleDeltas):
 * pops the DeltaFIFO into the indexer and the event log (process-deltas.ts decides each key), and
 * tells the informer object when the log grew.
 *
 * Guarantees:
 * - Invariant 2: each pop, its indexer updates and its log events are one transaction, at most
 *   POP_BATCH keys, so one transaction's memory and duration stay bounded.
 * - A drain yields to the event loop between transactions, so queries are answered meanwhile; once
 *   the queue is empty it frees a committed Replace's staging (ending a retransform riding on it).
 * - `onAppended` is called after a transaction that grew the log, added a mark or moved the cache's
 *   resourceVersion (an upstream bookmark moves the newest mark's RV at the same position), at most
 *   once per such change, never before the transaction committed.
 */
import { type Clock, yieldToEventLoop } from "../clock.ts";
import type { Db } from "../sql.ts";
import type { CacheProgress } from "./cache-progress.ts";
import type { Delta, DeltaFIFO } from "./delta-fifo.ts";
import type { EventLog } from "./event-log.ts";
import type { Indexer } from "./indexer.ts";
import type { InformerState } from "./informer-state.ts";
import { processDeltasInTx } from "./process-deltas.ts";

/** Keys popped per transaction: bounds the memory and duration of one processing transaction. */
export const POP_BATCH = 500;

export interface ProcessLoopParts {
  db: Db;
  fifo: DeltaFIFO;
  indexer: Indexer;
  log: EventLog;
  cacheProgress: CacheProgress;
  state: InformerState;
  clock: Clock;
  /** How far back an event may refer for the state it replaced (the log's maxEvents). */
  referBack: number;
  /** Called after a transaction that appended events, with the log's new tail. */
  onAppended?: (tail: number) => void;
}

export class ProcessLoop {
  readonly #db: Db;
  readonly #fifo: DeltaFIFO;
  readonly #indexer: Indexer;
  readonly #log: EventLog;
  readonly #cacheProgress: CacheProgress;
  readonly #state: InformerState;
  readonly #clock: Clock;
  readonly #referBack: number;
  readonly #onAppended: ((tail: number) => void) | undefined;
  /** The log's tail, its last mark and the cache's RV as last announced through `onAppended`. */
  #announced = 0;
  #announcedMark = 0;
  #announcedRv = "";

  constructor(parts: ProcessLoopParts) {
    this.#db = parts.db;
    this.#fifo = parts.fifo;
    this.#indexer = parts.indexer;
    this.#log = parts.log;
    this.#cacheProgress = parts.cacheProgress;
    this.#state = parts.state;
    this.#clock = parts.clock;
    this.#referBack = parts.referBack;
    this.#onAppended = parts.onAppended;
  }

  /**
   * Pops and processes queued keys until the queue is empty (true) or `deadline` passes (false),
   * one transaction per POP_BATCH keys, yielding between them so the object keeps answering
   * queries while a large Replace is processed.
   */
  async drain(deadline: number): Promise<boolean> {
    for (let first = true; ; first = false) {
      if (!first) await yieldToEventLoop();
      const popped = this.#db.transaction(() => {
        const { popped, objectDelta, inferredDeleteAt } = this.popInTx(POP_BATCH);
        // The pop that empties the queue marks the tail in its own transaction: until the mark the
        // cache's RV is the one before a Replace, and a list would show the relist's state under it
        // (review F18: one turn of the event loop, before the next round marked it).
        if (popped > 0 && this.#fifo.isEmpty()) this.#cacheProgress.advanceInTx({ objectDelta, ...(inferredDeleteAt === undefined ? {} : { inferredDeleteAt }) });
        else this.#cacheProgress.addObjectsInTx(objectDelta);
        return popped;
      });
      this.announce();
      if (popped === 0) {
        this.#db.transaction(() => {
          if (this.#fifo.releaseStagingInTx()) this.#state.retransformDoneInTx();
          this.#cacheProgress.advanceInTx({ objectDelta: 0 });
        });
        this.announce();
        return true;
      }
      if (this.#clock.now() >= deadline) return this.#fifo.isEmpty();
    }
  }

  /**
   * Pops up to `max` keys (in POP_BATCH batches) into the indexer and the log, inside the caller's
   * transaction; returns how many, the objects added minus those deleted, and, when the last event
   * logged is a delete a relist inferred (a tombstone), its resourceVersion (cache-progress.ts marks).
   */
  popInTx(max: number): { popped: number; objectDelta: number; inferredDeleteAt?: string } {
    const deps = { indexer: this.#indexer, log: this.#log, clock: this.#clock, compareBodies: this.#state.retransforming(), referBack: this.#referBack };
    let popped = 0;
    let objectDelta = 0;
    let last: Delta | undefined;
    while (popped < max) {
      const keys = this.#fifo.popInTx(Math.min(POP_BATCH, max - popped), (batch) => {
        objectDelta += processDeltasInTx(batch, deps);
        // Every delta of a Deleted type is logged, in batch order: this one's event is the last.
        last = batch.at(-1)?.deltas.at(-1) ?? last;
      });
      if (keys === 0) break;
      popped += keys;
    }
    return { popped, objectDelta, ...(last?.type === "Deleted" && last.tombstone ? { inferredDeleteAt: last.resourceVersion } : {}) };
  }

  /**
   * Announces a grown log, and a new mark at an unchanged tail too: `/k8s` watchers deliver only
   * up to a mark (boundaryAfter), and a Replace's last pop is marked in a later transaction. And a
   * cache RV moved on at an unchanged mark (an upstream bookmark, review N6): the informer's own
   * hub reads the RV live, but its relays learn it only from a poll this wakes, and a watch-list
   * via a relay at that RV would wait for it (a 504 after 3 s) until the poll's 20 s timeout.
   */
  announce(): void {
    if (!this.#onAppended) return;
    const tail = this.#log.nextSeq() - 1;
    const announced = this.#cacheProgress.announced();
    const mark = announced.mark ?? 0;
    const rv = announced.cacheResourceVersion;
    if (tail <= this.#announced && mark <= this.#announcedMark && rv === this.#announcedRv) return;
    this.#announced = tail;
    this.#announcedMark = mark;
    this.#announcedRv = rv;
    this.#onAppended(tail);
  }
}
