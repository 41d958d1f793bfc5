/**
 * The transform applied to every object from the API server before it is queued or stored
 * (client-go `SetTransform`, reference §5.8): drops `metadata.managedFields` by default and any
 * configured field paths, and a Secret's values unless its informer keeps them (their number stays,
 * in an annotation). Idempotent, as client-go requires (a watch-list may apply it twice).
 * Sync deltas and tombstones are never transformed again.
 */
import type { KubeObject } from "../kube/types.ts";
import { deleteAtPath, parseFieldPath } from "./field-path.ts";
import { dropSecretData } from "./sensitive-resources.ts";

export interface TransformSpec {
  dropManagedFields?: boolean;
  dropFields?: string[];
  /** An informer of secrets: drop their values, keep their number (cache/sensitive-resources.ts). */
  dropSecretData?: boolean;
}

export type Transform = ((object: KubeObject) => KubeObject) & {
  /**
   * Whether the transform would leave `object` as it is, when that is known without running it: the
   * object's text as received is then its body (admission.ts), with no JSON.stringify.
   */
  leaves?: (object: KubeObject) => boolean;
};

const MANAGED_FIELDS = ["metadata", "managedFields"];

/**
 * Bumped when this code comes to make cached Secrets differently, for specs that did not change:
 * cached objects made by an older version are made again (InformerObject re-transforms them).
 * 1: a Secret's `data` and `stringData` are dropped unless `keepSecretData` (issue 17).
 * 2: the number of keys dropped is kept in an annotation (issue 18, F19: a Table's DATA).
 */
export const TRANSFORM_VERSION = 2;

export function makeTransform(spec: TransformSpec = {}): Transform {
  const paths = (spec.dropFields ?? []).map(parseFieldPath);
  if (spec.dropManagedFields !== false) paths.unshift(MANAGED_FIELDS);
  const dropSecrets = spec.dropSecretData === true;
  if (paths.length === 0 && !dropSecrets) return Object.assign((object: KubeObject) => object, { leaves: () => true });
  const transform: Transform = (object) => {
    // Counted before dropFields run, so a path under data cannot hide keys from the count.
    if (dropSecrets) dropSecretData(object);
    for (const path of paths) deleteAtPath(object, path);
    return object;
  };
  // The default transform (managedFields only) leaves an object that has none as it is.
  if (paths.length === 1 && paths[0] === MANAGED_FIELDS && !dropSecrets) {
    transform.leaves = (object) => !Object.hasOwn(object.metadata ?? {}, "managedFields");
  }
  return transform;
}
