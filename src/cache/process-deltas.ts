/**
 * processDeltas: applies one key's popped deltas to the indexer and appends the resulting events to
 * the log (client-go controller.go `processDeltas`; reference §5.2).
 *
 * Guarantees:
 * - Add vs update is decided by cache membership, never by the delta type: a MODIFIED for an
 *   unknown object is an add, an ADDED for a cached one an update.
 * - Runs inside the pop's transaction and updates the indexer before appending the event, so an
 *   event in the log means the indexer reflects it (DESIGN invariant 2).
 * - A delete is logged even when the key was not cached (as client-go's OnDelete fires); a
 *   tombstone is logged as a delete with `finalStateUnknown` and its last known state, stamped with
 *   the relist's resourceVersion (its delta's: delta-fifo-replace.ts), as is the event. Every event
 *   records the cached state it replaced (`oldBody`): an update's old object, and a delete's for a
 *   list served as of an earlier position (versioned-list.ts). It refers to the event that holds
 *   that state while the log can read it and retention will keep it (`referBack`), and is a copy
 *   (read from the object's row) when the object last changed before that (log-segment.ts).
 * - Sync deltas are logged as `sync` events with the cached state as both old and new.
 * - A popped batch is decided key by key in memory and written with a few multi-row statements
 *   (cached state read in one pass, events and objects written in bulk); the outcome is the same
 *   as applying each delta in turn.
 *
 * Where we differ from client-go, on purpose (DESIGN invariant 5): a Replaced, Added or Updated
 * delta whose resourceVersion equals the cached one changes nothing and logs nothing. client-go
 * turns it into OnUpdate(old, new) with equal RVs after every relist — the flood of no-op updates
 * that is its users' top complaint (reference §6.5). The same rule makes a replayed watch event
 * (the same state delivered twice across a restart) a no-op. Objects without a resourceVersion
 * (some aggregated APIs, reference §6.17) are compared by content instead.
 */
import type { Clock } from "../clock.ts";
import type { KubeObject } from "../kube/types.ts";
import type { Delta, PoppedKey } from "./delta-fifo.ts";
import { UNCHANGED_BODY } from "./delta-fifo-replace.ts";
import type { EventLog, NewLogEvent } from "./event-log.ts";
import type { Indexer, ObjectWrite } from "./indexer.ts";
import type { StateText } from "./log-segment.ts";
import { splitKey } from "./keys.ts";

export interface ProcessDeps {
  indexer: Indexer;
  log: EventLog;
  clock: Clock;
  /**
   * Treat an unchanged resourceVersion with a different body as an update: the transform changed, so
   * the cached bodies were made by the old one (informer.ts Retransform).
   */
  compareBodies?: boolean;
  /**
   * How many of the newest events a replaced state may be referred to in (retention's maxEvents):
   * older ones are copied, so references hold no segment back by more than a window however far
   * retention lags. All the readable ones when absent.
   */
  referBack?: number;
}

/** What the cache holds for a key while its deltas are decided: the body when it is at hand. */
interface Current {
  resourceVersion: string;
  seq: number;
  body?: string;
}

