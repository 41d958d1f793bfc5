/**
 * The declared configuration (objects/informer-factory.ts): brings the registry's declared clusters,
 * informers and their subscriptions in line with `CLUSTERS` and `INFORMERS`.
 *
 * Guarantees:
 * - Adds, updates and removes only what is declared (`source: config`): what the API created is
 *   left alone, and an unchanged entry is not touched (no informer restarts).
 * - A declaration that did not parse or apply cleanly deletes nothing: undeclared informers,
 *   clusters and subscriptions are removed only when everything parsed and applied.
 * - A cluster that informers still use stays until they are deleted; a new one beyond MAX_CLUSTERS,
 *   or one whose jurisdiction would move objects, is refused. Every refusal is in `errors` and logged.
 * - A declared subscription's secret comes from the Worker secret it names, one secret per
 *   subscription (a receiver tells deliveries apart by their signatures).
 */
import type { InformerAddress } from "../clusters/cluster.ts";
import { informerObjectName } from "../clusters/cluster.ts";
import { parseDeclaredClusters } from "../clusters/cluster-spec.ts";
import { authorizationOf, DEFAULT_CLUSTER } from "../clusters/cluster.ts";
import { syncRbacInformers } from "./factory-rbac-informers.ts";
import { internalInformerRefusal, rbacNameConflict } from "./rbac-reserved-names.ts";
import { jurisdictionChangeRefusal, placementOf } from "../clusters/placement.ts";
import type { subscriptionStub } from "../clusters/stubs.ts";
import type { InformerSource } from "../config/informer-registry.ts";
import { type InformerSpec, parseDeclaredInformers, sameSpec } from "../config/informer-spec.ts";
import type { SubscriptionRegistry } from "../delivery/subscription-registry.ts";
import { queueTargets } from "../delivery/queue-target.ts";
import { SIGNING_KEY_PATTERN } from "../delivery/ed25519-keys.ts";
import { checkFormat, checkTarget, declaredSubscriptionId, SECRET_PATTERN, sharedSecretBindings, webhookUrlPolicy } from "../delivery/subscription-spec.ts";
import { type Result, unwrap } from "../errors.ts";
import { logger } from "../log.ts";
import type { FactoryClusters, FactoryContext } from "./factory-clusters.ts";

export interface DeclaredSync {
  added: string[];
  updated: string[];
  removed: string[];
  /** Declared subscriptions created, updated or removed. */
  subscriptions: string[];
  /** Declared clusters added, updated or removed (`name added` …). */
  clusters: string[];
  errors: string[];
}

/** What the declared sync needs of the factory beyond its clusters. */
export interface DeclaringFactory extends FactoryContext {
  readonly subscriptions: SubscriptionRegistry;
  readonly clusters: FactoryClusters;
  subscription(id: string, cluster: string): ReturnType<typeof subscriptionStub>;
  /** Deletes an informer with its subscriptions. */
  remove(address: InformerAddress, source: InformerSource): Promise<Result<null>>;
}

/** Applies `CLUSTERS` and `INFORMERS` (the caller serializes registry changes). */
export async function syncDeclared(factory: DeclaringFactory, informers: string | undefined, clustersText: string | undefined): Promise<DeclaredSync> {
  const { registry, clusters } = factory;
  const declaredClusters = parseDeclaredClusters(clustersText, factory.env);
  const { specs, errors } = parseDeclaredInformers(informers);
  const result: DeclaredSync = { added: [], updated: [], removed: [], subscriptions: [], clusters: [], errors: [...declaredClusters.errors, ...errors] };
  for (const { name, connection } of declaredClusters.clusters) {
    const existing = registry.getCluster(name);
    if (existing && JSON.stringify(existing.connection) === JSON.stringify(connection) && existing.source === "config") continue;
    const full = existing ? undefined : clusters.tooManyClusters(name);
    if (full) {
      result.errors.push(`CLUSTERS: ${full}`);
      continue;
    }
    // The cluster keeps its stored connection and placement: its objects stay reachable.
    const moved = jurisdictionChangeRefusal(name, existing?.connection, placementOf(connection), registry.list(name).length);
    if (moved) {
      result.errors.push(`CLUSTERS.${name}: ${moved}`);
      continue;
    }
    const reserved = authorizationOf(connection) === "rbac" ? rbacNameConflict(registry, name) : undefined;
    if (reserved) {
      result.errors.push(`CLUSTERS.${name}: ${reserved.error.message}`);
      continue;
    }
    factory.written(registry.putCluster(name, connection, "config", Date.now()));
    result.clusters.push(`${name} ${existing ? "updated" : "added"}`);
    if (existing) await clusters.reconnect(name, connection);
    const synced = await syncRbacInformers(factory, name);
    if (!synced.ok) result.errors.push(`CLUSTERS.${name}: RBAC informers: ${synced.error.message}`);
  }
  for (const spec of specs) {
    const existing = registry.get(spec);
    if (existing && sameSpec(existing.spec, spec) && existing.source === "config") continue;
    const internal = internalInformerRefusal(registry, spec, "change");
    if (internal) {
      result.errors.push(`${informerObjectName(spec)}: ${internal.error.message}`);
      continue;
    }
    const connection = clusters.connectionOf(spec.cluster);
    const configured = connection.ok ? await factory.informer(spec).configure(spec, connection.value) : connection;
    if (!configured.ok) {
      result.errors.push(`${informerObjectName(spec)}: ${configured.error.message}`);
      continue;
    }
    factory.written(registry.put(spec, "config", Date.now()));
    (existing ? result.updated : result.added).push(informerObjectName(spec));
  }
  const shared = sharedSecretBindings(specs);
  for (const spec of specs) if (registry.get(spec)) await syncDeclaredSubscriptions(factory, spec, result, shared);
  // A broken INFORMERS must not delete data: remove undeclared informers only when it parsed cleanly.
  const declared = new Set(specs.map(informerObjectName));
  for (const informer of errors.length > 0 ? [] : registry.list()) {
    if (informer.source === "config" && !declared.has(informerObjectName(informer))) {
      unwrap(await factory.remove(informer, "config"));
      result.removed.push(informerObjectName(informer));
    }
  }
  // Likewise for clusters, and never one that informers still use.
  const declaredNames = new Set(declaredClusters.clusters.map((c) => c.name));
  for (const cluster of declaredClusters.errors.length > 0 ? [] : registry.listClusters()) {
    if (cluster.source !== "config" || declaredNames.has(cluster.name)) continue;
    const users = registry.list(cluster.name);
    if (users.length > 0) {
      result.errors.push(`CLUSTERS: cluster '${cluster.name}' was removed but informers use it (${users.map((i) => i.name).join(", ")}): it stays until they are deleted`);
      continue;
    }
    factory.written(registry.deleteCluster(cluster.name));
    result.clusters.push(`${cluster.name} removed`);
  }
  // The default cluster's RBAC informers follow KUBE_API_AUTHORIZATION (named clusters' follow their entries above).
  const defaultRbac = await syncRbacInformers(factory, DEFAULT_CLUSTER);
  if (!defaultRbac.ok) result.errors.push(`KUBE_API_AUTHORIZATION: RBAC informers of the default cluster: ${defaultRbac.error.message}`);
  for (const error of result.errors) {
    logger.error(error.startsWith("CLUSTERS") || error.startsWith("KUBE_API") ? "CLUSTERS entry refused" : "INFORMERS entry refused", { cause: "config", error });
  }
  return result;
}

