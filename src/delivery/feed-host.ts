/**
 * The informer's side of its subscriptions' feed (feed.ts is the subscription's side): the log reads
 * and snapshot pages it answers over RPC, the list of subscriptions that follow it, and the nudges
 * that tell them the log grew. InformerObject routes its feed RPCs here and tells it each new tail.
 *
 * Guarantees:
 * - A read answers at most MAX_FEED_ITEMS events or objects and about MAX_FEED_BYTES of bodies (at
 *   least one item), so an RPC answer stays small; the log stops decoding where the answer is full.
 * - A snapshot page is split at the marker's position `at` (feed.ts SnapshotPage).
 * - Nudges are coalesced, one round in flight (nudger.ts). Only subscriptions that read up to the
 *   tail are nudged: a busy one reads on anyway, a failing one waits for its retry. Which ones wait
 *   is memory only: after a start, or after `nudgeAll` (the cron's tick), every subscription is.
 * - A round spends the running slice's subrequest budget, one nudge each (nudger.ts withinBudget);
 *   at its margin, or at the platform's limit, the rest are owed: `owes` tells the slice to end and
 *   re-arm at once, and the next slice's `sendOwed` nudges them. A failed nudge is only logged: a
 *   subscription not nudged finds the events at its next poll.
 */
import type { EventLog, ReadResult } from "../cache/event-log.ts";
import type { Indexer } from "../cache/indexer.ts";
import type { Clock } from "../clock.ts";
import { errorText, type LogFields, logger } from "../log.ts";
import { isSubrequestLimit, type SubrequestBudget } from "../net/subrequest-budget.ts";
import type { SnapshotPage } from "./feed.ts";
import { Nudger, withinBudget } from "./nudger.ts";
import type { SubscriberCursor, SubscriberList } from "./subscriber-list.ts";

/** Most log events or objects one feed read returns, and roughly how many bytes of bodies. */
const MAX_FEED_ITEMS = 1_000;
const MAX_FEED_BYTES = 4 * 1024 * 1024;

export interface FeedHostDeps {
  /** The object's list of subscriptions (made anew as its schema is). */
  subscribers: () => SubscriberList;
  /** Nudges one subscription's object (an RPC: one subrequest). */
  send: (subscription: string, tail: number) => Promise<void>;
  /** The running slice's budget, or a fresh one for a round outside a slice (the cron's tick). */
  budget: () => Pick<SubrequestBudget, "take" | "end">;
  /** Whom a failed nudge's log line is about. */
  who: () => LogFields | undefined;
  clock: Clock;
}

export class FeedHost {
  readonly #deps: FeedHostDeps;
  /** Tells subscriptions that the log grew, one round at a time. */
  readonly #nudger = new Nudger((tail) => this.#round(tail));
  /**
   * Subscriptions that read up to the log's tail and wait for a nudge; only they are nudged (a busy
   * one reads on anyway, a failing one waits for its retry). Memory only: `undefined` — after a
   * start, or on the cron's tick — means every subscription.
   */
  #waiting: Set<string> | undefined;
  /** The tail of a nudge round the budget cut short: the next slice sends it to those left (memory only: they poll). */
  #owed: number | undefined;

  constructor(deps: FeedHostDeps) {
    this.#deps = deps;
  }

  /**
   * Events after `after` (the feed subscriptions read), at most `limit` and about MAX_FEED_BYTES.
   * A `subscriber` that got everything up to the tail is nudged when more arrives.
   */
  readLog(log: EventLog, after: number, limit: number, subscriber?: string): ReadResult {
    // Read no more than the answer may hold: the log stops decoding there (then trimmed exactly).
    const read = log.read(after, clampLimit(limit), MAX_FEED_BYTES);
    const events = withinBytes(read.events, (e) => (e.object?.length ?? 0) + (e.oldObject?.length ?? 0));
    const caughtUp = (events.at(-1)?.seq ?? after) >= read.bounds.tail;
    // Where it reads from is what a storage ceiling's shrink holds for (subscriber-list.ts).
    if (subscriber !== undefined) this.#deps.subscribers().noteRead(subscriber, after);
    if (subscriber !== undefined && caughtUp) this.#waiting?.add(subscriber);
    return { ...read, events };
  }

