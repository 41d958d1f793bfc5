/**
 * The RBAC informers' names are reserved in an `rbac` cluster (objects/factory-rbac-informers.ts):
 * the checks the registry's writers make before anything is written. Apart from the syncing, so that
 * the cluster store (factory-clusters.ts) may ask them without a cycle.
 */
import type { InformerAddress } from "../clusters/cluster.ts";
import type { InformerRegistry } from "../config/informer-registry.ts";
import type { Result } from "../errors.ts";
import { RBAC_INFORMERS } from "../auth/rbac/rbac-informers.ts";

type Refusal = Extract<Result<never>, { ok: false }>;

/** A 409 when `cluster` may not become `rbac` because an informer not made by the factory holds a reserved name. */
export function rbacNameConflict(registry: InformerRegistry, cluster: string): Refusal | undefined {
  const taken = Object.keys(RBAC_INFORMERS).filter((name) => {
    const existing = registry.get({ cluster, name });
    return existing !== undefined && existing.source !== "internal";
  });
  if (taken.length === 0) return undefined;
  return refusal(
    `cluster '${cluster}' cannot use authorization 'rbac': its informer(s) ${taken.map((n) => `'${n}'`).join(", ")} hold names reserved for the RBAC informers: delete or rename them first`,
  );
}

/** A 409 when `name` in `cluster` is an internal informer that only the factory may change. */
export function internalInformerRefusal(registry: InformerRegistry, address: InformerAddress, verb: "change" | "delete"): Refusal | undefined {
  if (registry.get(address)?.source !== "internal") return undefined;
  return refusal(
    `informer '${address.name}' of cluster '${address.cluster}' is kept by the factory for its authorization 'rbac': ${verb} the cluster's authorization instead`,
  );
}

function refusal(message: string): Refusal {
  return { ok: false, error: { code: "Conflict", message } };
}
