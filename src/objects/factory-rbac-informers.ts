/**
 * The member cluster's RBAC objects, mirrored (issue 31): a cluster whose `authorization` is `rbac`
 * (clusters/cluster.ts) has four informers the factory keeps itself — Roles, RoleBindings,
 * ClusterRoles and ClusterRoleBindings (rbac.authorization.k8s.io/v1) — from which
 * auth/rbac/rbac-source.ts builds the cluster's RbacAuthorizer, which decides every read of the
 * cluster (http/read-authorization.ts, http/list-scope.ts).
 *
 * Guarantees:
 * - Their names (RBAC_INFORMERS) are reserved in such a cluster, and they are registered with
 *   `source: internal`: the admin API and INFORMERS cannot change or delete them, and lists tell
 *   them apart. Switching to `rbac` while a user's informer holds one of the names is refused
 *   (`rbacNameConflict`) before anything is written.
 * - `syncRbacInformers` is idempotent: it creates the missing ones of an `rbac` cluster and deletes
 *   them (with any subscriptions) from a `scopes` one; existing ones are left alone (no relist).
 */
import { authorizationOf, defaultConnection, type InformerAddress } from "../clusters/cluster.ts";
import { rbacNameConflict } from "./rbac-reserved-names.ts";
import type { InformerRegistry, InformerSource } from "../config/informer-registry.ts";
import { parseInformerSpec } from "../config/informer-spec.ts";
import { ok, type Result } from "../errors.ts";
import { RBAC_INFORMERS } from "../auth/rbac/rbac-informers.ts";
import type { FactoryClusters, FactoryContext } from "./factory-clusters.ts";

/** What syncing them needs of the factory. */
export interface RbacInformerFactory extends FactoryContext {
  readonly clusters: FactoryClusters;
  /** Deletes an informer with its subscriptions. */
  remove(address: InformerAddress, source: InformerSource): Promise<Result<null>>;
}

/** Brings `cluster`'s RBAC informers in line with its `authorization` (the caller serializes registry changes). */
export async function syncRbacInformers(factory: RbacInformerFactory, cluster: string): Promise<Result<null>> {
  const connection = factory.clusters.connectionOf(cluster);
  if (!connection.ok) return connection;
  // The default cluster's connection is the environment's (KUBE_API_AUTHORIZATION), given as none.
  const wanted = authorizationOf(connection.value ?? defaultConnection(factory.env)) === "rbac";
  if (wanted) {
    const taken = rbacNameConflict(factory.registry, cluster);
    if (taken) return taken;
  }
  for (const [name, resource] of Object.entries(RBAC_INFORMERS)) {
    const existing = factory.registry.get({ cluster, name });
    if (wanted && existing === undefined) {
      const spec = parseInformerSpec({ name, cluster, resource });
      const configured = await factory.informer(spec).configure(spec, connection.value);
      if (!configured.ok) return configured;
      factory.written(factory.registry.put(spec, "internal", Date.now()));
    } else if (!wanted && existing?.source === "internal") {
      const removed = await factory.remove({ cluster, name }, "internal");
      if (!removed.ok) return removed;
    }
  }
  return ok(null);
}
