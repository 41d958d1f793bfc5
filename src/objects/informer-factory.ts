/**
 * InformerFactory: one Durable Object per deployment, client-go's SharedInformerFactory for every
 * cluster. It keeps the registry of clusters and informers, starts each informer (by configuring its
 * InformerObject with its cluster's connection), keeps the declared ones in step with `CLUSTERS` and
 * `INFORMERS`, and on every cron tick re-arms any informer whose loop stopped (DESIGN invariant 7,
 * self-healing). It is on no informer's data path: a watch never waits for it, so one cluster's
 * trouble reaches the others only through configuration changes.
 *
 * Changes to the registry (put, remove, syncDeclared) run one at a time, in arrival order: every
 * isolate syncs `INFORMERS` on its first request, and the cron may too, so calls arrive together,
 * and a Durable Object interleaves them wherever one awaits an informer object.
 */
import { DurableObject } from "cloudflare:workers";
import { asAddress, authorizationOf, defaultConnection, type ClusterConnection, DEFAULT_CLUSTER, describeInformer, type InformerAddress, informerObjectName } from "../clusters/cluster.ts";
import type { ClusterHealth, VersionInfo } from "../clusters/health.ts";
import { type Placement, placementOf } from "../clusters/placement.ts";
import { defaultClusterPlacement, defaultJurisdictionRefusal } from "../clusters/placement-settings.ts";
import { informerStub, subscriptionStub } from "../clusters/stubs.ts";
import type { UpstreamOpenApi } from "../clusters/upstream-openapi.ts";
import { InformerRegistry, type InformerSource, type RegisteredInformer } from "../config/informer-registry.ts";
import type { InformerSpec } from "../config/informer-spec.ts";
import { backfillSubscriptions, SubscriptionRegistry } from "../delivery/subscription-registry.ts";
import type { Env } from "../env.ts";
import { ApiError, fail, ok, type Result, unwrap } from "../errors.ts";
import { informerIdentity } from "../log-identity.ts";
import { logger, setLogLevel } from "../log.ts";
import { Db } from "../sql.ts";
import { type ClusterView, FactoryClusters, type FactoryContext, HEALTH_TTL_MS, INFORMER_CALL_CONCURRENCY, MAX_CLUSTERS } from "./factory-clusters.ts";
import { eachWithin } from "./fan-out.ts";
import { type DeclaredSync, type DeclaringFactory, syncDeclared } from "./factory-declared.ts";
import type { InformerStatus } from "./informer-object.ts";
import { syncRbacInformers } from "./factory-rbac-informers.ts";
import { internalInformerRefusal } from "./rbac-reserved-names.ts";

export { type ClusterView, type DeclaredSync, HEALTH_TTL_MS, MAX_CLUSTERS };

export const FACTORY_NAME = "factory";
/**
 * How long the cron's minute waits for one informer's answer (its re-arm takes milliseconds): one
 * that does not answer in time is asked again the next minute, and costs the minute no more.
 */
export const RECONCILE_CALL_TIMEOUT_MS = 10_000;

/** The registry as the factory hands it to isolates (http/registry-snapshot.ts): never a cluster's connection. */
export interface RegistrySnapshot {
  version: string;
  informers: RegisteredInformer[];
  /** Every cluster's name, the default one included. */
  clusters: string[];
  /** Each cluster's placement (clusters/placement.ts), where it has one. */
  placements: Record<string, Placement>;
  /** The clusters whose reads the member cluster's RBAC authorizes (`authorization: rbac`). */
  rbacClusters: string[];
  /** The jurisdiction the default cluster's informers live in ("" for none), while it has some. */
  defaultJurisdiction?: string;
}

/** InformerFactory.registry's answer: the snapshot, or only its version when the caller has it. */
export type RegistryAnswer = RegistrySnapshot | { version: string; unchanged: true };


