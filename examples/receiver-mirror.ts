/**
 * The receiver's state (examples/receiver.ts), apart from HTTP so it can be tested: which event
 * ids were applied, and a mirror of the subscribed objects.
 */
import type { KubernetesObject, WebhookEvent } from "../src/client/index.ts";

/** Event ids already applied, oldest first: retries repeat an id, so apply each once. Bounded. */
export const MAX_REMEMBERED_IDS = 10_000;

export type Outcome = "applied" | "duplicate";

export class ReceiverMirror {
  readonly #seen = new Set<string>();
  /** Informer → key ("namespace/name" or "name") → the object's last known state. */
  readonly #objects = new Map<string, Map<string, KubernetesObject>>();

  /** Applies `event` once. */
  receive(event: WebhookEvent): Outcome {
    if (!this.#remember(event.id)) return "duplicate";
    let objects = this.#objects.get(event.informer);
    if (!objects) this.#objects.set(event.informer, (objects = new Map()));
    if (event.type === "delete") objects.delete(event.key);
    else objects.set(event.key, event.object); // add, update and sync all carry the current state
    return "applied";
  }

  /** The objects held for one informer. */
  objects(event: Pick<WebhookEvent, "cluster" | "informer">): ReadonlyMap<string, KubernetesObject> {
    return this.#objects.get(event.informer) ?? new Map();
  }

  #remember(id: string): boolean {
    if (this.#seen.has(id)) return false;
    this.#seen.add(id);
    if (this.#seen.size > MAX_REMEMBERED_IDS) this.#seen.delete(this.#seen.values().next().value!);
    return true;
  }
}
