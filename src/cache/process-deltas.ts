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
 *   tombstone is logged as a delete with `finalStateUnknown` and its last known state.
 * - Sync deltas are logged as `sync` events with the cached state as both old and new.
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
import type { Delta } from "./delta-fifo.ts";
import type { EventLog } from "./event-log.ts";
import type { Indexer } from "./indexer.ts";
import { splitKey } from "./keys.ts";

export interface ProcessDeps {
  indexer: Indexer;
  log: EventLog;
  clock: Clock;
}

export function processDeltasInTx(key: string, deltas: readonly Delta[], isInInitialList: boolean, deps: ProcessDeps): void {
  const { indexer, log, clock } = deps;
  const { namespace, name } = splitKey(key);
  for (const delta of deltas) {
    const at = clock.now();
    if (delta.type === "Deleted") {
      log.appendInTx({
        type: "delete",
        key,
        uid: delta.uid,
        resourceVersion: delta.resourceVersion,
        body: delta.body,
        prevSeq: null,
        initialList: false,
        finalStateUnknown: delta.tombstone,
        at,
      });
      indexer.deleteInTx(key);
      continue;
    }
    const body = delta.body!;
    const meta = { namespace, name, uid: delta.uid, resourceVersion: delta.resourceVersion };
    const parse = () => JSON.parse(body) as KubeObject;
    const cached = indexer.getMeta(key);
    if (cached === undefined) {
      const seq = log.appendInTx({
        type: "add",
        key,
        uid: delta.uid,
        resourceVersion: delta.resourceVersion,
        body,
        prevSeq: null,
        initialList: isInInitialList,
        finalStateUnknown: false,
        at,
      });
      indexer.upsertInTx(key, meta, seq, parse);
      continue;
    }
    if (delta.type === "Sync") {
      log.appendInTx({
        type: "sync",
        key,
        uid: delta.uid,
        resourceVersion: cached.resourceVersion,
        body: null,
        prevSeq: cached.seq,
        initialList: false,
        finalStateUnknown: false,
        at,
      });
      continue;
    }
    if (isUnchanged(delta, cached, () => log.body(cached.seq))) continue;
    const seq = log.appendInTx({
      type: "update",
      key,
      uid: delta.uid,
      resourceVersion: delta.resourceVersion,
      body,
      prevSeq: cached.seq,
      initialList: false,
      finalStateUnknown: false,
      at,
    });
    indexer.upsertInTx(key, meta, seq, parse);
  }
}

function isUnchanged(delta: Delta, cached: { resourceVersion: string }, cachedBody: () => string | null): boolean {
  if (delta.resourceVersion !== "") return delta.resourceVersion === cached.resourceVersion;
  return cached.resourceVersion === "" && cachedBody() === delta.body;
}