/** What a declared queue subscription without a secretBinding stores as its secret: never signed with (queue deliveries are not signed). */
const UNSIGNED_QUEUE_SECRET = `whsec_${"A".repeat(32)}`;

/**
 * Brings an informer's declared subscriptions in line with its spec: creates or updates each
 * (secrets from the Worker secrets they name), and deletes declared ones no longer listed.
 * Subscriptions created through the API are left alone.
 */
async function syncDeclaredSubscriptions(factory: DeclaringFactory, spec: InformerSpec, result: DeclaredSync, sharedBindings: Map<string, string[]>): Promise<void> {
  const declared = new Set<string>();
  let complete = true;
  for (const subscription of spec.subscriptions) {
    const id = declaredSubscriptionId(spec, subscription.name);
    declared.add(id);
    const where = `${informerObjectName(spec)}.subscriptions.${subscription.name}`;
    const binding = subscription.secretBinding;
    try {
      checkTarget(subscription, webhookUrlPolicy(factory.env), queueTargets(factory.env));
      if (binding === undefined && subscription.url !== undefined) throw new Error("a url subscription needs a secretBinding: the Worker secret it is signed with");
      // A queue subscription is not signed: without a secretBinding it stores a fixed, unused secret.
      const secret = binding === undefined ? UNSIGNED_QUEUE_SECRET : (factory.env as unknown as Record<string, unknown>)[binding];
      const sharers = binding === undefined ? undefined : sharedBindings.get(binding);
      if (sharers) {
        throw new Error(
          `the Worker secret '${binding}' is the secretBinding of ${sharers.join(" and ")}: ` +
            "give each declared subscription its own secret, so a receiver can tell their deliveries apart by their signatures",
        );
      }
      const ed25519 = subscription.signing === "ed25519";
      if (typeof secret !== "string" || !(ed25519 ? SIGNING_KEY_PATTERN : SECRET_PATTERN).test(secret)) {
        const kind = ed25519 ? "whsk_ key (signing: ed25519)" : "whsec_ secret";
        throw new Error(`the Worker secret '${binding}' must hold a ${kind} (wrangler secret put ${binding})`);
      }
      checkFormat(subscription);
      const { name: _, secretBinding: __, ...subscriptionSpec } = subscription;
      factory.subscriptions.put(id, spec);
      const outcome = unwrap(await factory.subscription(id, spec.cluster).declare(id, { cluster: spec.cluster, name: spec.name }, subscriptionSpec, secret));
      if (outcome !== "unchanged") result.subscriptions.push(`${where} ${outcome}`);
    } catch (error) {
      complete = false;
      result.errors.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  // As with informers: never delete on a declaration that did not fully apply.
  if (!complete) return;
  const ids = await factory.informer(spec).subscriberIds();
  for (const id of ids.ok ? ids.value : []) {
    if (declared.has(id) || !id.startsWith(declaredSubscriptionId(spec, ""))) continue;
    if ((await factory.subscription(id, spec.cluster).destroy(true)) === "deleted") result.subscriptions.push(`${id} removed`);
    factory.subscriptions.delete(id);
  }
}
