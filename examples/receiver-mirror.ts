/**
 * The receiver's state (examples/receiver.ts), apart from HTTP so it can be tested: which event
 * ids were applied, and a mirror of the subscribed objects.
 *
 * Guarantees:
 * - An id is remembered for ID_RETENTION_MS after it was applied, however many events arrive
 *   meanwhile: a captured request verifies for as long as its signature's timestamp is within the
 *   tolerance, so a count-bounded memory would forget ids that can still be replayed at high rates.
 *   Memory follows the event rate over that window, not a fixed count.
 * - No event older, by its object's resourceVersion, than the state held for its key is applied
 *   (a replayed or late `update` must not move the mirror back in time). A delete is remembered as
 *   the resourceVersion it carries (with `finalStateUnknown`, the last known state) for the same
 *   window, so an older event cannot bring the object back either.
 * - State is keyed on the signed body's `cluster` and `informer`: the `x-edge-informer-cluster`
 *   header is not covered by the signature, and resourceVersions of two clusters are unrelated.
 */
import type { KubernetesObject, WebhookEvent } from "../src/client/index.ts";

/** Standard Webhooks' timestamp tolerance: a signature verifies within ±5 minutes of its timestamp. */
export const WEBHOOK_TOLERANCE_MS = 5 * 60_000;
/**
 * How long ids (and deletes) are remembered: twice the tolerance, since a request may arrive up
 * to the tolerance before its timestamp (the sender's clock ahead) and verify until the tolerance
 * after it.
 */
export const ID_RETENTION_MS = 2 * WEBHOOK_TOLERANCE_MS;

/** `stale`: older than the state held for its key, so not applied. */
export type Outcome = "applied" | "duplicate" | "stale";

/**
 * Orders two resourceVersions of one cluster. They are opaque strings; the only comparison the
 * semantics need (is this event older than what I hold?) is by length, then text, as etcd's
 * revisions are decimal numbers without leading zeros. Never parse one into a number.
 */
export function compareResourceVersions(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

export class ReceiverMirror {
  readonly #now: () => number;
  /** Applied id → when it was applied; insertion order is time order, so expiry pops the front. */
  readonly #seen = new Map<string, number>();
  /** `cluster/informer` → key ("namespace/name" or "name") → the object's last known state. */
  readonly #objects = new Map<string, Map<string, KubernetesObject>>();
  /** `cluster/informer` + key of a deleted object → the resourceVersion it was deleted at, and when. */
  readonly #deleted = new Map<string, { rv: string; at: number }>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Applies `event` unless it was applied before or is older than the state held for its key. */
  receive(event: WebhookEvent): Outcome {
    const now = this.#now();
    this.#expire(now);
    if (this.#seen.has(event.id)) return "duplicate";
    this.#seen.set(event.id, now);
    const objects = this.#informer(event);
    const tombstone = `${mirrorName(event)} ${event.key}`;
    const heldRv = objects.get(event.key)?.metadata.resourceVersion ?? this.#deleted.get(tombstone)?.rv;
    if (heldRv !== undefined && compareResourceVersions(event.resourceVersion, heldRv) < 0) return "stale";
    if (event.type === "delete") {
      objects.delete(event.key);
      this.#deleted.delete(tombstone); // re-inserted at the end: the map stays in time order
      this.#deleted.set(tombstone, { rv: event.resourceVersion, at: now });
    } else {
      objects.set(event.key, event.object); // add, update and sync all carry the current state
      this.#deleted.delete(tombstone);
    }
    return "applied";
  }

  /** The objects held for one informer of one cluster. */
  objects(event: Pick<WebhookEvent, "cluster" | "informer">): ReadonlyMap<string, KubernetesObject> {
    return this.#objects.get(mirrorName(event)) ?? new Map();
  }

  /** How many ids are remembered now. */
  get rememberedIds(): number {
    return this.#seen.size;
  }

  #informer(event: Pick<WebhookEvent, "cluster" | "informer">): Map<string, KubernetesObject> {
    let objects = this.#objects.get(mirrorName(event));
    if (!objects) this.#objects.set(mirrorName(event), (objects = new Map()));
    return objects;
  }

  #expire(now: number): void {
    for (const map of [this.#seen, this.#deleted] as Map<string, number | { at: number }>[]) {
      for (const [key, value] of map) {
        if (now - (typeof value === "number" ? value : value.at) <= ID_RETENTION_MS) break;
        map.delete(key);
      }
    }
  }
}

const mirrorName = (event: Pick<WebhookEvent, "cluster" | "informer">) => `${event.cluster}/${event.informer}`;
