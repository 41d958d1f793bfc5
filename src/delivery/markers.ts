/**
 * Replay and resync as log markers (DESIGN "Resync and replay as log markers"): a replay sends
 * every cached object as an `add` with `initialList`, a resync as a `sync`, both anchored at a log
 * position, and a replay then sweeps what the receiver holds that the cache no longer has.
 *
 * Guarantees:
 * - Invariant 3: events go out in log order, one batch in flight; a replay or resync is a marker
 *   at log position P, expanded only after every event up to P went out, from the objects whose
 *   last change is at or before P. An object changed after P is skipped there: its own newer event
 *   follows. So no key ever goes back to an older state.
 * - A cursor that fell behind the log's retention is never a silent gap: the subscription is marked
 *   expired and replays the cache (`add` with `initialList`) from the log's current end.
 * - A subscription created with `replayExisting` starts with a replay marker at the log's end.
 * - A replay that outlives the log's retention (its anchor's successors are gone when it ends) is
 *   not restarted from scratch: the next pass, anchored at the log's new end, sends only the
 *   objects this replay has not sent in their current state, so each pass costs what changed
 *   during the last one (#7.15; docs/architecture.md "Expiry").
 * - A finished replay is the fresh start an expired subscription was waiting for: it clears
 *   `expired` with the write that ends it.
 */
import { splitKey } from "../cache/keys.ts";
import type { Candidate, SnapshotPage } from "./feed.ts";
import { FEED_PAGE } from "./feed.ts";
import type { DeliveredKey } from "./held-keys.ts";
import { WINDOW_DELIVERIES } from "./outbox-window.ts";
import type { Marker, Position } from "./position.ts";
import type { SubscriptionRecord } from "./subscription-row.ts";
import type { SubscriptionSpec } from "./subscription-spec.ts";
import type { SubscriptionStore } from "./subscription-store.ts";

/** A page of a marker: the candidates it yields, or only a move of the position. */
export type MarkerPage = { kind: "items"; items: Candidate[] } | { kind: "move"; to: Position };

/** When the next resync is due (null: the spec's period is 0, never). */
export const nextResync = (now: number, spec: SubscriptionSpec) => (spec.resyncPeriodSeconds > 0 ? now + spec.resyncPeriodSeconds * 1000 : null);

/** Where a new subscription starts: the log's tail, after a replay of the cache if the spec asks for it. */
export function initialPosition(tail: number, spec: SubscriptionSpec): Position {
  return { cursor: tail, marker: spec.replayExisting ? { kind: "replay", at: tail, after: null, gen: 1 } : null };
}

/** A due resync: a marker at the log's known tail, and the next one scheduled; inside a transaction. */
export function startResyncInTx(store: SubscriptionStore, record: SubscriptionRecord, knownTail: number, now: number): void {
  const at = Math.max(knownTail, record.position.cursor);
  // A period of 0 never resyncs (a row scheduled before its period was set to 0 stops here).
  // `replayed` stays: the anchor of a replay just finished must still be checked (#7.15).
  if (record.spec.resyncPeriodSeconds > 0) store.row.setPosition({ ...record.position, marker: { kind: "sync", at, after: null } });
  store.row.setNextResync(nextResync(now, record.spec));
}

/**
 * The log no longer holds the events after the cursor: marks the subscription expired and starts a
 * replay at `tail`; inside a transaction. `progressed`: this instance moved the position itself.
 */
