/**
 * What a webhook receiver that applies events in the order it receives them may never see (DESIGN
 * invariants 3 and 10): a key going back, to an older resourceVersion or to an event it had
 * received before a newer one of that key. Duplicates are allowed (at least once), but only of
 * the key's newest event: an update resent after its key's delete, even at the same
 * resourceVersion (a delete may carry the object's last one), brings the object back.
 */
import { compareRv } from "./informer.ts";

/** An event as the receiver saw it: enough to check its key's order. */
export interface ReceivedEvent {
  id: string;
  type: string;
  key: string;
  resourceVersion: string;
}

/** Every place, in received order, where a key's resourceVersion went back (none: the order holds). */
export function keysGoingBack(events: Iterable<ReceivedEvent>): string[] {
  const newest = new Map<string, { id: string; resourceVersion: string }>();
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const event of events) {
    const last = newest.get(event.key);
    if (last !== undefined && last.id !== event.id && seen.has(event.id)) {
      problems.push(`${event.type} of ${event.key} at ${event.resourceVersion} again after ${last.resourceVersion} (${last.id})`);
    } else if (last !== undefined && compareRv(event.resourceVersion, last.resourceVersion) < 0) {
      problems.push(`${event.type} of ${event.key} at ${event.resourceVersion} after ${last.resourceVersion}`);
    } else newest.set(event.key, event);
    seen.add(event.id);
  }
  return problems;
}

/** Each key's events (`type@resourceVersion`) in received order, duplicates included: what a failure shows. */
export function versionsByKey(events: Iterable<ReceivedEvent>): Record<string, string[]> {
  const byKey: Record<string, string[]> = {};
  for (const event of events) (byKey[event.key] ??= []).push(`${event.type}@${event.resourceVersion}`);
  return byKey;
}