export class InformerFactory extends DurableObject<Env> {
  #registry!: InformerRegistry;
  /** Which informer each subscription follows (delivery/subscription-registry.ts), so unknown ids touch no object. */
  #subscriptions!: SubscriptionRegistry;
  /** Its clusters (factory-clusters.ts), and the factory as the declared sync sees it (factory-declared.ts). */
  #clusters!: FactoryClusters;
  #declaring!: DeclaringFactory;
  /**
   * The registry's version (registry()): this instance's random epoch and its count of registry
   * writes. Memory only: a new instance starts a new epoch, so isolates reload rather than trust a
   * count that restarted.
   */
  readonly #epoch = crypto.randomUUID();
  #writes = 0;
  /** The tail of the queue of registry changes (#exclusive). Memory only: an evicted object has none in flight. */
  #changes: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setLogLevel(env.LOG_LEVEL);
    ctx.blockConcurrencyWhile(async () => {
      this.#registry = new InformerRegistry(new Db(ctx.storage));
      this.#subscriptions = new SubscriptionRegistry(new Db(ctx.storage));
      const context: FactoryContext = {
        env,
        registry: this.#registry,
        written: (result) => this.#written(result),
        informer: (address) => this.#stub(address),
      };
      this.#clusters = new FactoryClusters(context);
      this.#declaring = {
        ...context,
        subscriptions: this.#subscriptions,
        clusters: this.#clusters,
        subscription: (id, cluster) => this.#subscriptionStub(id, cluster),
        remove: (address, source) => this.#remove(address, source),
      };
    });
  }

  /**
   * Creates or updates an informer in its spec's cluster. Declared informers can only change
   * through `INFORMERS`. `apiUrl` points the informer at another API server (tests).
   */
  async put(
    spec: InformerSpec,
    source: InformerSource = "api",
    apiUrl?: string,
  ): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    // A caller of the previous release sends specs without `cluster` (asAddress).
    return this.#exclusive(() => this.#put({ ...spec, cluster: spec.cluster ?? DEFAULT_CLUSTER }, source, apiUrl));
  }

  async #put(spec: InformerSpec, source: InformerSource, apiUrl?: string): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    const existing = this.#registry.get(spec);
    if (existing?.source === "config" && source === "api") {
      return fail("Conflict", `${describeInformer(spec)} is declared in INFORMERS (wrangler.toml): change it there`);
    }
    const internal = source === "internal" ? undefined : internalInformerRefusal(this.#registry, spec, "change");
    if (internal) return internal;
    const connection = apiUrl !== undefined ? { ok: true as const, value: { server: apiUrl } } : this.#clusters.connectionOf(spec.cluster);
    if (!connection.ok) return connection;
    const configured = await this.#stub(spec).configure(spec, connection.value);
    if (configured.ok) this.#written(this.#registry.put(spec, source, Date.now()));
    return configured;
  }

  async get(address: InformerAddress | string): Promise<RegisteredInformer | undefined> {
    return this.#registry.get(asAddress(address));
  }

  /**
   * The registry as isolates cache it (http/registry-snapshot.ts): its version, and unless that is
   * `since`, every informer and cluster name (never a connection). Comparing versions is the cheap
   * call an isolate makes about once a second.
   */
  async registry(since?: string): Promise<RegistryAnswer> {
    // First: recording it is a registry write, which the version below then counts.
    let defaultJurisdiction: string | undefined;
    try {
      defaultJurisdiction = this.#defaultJurisdiction(defaultClusterPlacement(this.env));
    } catch {
      defaultJurisdiction = this.#registry.defaultJurisdiction(); // a bad setting: the Worker refuses it by itself
    }
    const version = `${this.#epoch}:${this.#writes}`;
    if (since === version) return { version, unchanged: true };
    const clusters = this.#registry.listClusters();
    const placements = Object.fromEntries(clusters.map((c) => [c.name, placementOf(c.connection)]).filter(([, p]) => Object.keys(p as Placement).length > 0));
    const rbacClusters = [{ name: DEFAULT_CLUSTER, connection: defaultConnection(this.env) }, ...clusters].filter((c) => authorizationOf(c.connection) === "rbac").map((c) => c.name);
    return {
      version,
      informers: this.#registry.list(),
      clusters: [DEFAULT_CLUSTER, ...clusters.map((c) => c.name)],
      placements,
      rbacClusters,
      ...(defaultJurisdiction === undefined ? {} : { defaultJurisdiction }),
    };
  }

  /** Counts a registry write (bumps the version isolates compare); passes its result through. */
  #written<T>(result: T): T {
    this.#writes++;
    return result;
  }

  /** Every informer, or those of one cluster. */
  async list(cluster?: string): Promise<RegisteredInformer[]> {
    return this.#registry.list(cluster);
  }

  async remove(address: InformerAddress | string, source: InformerSource = "api"): Promise<Result<null>> {
    return this.#exclusive(() => this.#remove(asAddress(address), source));
  }

  async #remove(address: InformerAddress, source: InformerSource): Promise<Result<null>> {
    const existing = this.#registry.get(address);
    if (!existing) return fail("NotFound", `${describeInformer(address)} not found`);
    if (existing.source === "config" && source === "api") {
      return fail("Conflict", `${describeInformer(address)} is declared in INFORMERS (wrangler.toml): remove it there`);
    }
    const internal = source === "internal" ? undefined : internalInformerRefusal(this.#registry, address, "delete");
    if (internal) return internal;
    const subscriptions = await this.#stub(address).destroy();
    // A subscription without its informer has nothing to follow: delete them with it.
    await Promise.all(subscriptions.map((id) => this.#subscriptionStub(id, address.cluster).destroy(true)));
    for (const id of subscriptions) this.#subscriptions.delete(id);
    this.#written(this.#registry.delete(address));
    return ok(null);
  }

  /**
   * The informer subscription `id` follows: `absent` when there is no such subscription, `unindexed`
   * when that cannot be told yet (the one-time copy into the index could not reach every informer;
   * the caller asks the subscription's object then, as before the index).
   */
  async subscription(id: string): Promise<InformerAddress | "absent" | "unindexed"> {
    const found = this.#subscriptions.get(id);
    if (found) return found;
    if (!this.#subscriptions.complete() && !(await this.#exclusive(() => this.#backfillSubscriptions()))) return "unindexed";
    return this.#subscriptions.get(id) ?? "absent";
  }

  /** Records a subscription before its object is created (a leftover entry is harmless; a missing one would hide it). */
  async indexSubscription(id: string, informer: InformerAddress): Promise<void> {
    this.#subscriptions.put(id, { cluster: informer.cluster, name: informer.name });
  }

  /** Forgets a subscription after its object was deleted. */
  async unindexSubscription(id: string): Promise<void> {
    this.#subscriptions.delete(id);
  }

  #backfillSubscriptions(): Promise<boolean> {
    if (this.#subscriptions.complete()) return Promise.resolve(true);
    return backfillSubscriptions(this.#subscriptions, this.#registry.list(), async (informer) => {
      const ids = await this.#stub(informer).subscriberIds();
      return ids.ok ? ids.value : undefined;
    });
  }

  /** Whether a cluster exists: the default one always does. */
  async hasCluster(name: string): Promise<boolean> {
    return name === DEFAULT_CLUSTER || this.#registry.getCluster(name) !== undefined;
  }

  /** Every cluster, the default one first. */
  async clusters(): Promise<ClusterView[]> {
    return this.#clusters.views();
  }

  /** Each cluster's API server's version, probed (FactoryClusters.health). */
  async clusterHealth(names: string[]): Promise<Record<string, ClusterHealth>> {
    return this.#clusters.health(names);
  }

  /** `cluster`'s API server's `/version`, kept (FactoryClusters.serverVersion); undefined when it never answered. */
  async serverVersion(cluster: string): Promise<VersionInfo | undefined> {
    return this.#clusters.serverVersion(cluster);
  }

  /**
   * One OpenAPI document from `cluster`'s API server (clusters/upstream-openapi.ts), its body passed
   * on as it comes, never held here; each isolate keeps what it read (k8s/openapi-cache.ts).
   */
  async openApi(cluster: string, path: string, accept: string): Promise<UpstreamOpenApi> {
    return this.#clusters.openApi(cluster, path, accept);
  }

  /**
   * Adds or changes a cluster at run time. The default cluster and declared ones change only where
   * they are configured. A changed connection reaches every informer of the cluster; another URL
   * makes them relist (InformerObject.configure).
   */
  async putCluster(name: string, connection: ClusterConnection): Promise<Result<{ created: boolean; cluster: ClusterView }>> {
    return this.#exclusive(async () => {
      const put = await this.#clusters.put(name, connection);
      if (!put.ok) return put;
      // Its RBAC informers follow its authorization (factory-rbac-informers.ts); a failure is the
      // answer, and a retry of the same PUT (or the cron) completes them.
      const synced = await syncRbacInformers(this.#declaring, name);
      return synced.ok ? ok({ ...put.value, cluster: this.#clusters.views().find((c) => c.name === name)! }) : synced;
    });
  }

  /** Removes a run-time cluster; with `cascade`, its informers (and their subscriptions) too. */
  async removeCluster(name: string, cascade: boolean): Promise<Result<null>> {
    return this.#exclusive(async () => {
      if (!this.#registry.getCluster(name) && name !== DEFAULT_CLUSTER) return fail("NotFound", `cluster '${name}' not found`);
      const refused = this.#clusters.refuseChange(name, "remove");
      if (refused) return refused;
      const informers = this.#registry.list(name);
      // The factory's own (its RBAC informers) go with the cluster: only users' need a cascade.
      const users = informers.filter((i) => i.source !== "internal");
      if (users.length > 0 && !cascade) {
        return fail(
          "Conflict",
          `cluster '${name}' has ${users.length} informer(s) (${users.map((i) => i.name).join(", ")}): delete them first, or add ?cascade=true to delete them with it`,
        );
      }
      const declared = informers.filter((i) => i.source === "config");
      if (declared.length > 0) {
        return fail("Conflict", `informers of cluster '${name}' are declared in INFORMERS (${declared.map((i) => i.name).join(", ")}): remove them there first`);
      }
      for (const informer of informers) unwrap(await this.#remove(informer, informer.source === "internal" ? "internal" : "api"));
      this.#written(this.#registry.deleteCluster(name));
      return ok(null);
    });
  }

  /** Brings the declared clusters and informers in line with `CLUSTERS` and `INFORMERS`: adds, updates, removes. */
  async syncDeclared(informers: string | undefined, clusters?: string): Promise<DeclaredSync> {
    return this.#exclusive(() => syncDeclared(this.#declaring, informers, clusters));
  }

  /**
   * Re-arms every informer whose alarm is missing, and reconnects any that missed a change of its
   * cluster's connection; returns the ones it re-armed (`cluster/name` outside the default cluster).
   */
  async reconcile(): Promise<string[]> {
    // What to ask, under the change queue: the informers, and each cluster's connection (stale
    // tokens re-sealed first, so the new form follows).
    const { informers, connections } = await this.#exclusive(async () => {
      const connections = new Map<string, ClusterConnection>();
      for (const cluster of this.#registry.listClusters()) {
        connections.set(cluster.name, await this.#clusters.resealed(cluster.name, cluster.connection));
      }
      // RBAC informers a failed change left missing (or extra): a no-op when they are in line.
      for (const cluster of [DEFAULT_CLUSTER, ...connections.keys()]) {
        const synced = await syncRbacInformers(this.#declaring, cluster);
        if (!synced.ok) logger.error("keeping a cluster's RBAC informers failed", { cluster, error: synced.error.message });
      }
      return { informers: this.#registry.list(), connections };
    });
    // The calls outside it (review B6(a)): one slow or blocked informer held every admin change and
    // declared sync for as long as it took. Each informer is given its cluster's connection with the
    // re-arm, one call each; the default cluster's connection is the environment's, read at each
    // watch: nothing to give.
    const answers = await eachWithin(
      informers.map((informer) => () => this.#stub(informer).reconcile(connections.get(informer.cluster))),
      { concurrency: INFORMER_CALL_CONCURRENCY, timeoutMs: RECONCILE_CALL_TIMEOUT_MS },
    );
    const rearmed: string[] = [];
    const stale = new Map<string, Set<string>>();
    informers.forEach((informer, i) => {
      const answer = answers[i];
      if (answer?.connectionDiffers) stale.set(informer.cluster, (stale.get(informer.cluster) ?? new Set()).add(informer.name));
      if (!answer?.rearmed) return;
      // Logged here, where the address is at hand, so the line names the cluster as its own field.
      logger.warn("re-armed a stopped informer", informerIdentity(informer));
      rearmed.push(informerObjectName(informer));
    });
    // One a change did not reach (its object was unavailable then) is reconfigured, under the queue,
    // with the registry's spec and connection as they are now: a change or a deletion made since the
    // calls above is not undone. The others are not reconfigured every minute (review B6).
    if (stale.size > 0) {
      await this.#exclusive(async () => {
        for (const [cluster, names] of stale) {
          const current = this.#registry.getCluster(cluster)?.connection;
          if (current) await this.#clusters.reconnect(cluster, current, (informer) => names.has(informer.name));
        }
      });
    }
    // Soon after an upgrade, so lookups of unknown subscriptions stop reaching objects.
    await this.#exclusive(() => this.#backfillSubscriptions());
    return rearmed;
  }

  /**
   * Runs `change` after every change that arrived before it has finished (failed ones included).
   * Without it, a removal awaiting an informer's destroy would let a re-declaration see the informer
   * still registered and skip it, and two identical syncs would both configure every informer.
   */
  #exclusive<T>(change: () => Promise<T>): Promise<T> {
    const run = this.#changes.then(change, change);
    this.#changes = run.catch(() => undefined);
    return run;
  }

  #stub(address: InformerAddress) {
    return informerStub(this.env, address, this.#placement(address.cluster));
  }

  #subscriptionStub(id: string, cluster: string) {
    return subscriptionStub(this.env, id, this.#placement(cluster));
  }

  /**
   * Where `cluster`'s objects live (clusters/placement.ts); the default cluster's from its settings,
   * refused (Misconfigured) when they moved away from where its informers live.
   */
  #placement(cluster: string): Placement {
    if (cluster !== DEFAULT_CLUSTER) return placementOf(this.#registry.getCluster(cluster)?.connection);
    const placement = defaultClusterPlacement(this.env);
    const refusal = defaultJurisdictionRefusal(this.#defaultJurisdiction(placement), placement);
    if (refusal) throw new ApiError("Misconfigured", refusal);
    return placement;
  }

  /**
   * The jurisdiction the default cluster's objects live in, recorded while it has informers (the
   * settings' when first seen with some; forgotten once it has none), so a changed
   * KUBE_API_JURISDICTION is refused rather than followed to empty objects.
   */
  #defaultJurisdiction(placement: Placement): string | undefined {
    // Asked for every default-cluster stub (a reconcile asks once per informer): one-row reads only.
    const recorded = this.#registry.defaultJurisdiction();
    if (!this.#registry.hasInformers(DEFAULT_CLUSTER)) {
      if (recorded !== undefined) this.#written(this.#registry.setDefaultJurisdiction(undefined));
      return undefined;
    }
    if (recorded !== undefined) return recorded;
    const current = placement.jurisdiction ?? "";
    this.#written(this.#registry.setDefaultJurisdiction(current));
    return current;
  }
}
