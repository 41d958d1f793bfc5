/**
 * What the cache admits: an object it can key and store. client-go logs and skips an object its key
 * function rejects (a Status or Table from a proxy, an item without `metadata.name`) instead of
 * failing the whole batch; so do we, and we also skip one too large for a SQLite row, which would
 * otherwise fail every transaction it is part of. Each rejection is counted by the informer and
 * shown in its status; the rest of the batch is applied.
 */
import { takeDecodedText } from "../kube/object-text.ts";
import type { KubeObject } from "../kube/types.ts";
import { KeyError, keyOf } from "./keys.ts";
import type { Transform } from "./transform.ts";

/**
 * Largest object body stored (UTF-8 bytes, after the transform). A Durable Object's SQLite row holds
 * at most 2 MB; etcd refuses requests over 1.5 MiB, so no real object comes near this.
 */
export const MAX_OBJECT_BYTES = 1_900_000;

export type Admission = { ok: true; key: string; object: KubeObject; body: string } | { ok: false; reason: string };

/** Transforms, keys and serializes `object`, or says why the cache cannot hold it. */
export function admit(object: KubeObject, transform: Transform): Admission {
  let key: string;
  try {
    key = keyOf(object);
  } catch (error) {
    if (error instanceof KeyError) return { ok: false, reason: `${describe(object)}: ${error.message}` };
    throw error;
  }
  // A watch object's text as received is its body when the transform leaves it as it is: no
  // JSON.stringify (8 µs of a 3.8 KB pod's ~27 µs of decoding and transforming, kube/object-text.ts).
  const received = takeDecodedText(object);
  const kept = received !== undefined && transform.leaves?.(object) === true;
  const transformed = kept ? object : transform(object);
  const body = kept ? received : JSON.stringify(transformed);
  const bytes = utf8Length(body);
  if (bytes > MAX_OBJECT_BYTES) {
    return { ok: false, reason: `${key}: ${bytes} bytes is more than the ${MAX_OBJECT_BYTES} an object may have` };
  }
  return { ok: true, key, object: transformed, body };
}

function describe(object: unknown): string {
  const kind = (object as { kind?: unknown } | null)?.kind;
  return typeof kind === "string" ? `a ${kind.slice(0, 64)} object` : "an object";
}

function utf8Length(text: string): number {
  // Every UTF-16 unit is at most 3 UTF-8 bytes: count exactly only when it could matter.
  return text.length * 3 <= MAX_OBJECT_BYTES ? text.length : new TextEncoder().encode(text).length;
}
