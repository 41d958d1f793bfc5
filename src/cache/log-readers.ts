/**
 * Who still reads an informer's event log, for the storage ceiling (storage-ceiling.ts): a shrink
 * below holdLimitBytes never moves the head past them, and past it names them (review N5).
 *
 * Guarantees:
 * - Subscriptions: the oldest position a subscription last read from, as the informer's list of
 *   subscriptions stores it (delivery/subscriber-list.ts: durable, so an eviction forgets none).
 * - `/k8s` watchers (the object's own hub and its relays, which read through it): the oldest
 *   position read from within the last WATCH_READ_WINDOW_MS, in memory, by the minute. A watcher's
 *   stream does not outlive the object, and a relay reads again within a poll of its waking.
 * - Noting a read costs a map update; nothing is written per read.
 */
import type { LogReader } from "./storage-ceiling.ts";

/** How long a /k8s watch read holds the log: a client-go reflector's watch lasts at most 10 minutes. */
export const WATCH_READ_WINDOW_MS = 10 * 60_000;
const MINUTE_MS = 60_000;
/** The name a status gives the /k8s watchers held for (or cut past). */
export const WATCHERS_READER = "/k8s watchers";

export class LogReaders {
  readonly #oldestSubscription: () => LogReader | undefined;
  /** The oldest `after` a watch read from, by the minute it read. */
  readonly #watchReads = new Map<number, number>();

  /** `oldestSubscription`: the subscription whose last read is the oldest (delivery/subscriber-list.ts). */
  constructor(oldestSubscription: () => LogReader | undefined) {
    this.#oldestSubscription = oldestSubscription;
  }

  /** A /k8s watch (or a relay for one) read the events after `after`. */
  noteWatchRead(after: number, now: number): void {
    const minute = Math.floor(now / MINUTE_MS);
    const known = this.#watchReads.get(minute);
    if (known === undefined) this.#forget(now); // a new minute: the map keeps the window's minutes only
    if (known === undefined || after < known) this.#watchReads.set(minute, after);
  }

  /** The oldest subscription and the oldest recent watch read, as storageVerdict weighs them. */
  readers(now: number): LogReader[] {
    this.#forget(now);
    const reads = [...this.#watchReads.values()];
    const watchers = reads.length === 0 ? undefined : Math.min(...reads);
    const subscription = this.#oldestSubscription();
    return [...(subscription ? [subscription] : []), ...(watchers === undefined ? [] : [{ name: WATCHERS_READER, after: watchers }])];
  }

  /** Drops the minutes before the window. */
  #forget(now: number): void {
    const since = Math.floor((now - WATCH_READ_WINDOW_MS) / MINUTE_MS);
    for (const minute of this.#watchReads.keys()) if (minute < since) this.#watchReads.delete(minute);
  }
}
