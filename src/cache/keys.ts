/**
 * Object keys and tombstones (client-go store.go `MetaNamespaceKeyFunc`, `SplitMetaNamespaceKey`;
 * delta_fifo.go `DeletedFinalStateUnknown`). A key is `namespace/name`, or `name` for
 * cluster-scoped objects; nothing else is ever a key.
 */
import type { KubeObject } from "../kube/types.ts";

export class KeyError extends Error {
  override readonly name = "KeyError";
  readonly object: unknown;
  constructor(message: string, object: unknown) {
    super(message);
    this.object = object;
  }
}

/**
 * A deletion the informer inferred at a relist instead of seeing it: the object vanished from the
 * list while we were not watching. `lastKnown` is the last state we held, possibly stale, or null
 * when we never held one (a key that was only queued).
 */
export class DeletedFinalStateUnknown {
  readonly key: string;
  readonly lastKnown: KubeObject | null;
  constructor(key: string, lastKnown: KubeObject | null) {
    this.key = key;
    this.lastKnown = lastKnown;
  }
}

/** `namespace/name` or `name`; a tombstone yields its own key (client-go DeletionHandlingMetaNamespaceKeyFunc). */
export function keyOf(object: KubeObject | DeletedFinalStateUnknown): string {
  if (object instanceof DeletedFinalStateUnknown) return object.key;
  const name = object?.metadata?.name;
  if (typeof name !== "string" || name === "") throw new KeyError("object has no metadata.name", object);
  const namespace = object.metadata.namespace;
  return typeof namespace === "string" && namespace !== "" ? `${namespace}/${name}` : name;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const parts = key.split("/");
  if (parts.length === 1) return { namespace: "", name: parts[0]! };
  if (parts.length === 2) return { namespace: parts[0]!, name: parts[1]! };
  throw new KeyError(`unexpected key format: '${key}'`, key);
}