export function expireInTx(store: SubscriptionStore, record: SubscriptionRecord, tail: number, progressed: boolean): void {
  // At the anchor of a replay that just ended, the replay itself outlived retention: go on
  // with its next pass (same `since`), which sends only what this replay has not sent as it is.
  const replayed = record.position.replayed;
  store.row.setExpired(true);
  // Expiring from the position it woke at, an instance does not know what a predecessor sent
  // from a window kept in memory (numbered from the stored next sequence, and now gone from
  // the log): it skips those numbers, so that none is given to two events.
  if (!progressed) store.row.takeSequencesInTx(record.nextSequence + WINDOW_DELIVERIES - 1);
  const gen = store.row.nextGenerationInTx();
  const pass = replayed ? { since: replayed.since, pass: replayed.pass + 1 } : {};
  store.row.setPosition({ cursor: tail, marker: { kind: "replay", at: tail, after: null, gen, ...pass } });
  store.row.setLastError(
    replayed
      ? `the replay took longer than the event log's retention (the events after its position ${record.position.cursor} are gone): ` +
          `pass ${replayed.pass + 1} replays from position ${tail}, sending only objects changed since this replay sent them`
      : `fell behind the event log's retention at position ${record.position.cursor}: replaying the cache`,
  );
}

/** Moves the position; inside a transaction. */
export function advanceInTx(store: SubscriptionStore, from: Position, to: Position): void {
  store.row.setPosition(to);
  // A finished replay is the fresh start an expired subscription was waiting for.
  if (from.marker?.kind === "replay" && to.marker === null) store.row.setExpired(false);
}

/** A page of a marker's expansion: the cached objects last changed at or before the marker (`page`). */
export function expand(store: SubscriptionStore, cursor: number, marker: Marker, page: SnapshotPage): MarkerPage {
  const replay = marker.kind === "replay";
  // A later pass of a replay skips what an earlier pass sent and the receiver still holds as it is.
  const sent = marker.since === undefined ? new Set<string>() : store.heldSince(page.objects, marker.since);
  // Keys changed after the marker are skipped (their events follow), but the receiver keeps them.
  const touched = [...page.skipped, ...sent];
  if (replay && touched.length > 0) store.transaction(() => store.touchKeys(touched, marker.gen ?? 0));
  const next: Marker | null = !page.done ? { ...marker, after: page.last } : replay ? { ...marker, after: null, sweep: true } : null;
  const objects = page.objects.filter((object) => !sent.has(object.key));
  if (objects.length === 0) return { kind: "move", to: { cursor, marker: next } };
  const items = objects.map(
    (object, i): Candidate => ({
      type: replay ? "add" : "sync",
      key: object.key,
      uid: object.uid,
      resourceVersion: object.resourceVersion,
      object: object.body,
      oldObject: replay ? null : object.body,
      initialList: replay,
      finalStateUnknown: false,
      advance: { cursor, marker: i === objects.length - 1 ? next : { ...marker, after: object.key } },
    }),
  );
  return { kind: "items", items };
}

/**
 * A page of a replay's sweep: keys the receiver was sent before the replay that the replay did
 * not touch no longer exist (they were deleted while the log that said so expired). Each goes out
 * as a delete with `finalStateUnknown`, client-go's answer to a delete it could not observe; its
 * `object` holds the identity only, the last state having gone with the log.
 */
export function sweep(store: SubscriptionStore, cursor: number, marker: Marker): MarkerPage {
  const stale = store.staleKeys(marker.gen ?? 0, marker.after, FEED_PAGE);
  // The replay is over; its anchor is remembered until the log after it is read (see expireInTx).
  const end: Position = { cursor, marker: null, replayed: { since: marker.since ?? marker.gen ?? 0, pass: marker.pass ?? 1 } };
  if (stale.length === 0) return { kind: "move", to: end };
  const done = stale.length < FEED_PAGE;
  const items = stale.map(
    (held, i): Candidate => ({
      type: "delete",
      key: held.key,
      uid: held.uid,
      resourceVersion: held.resourceVersion,
      object: identityOnly(held),
      oldObject: null,
      initialList: false,
      finalStateUnknown: true,
      inferred: true,
      advance: done && i === stale.length - 1 ? end : { cursor, marker: { ...marker, after: held.key } },
    }),
  );
  return { kind: "items", items };
}

/** The object of an inferred delete: what the subscription still knows of it. */
function identityOnly(held: DeliveredKey): string {
  const { namespace, name } = splitKey(held.key);
  return JSON.stringify({ metadata: { name, ...(namespace ? { namespace } : {}), uid: held.uid, resourceVersion: held.resourceVersion } });
}
