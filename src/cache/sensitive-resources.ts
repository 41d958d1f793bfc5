/**
 * Sensitive resources (issue 17 item 8): kinds whose objects are credentials, so mirroring them
 * hands those credentials to every reader of the deployment. An informer of one must opt in with
 * `"allowSensitive": true`, and its transform drops the secret fields unless
 * `transform.keepSecretData` keeps them (a Secret's name, type, labels and annotations are often
 * all a controller needs), keeping only how many keys they had.
 *
 * Today that is core `secrets` (a ServiceAccount token Secret takes over a cluster); custom
 * resources are the operator's call.
 */
import type { ResourceRef } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";

/** The fields of a Secret that hold its values. */
export const SECRET_DATA_FIELDS = ["data", "stringData"] as const;

/**
 * The annotation in which a cached Secret keeps the number of keys its values had when they were
 * dropped (of `data` and `stringData` together, each key once), in decimal: what the API server's
 * Table counts as DATA, so `kubectl get secrets` on /k8s prints the same. Absent when there were none.
 */
export const SECRET_DATA_KEYS_ANNOTATION = "edge-informer.dev/secret-data-keys";

/**
 * Drops a Secret's values and records their number in SECRET_DATA_KEYS_ANNOTATION. Idempotent: a
 * Secret without values (one it transformed already, as a watch-list may ask twice) is left as it is.
 */
export function dropSecretData(secret: KubeObject): void {
  const keys = new Set<string>();
  for (const field of SECRET_DATA_FIELDS) {
    const values = secret[field];
    if (typeof values === "object" && values !== null) for (const key of Object.keys(values)) keys.add(key);
    delete secret[field];
  }
  if (keys.size > 0) secret.metadata.annotations = { ...secret.metadata.annotations, [SECRET_DATA_KEYS_ANNOTATION]: String(keys.size) };
}

/** Whether objects of `ref` are credentials. */
export function isSensitive(ref: Pick<ResourceRef, "group" | "resource">): boolean {
  return ref.group === "" && ref.resource === "secrets";
}

/** Why an informer of `resource` needs allowSensitive, as the 400 says it. */
export function sensitiveRefusal(resource: string): string {
  return (
    `'${resource}' holds credentials (a ServiceAccount token Secret gives its holder the account's access to the cluster), ` +
    `and every reader of this deployment could read them from the cache: set "allowSensitive": true to mirror them anyway ` +
    `(${SECRET_DATA_FIELDS.join(" and ")} are then dropped unless "transform": {"keepSecretData": true})`
  );
}
