/**
 * What a webhook receiver that applies events in the order it receives them may never see (DESIGN
 * invariants 3 and 10): a key going back to an older state. States are ordered by resourceVersion,
 * and at one resourceVersion a delete comes last: a delete may carry the object's last version (a
 * delete inferred by a relist, or this repository's fake feed), and an update received again after
 * it brings the object back. Duplicates of a key's newest state are allowed (at least once).
 */
import { compareRv } from "./informer.ts";

/** An event as the receiver saw it: enough to check its key's order. */
export interface ReceivedEvent {
  type: string;
  key: string;
  resourceVersion: string;
}

/** Every place, in received order, where a key went back (none: the order holds). */
export function keysGoingBack(events: Iterable<ReceivedEvent>): string[] {
  const newest = new Map<string, ReceivedEvent>();
  const problems: string[] = [];
  for (const event of events) {
    const last = newest.get(event.key);
    if (last !== undefined && isOlder(event, last)) problems.push(`${event.type} of ${event.key} at ${event.resourceVersion} after ${last.type} at ${last.resourceVersion}`);
    else newest.set(event.key, event);
  }
  return problems;
}

function isOlder(event: ReceivedEvent, than: ReceivedEvent): boolean {
  const byVersion = compareRv(event.resourceVersion, than.resourceVersion);
  return byVersion < 0 || (byVersion === 0 && than.type === "delete" && event.type !== "delete");
}

/** Each key's events (`type@resourceVersion`) in received order, duplicates included: what a failure shows. */
export function versionsByKey(events: Iterable<ReceivedEvent>): Record<string, string[]> {
  const byKey: Record<string, string[]> = {};
  for (const event of events) (byKey[event.key] ??= []).push(`${event.type}@${event.resourceVersion}`);
  return byKey;
}
