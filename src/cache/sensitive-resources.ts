/**
 * Sensitive resources (issue 17 item 8): kinds whose objects are credentials, so mirroring them
 * hands those credentials to every reader of the deployment. An informer of one must opt in with
 * `"allowSensitive": true`, and its transform drops the secret fields unless
 * `transform.keepSecretData` keeps them (a Secret's name, type, labels and annotations are often
 * all a controller needs).
 *
 * Today that is core `secrets` (a ServiceAccount token Secret takes over a cluster); custom
 * resources are the operator's call.
 */
import type { ResourceRef } from "../kube/resources.ts";

/** The fields of a Secret that hold its values. */
export const SECRET_DATA_FIELDS = ["data", "stringData"] as const;

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