/** Processes a popped batch; returns the objects it added minus those it deleted (CacheProgress counts them). */
export function processDeltasInTx(batch: readonly PoppedKey[], deps: ProcessDeps): number {
  const { indexer, log, clock } = deps;
  const cached: Map<string, Current> = indexer.getMetaMany(batch.map((popped) => popped.key));
  const { head: readable, tail } = log.bounds();
  const head = Math.max(readable, tail + 1 - (deps.referBack ?? Infinity));
  let seq = tail + 1;
  // The states the log no longer holds are copied from the objects' rows (see the contract).
  const copied = indexer.getBodies([...cached].filter(([, state]) => state.seq < head).map(([key]) => key));
  for (const [key, body] of copied) cached.get(key)!.body = body;
  /** The cached state `current`, as an event records it. */
  const stateOf = (current: Current): StateText => (current.seq >= head ? { seq: current.seq } : current.body!);
  const bodyOf = (key: string, current: Current): string | null => current.body ?? indexer.get(key)?.body ?? null;
  const at = clock.now();
  const events: NewLogEvent[] = [];
  const upserts: ObjectWrite[] = [];
  const deletes: string[] = [];
  let added = 0;
  const append = (event: Omit<NewLogEvent, "seq" | "at">): number => {
    events.push({ ...event, seq, at });
    return seq++;
  };

  for (const { key, deltas, isInInitialList } of batch) {
    const { namespace, name } = splitKey(key);
    const initial = cached.get(key);
    let current: Current | undefined = initial;
    let latest: Delta | undefined; // the delta whose state the cache must end with
    for (const delta of deltas) {
      if (delta.type === "Deleted") {
        append({
          type: "delete",
          key,
          uid: delta.uid,
          resourceVersion: delta.resourceVersion,
          body: delta.tombstone ? stampedTombstone(delta) : delta.body,
          oldBody: current === undefined ? null : stateOf(current),
          initialList: false,
          finalStateUnknown: delta.tombstone,
        });
        current = undefined;
        latest = undefined;
        continue;
      }
      const body = delta.body!;
      if (body === UNCHANGED_BODY && (current === undefined || current.resourceVersion !== delta.resourceVersion)) {
        // Staged without a body because the cache held this version: nothing can have changed it
        // since (the queue is empty while a list is staged). Fail loudly rather than store nothing.
        throw new Error(`DeltaFIFO invariant broken: '${key}' was staged as unchanged at ${delta.resourceVersion} but the cache holds ${current?.resourceVersion ?? "nothing"}`);
      }
      if (current === undefined) {
        const added = append({
          type: "add",
          key,
          uid: delta.uid,
          resourceVersion: delta.resourceVersion,
          body,
          oldBody: null,
          initialList: isInInitialList,
          finalStateUnknown: false,
        });
        current = { resourceVersion: delta.resourceVersion, seq: added, body };
        latest = delta;
        continue;
      }
      const holder = current;
      if (delta.type === "Sync") {
        append({
          type: "sync",
          key,
          uid: delta.uid,
          resourceVersion: holder.resourceVersion,
          body: stateOf(holder),
          oldBody: stateOf(holder),
          initialList: false,
          finalStateUnknown: false,
        });
        continue;
      }
      if (isUnchanged(delta, holder, () => bodyOf(key, holder), deps.compareBodies === true)) continue;
      const updated = append({
        type: "update",
        key,
        uid: delta.uid,
        resourceVersion: delta.resourceVersion,
        body,
        oldBody: stateOf(holder),
        initialList: false,
        finalStateUnknown: false,
      });
      current = { resourceVersion: delta.resourceVersion, seq: updated, body };
      latest = delta;
    }
    if (current === undefined) {
      if (initial !== undefined) deletes.push(key);
    } else if (current !== initial && latest) {
      if (initial === undefined) added++;
      const state = latest;
      upserts.push({
        key,
        meta: { namespace, name, uid: state.uid, resourceVersion: state.resourceVersion },
        seq: current.seq,
        body: state.body!,
        object: () => state.object ?? (JSON.parse(state.body!) as KubeObject),
      });
    }
  }
  indexer.writeInTx(upserts, deletes);
  log.appendInTx(events);
  return added - deletes.length;
}

/**
 * A tombstone's last known state carrying the relist's resourceVersion (its delta's, review N4), as
 * the API server's DELETED carries the deletion's: a watcher's RV never goes back after a relist,
 * and every reader of the log (a `/k8s` watch, a webhook) sees one RV for the event. The rest of
 * the state is the last known one, as client-go's DeletedFinalStateUnknown.Obj.
 */
function stampedTombstone(delta: Delta): string | null {
  if (delta.body === null || delta.body === UNCHANGED_BODY || delta.resourceVersion === "") return delta.body;
  const object = JSON.parse(delta.body) as KubeObject;
  if (object.metadata.resourceVersion === delta.resourceVersion) return delta.body;
  object.metadata.resourceVersion = delta.resourceVersion;
  return JSON.stringify(object);
}

function isUnchanged(delta: Delta, cached: Current, cachedBody: () => string | null, compareBodies: boolean): boolean {
  if (delta.resourceVersion !== "") {
    if (delta.resourceVersion !== cached.resourceVersion) return false;
    return !compareBodies || delta.body === UNCHANGED_BODY || cachedBody() === delta.body;
  }
  return cached.resourceVersion === "" && cachedBody() === delta.body;
}
