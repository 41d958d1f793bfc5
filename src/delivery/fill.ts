/**
 * Filling the outbox: the next batch, or at `maxBatchSize` 1 the next window of single
 * deliveries, read from the informer's event log up to a pending marker, then from the marker's
 * expansion (markers.ts), filtered, numbered and turned into the texts that will be sent.
 *
 * Guarantees:
 * - Events are taken in order, up to `maxBatchSize` (a window: WINDOW_DELIVERIES) and BATCH_CHARS
 *   (a window: WINDOW_CHARS), at least one; events filtered out only move the position. A batch
 *   ends before a second event of a key it holds: a batch is resent whole after a crash, and must
 *   not take a key back to its older event after its newer one (invariant 10).
 * - A batch is written to the outbox before it is sent. A window of log events is kept in memory
 *   only while it can be rebuilt byte for byte from the stored position (`rebuildable`, and
 *   outbox-window.ts); a spec changed while it was built makes it stored.
 * - A log that expired past the cursor, or restarted below it, starts a replay (markers.ts
 *   `expireInTx`); nothing is skipped silently.
 * - A caught-up subscription sleeps until the next resync, the next store of held progress, or
 *   IDLE_POLL_MS, whichever comes first.
 */
import type { Clock } from "../clock.ts";
import type { LogBounds } from "../cache/event-log.ts";
import { informerObjectName } from "../clusters/cluster.ts";
import { eventId } from "./event-id.ts";
import { type Candidate, type Feed, FEED_PAGE, withTimeout } from "./feed.ts";
import { EventFilter, type Filtered } from "./filter.ts";
import { advanceInTx, expand, expireInTx, sweep } from "./markers.ts";
import { type OutboxWindow, WINDOW_DELIVERIES, WINDOW_MS } from "./outbox-window.ts";
import type { Position } from "./position.ts";
import type { StepResult } from "./step-result.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";
import type { SubscriptionStore } from "./subscription-store.ts";

/** A caught-up subscription still looks at the log this often, in case a nudge was lost. */
export const IDLE_POLL_MS = 60_000;
/** A window's texts stay within one inline row (stored-texts.ts chunks above 512 Ki characters). */
const WINDOW_CHARS = 512 * 1024;
/**
 * A batch's events stop here, whatever `maxBatchSize` allows (at least one event): 100 events of
 * 1–2 MB objects made a body of hundreds of MB, and the stored outbox rebuilt it on every retry, so
 * the memory limit killed each attempt the same way (issue 20; review B5).
 */
export const BATCH_CHARS = 4 * 1024 * 1024;

/** What comes next: candidates (`items[start..]`, with the log's bounds when read from the log), a gap, or a move. */
type Candidates = { kind: "items"; items: Candidate[]; start?: number; log?: LogBounds } | { kind: "expired"; tail: number } | { kind: "move"; to: Position };

const positionKey = (p: Position) => JSON.stringify(p);

export class Filler {
  readonly #store: SubscriptionStore;
  readonly #window: OutboxWindow;
  readonly #clock: Clock;
  readonly #feed: Feed;
  readonly #feedTimeoutMs: number;
  /** The informer's log reached this tail (Subscription.noteTail). */
  readonly #noteTail: (tail: number) => void;
  /** Candidates `items[start..]` already read from the feed, from position `from` (memory only: a cache). */
  #ahead: { from: string; items: Candidate[]; start: number; log?: LogBounds } | undefined;
  #filter: { spec: string; filter: EventFilter } | undefined;

  constructor(deps: { store: SubscriptionStore; window: OutboxWindow; clock: Clock; feed: Feed; feedTimeoutMs: number; noteTail: (tail: number) => void }) {
    this.#store = deps.store;
    this.#window = deps.window;
    this.#clock = deps.clock;
    this.#feed = deps.feed;
    this.#feedTimeoutMs = deps.feedTimeoutMs;
    this.#noteTail = deps.noteTail;
  }