  /** A page of the cache in key order, split at log position `at` (a marker's expansion, SnapshotPage). */
  snapshot(indexer: Indexer, at: number, after: string | null, limit: number, namespace?: string): SnapshotPage {
    const max = clampLimit(limit);
    const rows = indexer.list({ after: after ?? "", limit: max, ...(namespace === undefined ? {} : { namespace }) });
    const page = withinBytes(rows, (o) => (o.seq <= at ? o.body.length : 0));
    return {
      objects: page.filter((o) => o.seq <= at).map((o) => ({ key: o.key, uid: o.uid, resourceVersion: o.resourceVersion, body: o.body })),
      skipped: page.filter((o) => o.seq > at).map((o) => o.key),
      last: page.at(-1)?.key ?? after,
      done: rows.length < max && page.length === rows.length,
    };
  }

  /** Registers a subscription; answers the log position it starts from. */
  addSubscriber(log: EventLog, id: string): number {
    this.#deps.subscribers().add(id, this.#deps.clock.now(), log.bounds().tail);
    return log.bounds().tail;
  }

  /**
   * A page of subscriptions in creation order after `after`, with the log's tail, so a list of
   * subscriptions reads the tail once and pages by count (src/http/subscriptions.ts, #7.18).
   */
  subscriberPage(log: EventLog, after: SubscriberCursor | null, limit: number): { items: SubscriberCursor[]; more: boolean; tail: number } {
    return { ...this.#deps.subscribers().page(after, limit), tail: log.bounds().tail };
  }

  /** The log grew to `tail`: nudges the waiting subscriptions (coalesced, one round in flight). */
  nudge(tail: number): void {
    this.#nudger.nudge(tail);
  }

  /** Nudges every subscription, waiting or not: a nudge re-arms a subscription whose alarm is missing (invariant 7). */
  nudgeAll(tail: number): void {
    this.#waiting = undefined;
    this.#nudger.nudge(tail);
  }

  /** A slice starts: sends the round the last one owed, within the new slice's budget. */
  sendOwed(): void {
    if (this.#owed !== undefined) this.#nudger.nudge(this.#owed);
    this.#owed = undefined;
  }

  /** Whether a round was cut short by the budget: the slice should end and re-arm at once. */
  get owes(): boolean {
    return this.#owed !== undefined;
  }

  async #round(tail: number): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = new Set();
    const ids = this.#deps.subscribers().ids().filter((id) => waiting === undefined || waiting.has(id));
    // Outside a slice (the cron's ensureRunning) the round spends its own invocation's budget.
    const budget = this.#deps.budget();
    const owe = (id: string) => {
      this.#waiting?.add(id);
      this.#owed = Math.max(this.#owed ?? 0, tail);
    };
    const { now, later } = withinBudget(ids, budget);
    later.forEach(owe);
    await Promise.all(
      now.map((id) =>
        this.#deps.send(id, tail).catch((error: unknown) => {
          // The platform's limit, not the subscription's failure: owed to the next slice, not logged.
          if (isSubrequestLimit(error)) {
            budget.end();
            owe(id);
            return;
          }
          logger.warn("nudging a subscription failed", { ...this.#deps.who(), subscription: id, error: errorText(error) });
        }),
      ),
    );
  }
}

const clampLimit = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_FEED_ITEMS);

/** The longest prefix of `items` within MAX_FEED_BYTES (at least one item), so an RPC answer stays small. */
function withinBytes<T>(items: T[], size: (item: T) => number): T[] {
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += size(items[i]!);
    if (total > MAX_FEED_BYTES && i > 0) return items.slice(0, i);
  }
  return items;
}