  async fill(record: SubscriptionRecord): Promise<StepResult> {
    const window = this.#window;
    const read = await this.#candidates(record);
    if (read.kind === "expired") {
      window.transaction(record, () => expireInTx(this.#store, record, read.tail, window.progressed));
      return { kind: "progress" };
    }
    if (read.kind === "move") {
      window.transaction(record, () => advanceInTx(this.#store, record.position, read.to));
      return { kind: "progress" };
    }
    const items = read.items;
    const start = read.start ?? 0;
    if (items.length === start) return this.#idle(record);
    const filter = this.#eventFilter(record.spec);
    // One batch of up to maxBatchSize events, or at maxBatchSize 1 a window of single deliveries.
    const windowed = record.spec.maxBatchSize === 1;
    const limit = windowed ? WINDOW_DELIVERIES : record.spec.maxBatchSize;
    const picked: { candidate: Candidate; filtered: Filtered }[] = [];
    const batchKeys = new Set<string>();
    let consumed = start;
    let chars = 0;
    for (let i = start; i < items.length; i++) {
      const candidate = items[i]!;
      if (picked.length === limit) break;
      if (picked.length > 0 && chars + candidateChars(candidate) > (windowed ? WINDOW_CHARS : BATCH_CHARS)) break;
      // An inferred delete is for a key the receiver was sent: only the event types apply.
      const filtered = candidate.inferred ? filter.applyTypes(candidate) : filter.apply(candidate);
      // A batch names each key once: resent whole (a 2xx lost to a crash), one holding a key's two
      // events would take that key back to the older after the newer (invariant 10).
      if (filtered && !windowed && batchKeys.has(candidate.key)) break;
      consumed++;
      if (filtered) {
        picked.push({ candidate, filtered });
        batchKeys.add(candidate.key);
        chars += candidateChars(candidate);
      }
    }
    const advance = items[consumed - 1]!.advance;
    this.#ahead = { from: positionKey(advance), items, start: consumed, ...(read.log ? { log: read.log } : {}) };
    // Log events may be held in memory (see the contract): read again from the stored position after
    // a crash. Not before this instance stores an acknowledgement (held ones are stored first).
    const mayHold = windowed && read.log !== undefined && window.mayKeepInMemory;
    const inMemory = mayHold && rebuildable(this.#store.get()!.position.cursor, read.log!);
    if (picked.length === 0) {
      if (mayHold) window.hold(advance, []);
      else window.transaction(record, () => advanceInTx(this.#store, record.position, advance));
      return { kind: "progress" };
    }
    const events = await Promise.all(
      picked.map(async ({ candidate, filtered }, i) => {
        const id = await eventId({ informer: informerObjectName({ cluster: record.cluster, name: record.informer }), key: candidate.key, uid: candidate.uid, resourceVersion: candidate.resourceVersion, type: filtered.type });
        const sequence = record.nextSequence + i;
        return {
          meta: {
            eventId: id,
            sequence,
            type: filtered.type,
            key: candidate.key,
            uid: candidate.uid,
            resourceVersion: candidate.resourceVersion,
            ...(candidate.at === undefined ? {} : { at: candidate.at }),
          },
          text: eventText(record, id, sequence, candidate, filtered),
        };
      }),
    );
    const first = events[0]!.meta;
    const batched = !windowed;
    const webhookId = batched ? `msg_${record.id}_${first.sequence}` : first.eventId;
    // Each delivery of a window moves to its own event; the last also past the filtered-out ones after it.
    const advances = windowed ? picked.map((p, i) => (i === picked.length - 1 ? advance : p.candidate.advance)) : undefined;
    // Sequence numbers are taken when a delivery leaves the outbox (subscription-row.ts).
    const outbox = { webhookId, events: events.map((e) => e.meta), batched, advance, ...(advances ? { advances } : {}), createdAt: this.#clock.now() };
    const texts = events.map((e) => e.text);
    // In memory, unless the spec changed while the window was built (an update during the awaits):
    // a restart would build it under the new one.
    if (inMemory && this.#store.get()?.spec === record.spec) {
      // A stored outbox still here is done: it goes with the acknowledgements it holds.
      if (window.current && window.durable) window.transaction(record, () => undefined);
      window.set({ outbox, texts, inline: true, acked: 0 }, true, false);
      return { kind: "progress" };
    }
    const written = window.transaction(record, () => this.#store.outbox.putInTx(outbox, texts));
    window.set(written, true);
    return { kind: "progress" };
  }

  #idle(record: SubscriptionRecord): StepResult {
    // Nothing more to send: what is held is stored once WINDOW_MS after the last store, so that
    // events arriving one at a time share a window's bookkeeping; the alarm comes back for it.
    const window = this.#window;
    const now = this.#clock.now();
    if (window.held && now - window.settledAt >= WINDOW_MS) window.transaction(record, () => undefined);
    const poll = now + IDLE_POLL_MS;
    const until = Math.min(poll, record.nextResyncAt ?? poll, window.held ? window.settledAt + WINDOW_MS : poll);
    return { kind: "idle", until };
  }

  async #candidates(record: SubscriptionRecord): Promise<Candidates> {
    const position = record.position;
    if (this.#ahead?.from === positionKey(position) && this.#ahead.items.length > this.#ahead.start) {
      return { kind: "items", items: this.#ahead.items, start: this.#ahead.start, ...(this.#ahead.log ? { log: this.#ahead.log } : {}) };
    }
    this.#ahead = undefined;
    const marker = position.marker;
    if (marker && position.cursor >= marker.at) {
      // A marker's pages read the keys the receiver holds (held-keys.ts): store what is held first.
      this.#window.transaction(record, () => undefined);
      if (marker.sweep) return sweep(this.#store, position.cursor, marker);
      const page = await withTimeout(this.#feed.snapshot(marker.at, marker.after, FEED_PAGE, this.#eventFilter(record.spec).namespace), this.#feedTimeoutMs);
      return expand(this.#store, position.cursor, marker, page);
    }
    const read = await withTimeout(this.#feed.read(position.cursor, FEED_PAGE), this.#feedTimeoutMs);
    this.#noteTail(read.bounds.tail);
    // A log that restarted below our cursor (the informer was recreated) is a gap like expiry.
    if (read.expired || position.cursor > read.bounds.tail) return { kind: "expired", tail: read.bounds.tail };
    const upTo = marker?.at ?? Number.POSITIVE_INFINITY;
    const items = read.events
      .filter((event) => event.seq <= upTo)
      .map((event): Candidate => ({ ...event, advance: { cursor: event.seq, marker } }));
    return { kind: "items", items, log: read.bounds };
  }

  #eventFilter(spec: SubscriptionSpec): EventFilter {
    const key = JSON.stringify([spec.events, spec.namespace, spec.labelSelector, spec.fieldSelector]);
    if (this.#filter?.spec !== key) this.#filter = { spec: key, filter: new EventFilter(spec) };
    return this.#filter.filter;
  }
}

/** The event's JSON text, built around the stored object texts so they are never re-encoded. */
function eventText(informer: { cluster: string; informer: string }, id: string, sequence: number, candidate: Candidate, filtered: Filtered): string {
  const translated = filtered.type !== candidate.type;
  return (
    `{"id":${JSON.stringify(id)},"type":"${filtered.type}","cluster":${JSON.stringify(informer.cluster)},"informer":${JSON.stringify(informer.informer)},` +
    `"key":${JSON.stringify(candidate.key)},"object":${filtered.object}` +
    (filtered.oldObject === null ? "" : `,"oldObject":${filtered.oldObject}`) +
    `,"initialList":${!translated && candidate.initialList},"finalStateUnknown":${!translated && candidate.finalStateUnknown}` +
    `,"resourceVersion":${JSON.stringify(candidate.resourceVersion)},"sequence":${sequence}}`
  );
}

/**
 * A window of log events may be kept in memory only while the stored position is in the newer half
 * of the retained log: rebuilding it after a crash needs the events after that position, and for
 * retention to remove them first, the subscription's object would have to stay down while half of
 * the log turned over (half of `maxEvents` new events, each batch of which nudges it awake, or half
 * of `maxAgeSeconds`). A subscription further behind stores its windows in the outbox.
 */
function rebuildable(stored: number, log: LogBounds): boolean {
  return stored - log.head >= (log.tail - log.head) / 2;
}

/** Roughly the characters an event's text will take. */
const candidateChars = (candidate: Candidate) => (candidate.object?.length ?? 0) + (candidate.oldObject?.length ?? 0) + 300;
