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
import { errorText, logger, setLogLevel } from "../log.ts";
import { DurableObject } from "cloudflare:workers";
import { InformerRegistry, type InformerSource, type RegisteredInformer } from "../config/informer-registry.ts";
import {
  asAddress,
  type ClusterConnection,
  DEFAULT_CLUSTER,
  defaultConnection,
  describeInformer,
  type InformerAddress,
  informerObjectName,
  publicConnection,
} from "../clusters/cluster.ts";
import { type ClusterHealth, probeCluster } from "../clusters/health.ts";
import { fetchOpenApi, type UpstreamOpenApi } from "../clusters/upstream-openapi.ts";
import { informerStub, subscriptionStub } from "../clusters/stubs.ts";
import { type Jurisdiction, jurisdictionChangeRefusal, type LocationHint, type Placement, placementOf } from "../clusters/placement.ts";
import { parseDeclaredClusters } from "../clusters/cluster-spec.ts";
import { openConnection, resealConnection, sealConnection } from "../clusters/sealed-connection.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { type InformerSpec, parseDeclaredInformers, sameSpec } from "../config/informer-spec.ts";
import { checkEndpointUrl, declaredSubscriptionId, SECRET_PATTERN, sharedSecretBindings, webhookUrlPolicy } from "../delivery/subscription-spec.ts";
import type { Env } from "../env.ts";
import { attemptAsync, fail, ok, type Result, unwrap } from "../errors.ts";
import { Db } from "../sql.ts";
import { backfillSubscriptions, SubscriptionRegistry } from "../delivery/subscription-registry.ts";
import { informerIdentity } from "../log-identity.ts";
import type { InformerStatus } from "./informer-object.ts";

export const FACTORY_NAME = "factory";

/** The registry as the factory hands it to isolates (http/registry-snapshot.ts): never a cluster's connection. */
export interface RegistrySnapshot {
  version: string;
  informers: RegisteredInformer[];
  /** Every cluster's name, the default one included. */
  clusters: string[];
  /** Each cluster's placement (clusters/placement.ts), where it has one. */
  placements: Record<string, Placement>;
}

/** InformerFactory.registry's answer: the snapshot, or only its version when the caller has it. */
export type RegistryAnswer = RegistrySnapshot | { version: string; unchanged: true };

/**
 * Most clusters one deployment holds, `default` included. Every informer and subscription metric
 * carries its cluster, and a scrape reads every informer of every cluster, so clusters must stay a
 * configured, bounded set: a new one beyond this is refused (409), whether PUT or declared.
 */
export const MAX_CLUSTERS = 100;
/** How long a cluster's probed health stands (GET /clusters). */
export const HEALTH_TTL_MS = 15_000;
/** Probes in flight at once. */
const PROBE_CONCURRENCY = 6;
/**
 * Informer objects the factory calls at once when it reconnects or re-arms them all (the minute's
 * cron, a cluster's new connection): one after another, the change queue that admin changes and
 * every isolate's declared sync wait on lasted the sum of every informer's answer (review B6).
 */
const INFORMER_CALL_CONCURRENCY = 6;

/** Runs `tasks` with at most `limit` in flight, answering their results in order. */
async function withConcurrency<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

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

/** A cluster as answers show it: never its token. */
export interface ClusterView {
  name: string;
  server: string;
  /** `environment`: the default cluster (KUBE_API_URL); `config`: CLUSTERS; `api`: PUT /clusters. */
  source: InformerSource | "environment";
  /** Which credentials exist (`token`, `secret:<name>`), never their values. */
  credentials: string[];
  informers: number;
  /** Where its objects live (clusters/placement.ts), when set. */
  locationHint?: LocationHint;
  jurisdiction?: Jurisdiction;
}

export class InformerFactory extends DurableObject<Env> {
  #registry!: InformerRegistry;
  /** Which informer each subscription follows (delivery/subscription-registry.ts), so unknown ids touch no object. */
  #subscriptions!: SubscriptionRegistry;
  /** Recent probe answers by cluster and connection (clusterHealth). Memory only. */
  readonly #health = new Map<string, { until: number; value: Promise<ClusterHealth> }>();
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
    const connection = apiUrl !== undefined ? { ok: true as const, value: { server: apiUrl } } : this.#connectionOf(spec.cluster);
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
    const version = `${this.#epoch}:${this.#writes}`;
    if (since === version) return { version, unchanged: true };
    const clusters = this.#registry.listClusters();
    const placements = Object.fromEntries(clusters.map((c) => [c.name, placementOf(c.connection)]).filter(([, p]) => Object.keys(p as Placement).length > 0));
    return { version, informers: this.#registry.list(), clusters: [DEFAULT_CLUSTER, ...clusters.map((c) => c.name)], placements };
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
    const counts = new Map<string, number>();
    for (const informer of this.#registry.list()) counts.set(informer.cluster, (counts.get(informer.cluster) ?? 0) + 1);
    const view = (name: string, connection: ClusterConnection, source: ClusterView["source"]): ClusterView => ({
      name,
      server: connection.server,
      source,
      credentials: publicConnection(name, connection, this.env).credentials,
      informers: counts.get(name) ?? 0,
      ...placementOf(connection),
    });
    return [
      view(DEFAULT_CLUSTER, defaultConnection(this.env), "environment"),
      ...this.#registry.listClusters().map((c) => view(c.name, c.connection, c.source)),
    ];
  }

  /**
   * Asks each cluster's API server for its version (clusters/health.ts). An answer stands for
   * HEALTH_TTL_MS per connection, so polling `GET /clusters` does not poll every API server, and at
   * most PROBE_CONCURRENCY probes run at once: a Worker invocation holds few connections, and probes
   * queued behind blackholed ones would time out on timers already running.
   */
  async clusterHealth(names: string[]): Promise<Record<string, ClusterHealth>> {
    const now = Date.now();
    for (const [key, entry] of this.#health) if (entry.until <= now) this.#health.delete(key);
    const probes = names.map((name) => {
      const connection = this.#connectionOf(name);
      if (!connection.ok) return { name, run: async (): Promise<ClusterHealth> => ({ reachable: false, error: connection.error.message }) };
      const resolved = connection.value ?? defaultConnection(this.env);
      const key = JSON.stringify([name, resolved]);
      return {
        name,
        run: (): Promise<ClusterHealth> => {
          const cached = this.#health.get(key);
          if (cached) return cached.value;
          const value = openConnection(this.#sealer(), name, resolved).then(
            (opened) => probeCluster(name, opened, this.env),
            (error: unknown): ClusterHealth => ({ reachable: false, error: errorText(error) }),
          );
          this.#health.set(key, { until: Date.now() + HEALTH_TTL_MS, value });
          return value;
        },
      };
    });
    const results = await withConcurrency(probes.map((probe) => probe.run), PROBE_CONCURRENCY);
    return Object.fromEntries(probes.map((probe, i) => [probe.name, results[i]!]));
  }

  /** One OpenAPI document from `cluster`'s API server (clusters/upstream-openapi.ts); `/k8s` caches it. */
  async openApi(cluster: string, path: string, accept: string): Promise<UpstreamOpenApi> {
    const connection = this.#connectionOf(cluster);
    if (!connection.ok) return { ok: false, status: 404, message: connection.error.message };
    const opened = await openConnection(this.#sealer(), cluster, connection.value ?? defaultConnection(this.env));
    return fetchOpenApi(cluster, opened, this.env, path, accept);
  }

  /**
   * Adds or changes a cluster at run time. The default cluster and declared ones change only where
   * they are configured. A changed connection reaches every informer of the cluster; another URL
   * makes them relist (InformerObject.configure).
   */
  async putCluster(name: string, connection: ClusterConnection): Promise<Result<{ created: boolean; cluster: ClusterView }>> {
    return this.#exclusive(async () => {
      const refused = this.#refuseChange(name, "change");
      if (refused) return refused;
      const existing = this.#registry.getCluster(name);
      const full = existing ? undefined : this.#tooManyClusters(name);
      if (full) return fail("Conflict", full);
      const moved = jurisdictionChangeRefusal(name, existing?.connection, placementOf(connection), this.#registry.list(name).length);
      if (moved) return fail("Conflict", moved);
      // Before anything is written: without ENCRYPTION_KEY a token is refused and nothing changes.
      const sealed = await attemptAsync(() => sealConnection(this.#sealer(), name, connection));
      if (!sealed.ok) return sealed;
      this.#written(this.#registry.putCluster(name, sealed.value, "api", Date.now()));
      // Even when the stored connection is unchanged: a retry must reach the informers an earlier
      // attempt did not (configure is a no-op for the ones that have it).
      if (existing) await this.#reconnect(name, sealed.value);
      const cluster = (await this.clusters()).find((c) => c.name === name)!;
      return ok({ created: existing === undefined, cluster });
    });
  }

  /** Removes a run-time cluster; with `cascade`, its informers (and their subscriptions) too. */
  async removeCluster(name: string, cascade: boolean): Promise<Result<null>> {
    return this.#exclusive(async () => {
      if (!this.#registry.getCluster(name) && name !== DEFAULT_CLUSTER) return fail("NotFound", `cluster '${name}' not found`);
      const refused = this.#refuseChange(name, "remove");
      if (refused) return refused;
      const informers = this.#registry.list(name);
      if (informers.length > 0 && !cascade) {
        return fail(
          "Conflict",
          `cluster '${name}' has ${informers.length} informer(s) (${informers.map((i) => i.name).join(", ")}): delete them first, or add ?cascade=true to delete them with it`,
        );
      }
      const declared = informers.filter((i) => i.source === "config");
      if (declared.length > 0) {
        return fail("Conflict", `informers of cluster '${name}' are declared in INFORMERS (${declared.map((i) => i.name).join(", ")}): remove them there first`);
      }
      for (const informer of informers) unwrap(await this.#remove(informer, "api"));
      this.#written(this.#registry.deleteCluster(name));
      return ok(null);
    });
  }

  /** Why a new cluster would be beyond MAX_CLUSTERS (the default one counts); undefined when it is not. */
  #tooManyClusters(name: string): string | undefined {
    if (this.#registry.listClusters().length + 1 < MAX_CLUSTERS) return undefined;
    return `cluster '${name}' would be one too many: a deployment holds at most ${MAX_CLUSTERS} clusters (default included); delete one first`;
  }

  #refuseChange(name: string, verb: "change" | "remove"): Result<never> | undefined {
    if (name === DEFAULT_CLUSTER) {
      return fail("Conflict", `cluster '${DEFAULT_CLUSTER}' is KUBE_API_URL (with KUBE_TOKEN and CF_ACCESS_*): ${verb} it in wrangler.toml and secrets`);
    }
    if (this.#registry.getCluster(name)?.source === "config") {
      return fail("Conflict", `cluster '${name}' is declared in CLUSTERS (wrangler.toml): ${verb} it there`);
    }
    return undefined;
  }

  /** The connection an informer of `cluster` is configured with: none for the default cluster (the environment's). */
  #connectionOf(cluster: string): Result<ClusterConnection | undefined> {
    if (cluster === DEFAULT_CLUSTER) return ok(undefined);
    const registered = this.#registry.getCluster(cluster);
    return registered ? ok(registered.connection) : fail("NotFound", `cluster '${cluster}' not found`);
  }

  /**
   * The cron's cheap occasion to seal a stale token (plain text from an earlier release, or sealed
   * under ENCRYPTION_KEY_PREVIOUS) under the current key; the reconnect that follows hands the new
   * form to every informer, so their copies follow. A token that cannot be re-sealed stays as it is.
   */
  async #resealed(name: string, connection: ClusterConnection): Promise<ClusterConnection> {
    try {
      const resealed = await resealConnection(this.#sealer(), name, connection);
      if (resealed === undefined) return connection;
      this.#registry.setClusterConnection(name, resealed);
      return resealed;
    } catch (error) {
      logger.error("re-encrypting a stored cluster token failed", { cluster: name, cause: "config", error: errorText(error) });
      return connection;
    }
  }

  /** Gives every informer of `cluster` its new connection. */
  async #reconnect(cluster: string, connection: ClusterConnection): Promise<void> {
    const calls = this.#registry.list(cluster).map((informer) => async () => {
      // One unavailable object must not keep the others on the old connection; the cron retries it.
      const configured = await this.#stub(informer)
        .configure(informer.spec, connection)
        .catch((error: unknown) => fail("Internal", errorText(error)));
      if (!configured.ok) logger.error("reconnecting an informer to its cluster failed", { ...informerIdentity(informer), error: configured.error.message });
    });
    await withConcurrency(calls, INFORMER_CALL_CONCURRENCY);
  }

  /** Brings the declared clusters and informers in line with `CLUSTERS` and `INFORMERS`: adds, updates, removes. */
  async syncDeclared(informers: string | undefined, clusters?: string): Promise<DeclaredSync> {
    return this.#exclusive(() => this.#syncDeclared(informers, clusters));
  }

  async #syncDeclared(informers: string | undefined, clustersText: string | undefined): Promise<DeclaredSync> {
    const declaredClusters = parseDeclaredClusters(clustersText, this.env);
    const { specs, errors } = parseDeclaredInformers(informers);
    const result: DeclaredSync = { added: [], updated: [], removed: [], subscriptions: [], clusters: [], errors: [...declaredClusters.errors, ...errors] };
    for (const { name, connection } of declaredClusters.clusters) {
      const existing = this.#registry.getCluster(name);
      if (existing && JSON.stringify(existing.connection) === JSON.stringify(connection) && existing.source === "config") continue;
      const full = existing ? undefined : this.#tooManyClusters(name);
      if (full) {
        result.errors.push(`CLUSTERS: ${full}`);
        continue;
      }
      // The cluster keeps its stored connection and placement: its objects stay reachable.
      const moved = jurisdictionChangeRefusal(name, existing?.connection, placementOf(connection), this.#registry.list(name).length);
      if (moved) {
        result.errors.push(`CLUSTERS.${name}: ${moved}`);
        continue;
      }
      this.#written(this.#registry.putCluster(name, connection, "config", Date.now()));
      result.clusters.push(`${name} ${existing ? "updated" : "added"}`);
      if (existing) await this.#reconnect(name, connection);
    }
    for (const spec of specs) {
      const existing = this.#registry.get(spec);
      if (existing && sameSpec(existing.spec, spec) && existing.source === "config") continue;
      const connection = this.#connectionOf(spec.cluster);
      const configured = connection.ok ? await this.#stub(spec).configure(spec, connection.value) : connection;
      if (!configured.ok) {
        result.errors.push(`${informerObjectName(spec)}: ${configured.error.message}`);
        continue;
      }
      this.#written(this.#registry.put(spec, "config", Date.now()));
      (existing ? result.updated : result.added).push(informerObjectName(spec));
    }
    const shared = sharedSecretBindings(specs);
    for (const spec of specs) if (this.#registry.get(spec)) await this.#syncDeclaredSubscriptions(spec, result, shared);
    // A broken INFORMERS must not delete data: remove undeclared informers only when it parsed cleanly.
    const declared = new Set(specs.map(informerObjectName));
    for (const informer of errors.length > 0 ? [] : this.#registry.list()) {
      if (informer.source === "config" && !declared.has(informerObjectName(informer))) {
        unwrap(await this.#remove(informer, "config"));
        result.removed.push(informerObjectName(informer));
      }
    }
    // Likewise for clusters, and never one that informers still use.
    const declaredNames = new Set(declaredClusters.clusters.map((c) => c.name));
    for (const cluster of declaredClusters.errors.length > 0 ? [] : this.#registry.listClusters()) {
      if (cluster.source !== "config" || declaredNames.has(cluster.name)) continue;
      const users = this.#registry.list(cluster.name);
      if (users.length > 0) {
        result.errors.push(`CLUSTERS: cluster '${cluster.name}' was removed but informers use it (${users.map((i) => i.name).join(", ")}): it stays until they are deleted`);
        continue;
      }
      this.#written(this.#registry.deleteCluster(cluster.name));
      result.clusters.push(`${cluster.name} removed`);
    }
    for (const error of result.errors) {
      logger.error(error.startsWith("CLUSTERS") ? "CLUSTERS entry refused" : "INFORMERS entry refused", { cause: "config", error });
    }
    return result;
  }

  /**
   * Brings an informer's declared subscriptions in line with its spec: creates or updates each
   * (secrets from the Worker secrets they name), and deletes declared ones no longer listed.
   * Subscriptions created through the API are left alone.
   */
  async #syncDeclaredSubscriptions(spec: InformerSpec, result: DeclaredSync, sharedBindings: Map<string, string[]>): Promise<void> {
    const declared = new Set<string>();
    let complete = true;
    for (const subscription of spec.subscriptions) {
      const id = declaredSubscriptionId(spec, subscription.name);
      declared.add(id);
      const where = `${informerObjectName(spec)}.subscriptions.${subscription.name}`;
      const secret = (this.env as unknown as Record<string, unknown>)[subscription.secretBinding];
      try {
        const sharers = sharedBindings.get(subscription.secretBinding);
        if (sharers) {
          throw new Error(
            `the Worker secret '${subscription.secretBinding}' is the secretBinding of ${sharers.join(" and ")}: ` +
              "give each declared subscription its own secret, so a receiver can tell their deliveries apart by their signatures",
          );
        }
        if (typeof secret !== "string" || !SECRET_PATTERN.test(secret)) {
          throw new Error(
            `the Worker secret '${subscription.secretBinding}' must hold a whsec_ secret (wrangler secret put ${subscription.secretBinding})`,
          );
        }
        checkEndpointUrl(subscription.url, webhookUrlPolicy(this.env));
        const { name: _, secretBinding: __, ...subscriptionSpec } = subscription;
        this.#subscriptions.put(id, spec);
        const outcome = unwrap(await this.#subscriptionStub(id, spec.cluster).declare(id, { cluster: spec.cluster, name: spec.name }, subscriptionSpec, secret));
        if (outcome !== "unchanged") result.subscriptions.push(`${where} ${outcome}`);
      } catch (error) {
        complete = false;
        result.errors.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    // As with informers: never delete on a declaration that did not fully apply.
    if (!complete) return;
    const ids = await this.#stub(spec).subscriberIds();
    for (const id of ids.ok ? ids.value : []) {
      if (declared.has(id) || !id.startsWith(declaredSubscriptionId(spec, ""))) continue;
      if ((await this.#subscriptionStub(id, spec.cluster).destroy(true)) === "deleted") result.subscriptions.push(`${id} removed`);
      this.#subscriptions.delete(id);
    }
  }

  /** Re-arms every informer whose alarm is missing; returns the ones it re-armed (`cluster/name` outside the default cluster). */
  async reconcile(): Promise<string[]> {
    // First the connections, under the change queue so no informer deleted meanwhile is recreated:
    // one a change did not reach (its object was unavailable then) gets it within a minute.
    await this.#exclusive(async () => {
      for (const cluster of this.#registry.listClusters()) await this.#reconnect(cluster.name, await this.#resealed(cluster.name, cluster.connection));
    });
    const informers = this.#registry.list();
    const restarted = await withConcurrency(
      informers.map((informer) => () => this.#stub(informer).ensureRunning()),
      INFORMER_CALL_CONCURRENCY,
    );
    const rearmed: string[] = [];
    informers.forEach((informer, i) => {
      if (!restarted[i]) return;
      // Logged here, where the address is at hand, so the line names the cluster as its own field.
      logger.warn("re-armed a stopped informer", informerIdentity(informer));
      rearmed.push(informerObjectName(informer));
    });
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

  /** Seals and opens run-time cluster tokens (clusters/sealed-connection.ts). */
  #sealer() {
    return sealerFor(this.env);
  }

  #stub(address: InformerAddress) {
    return informerStub(this.env, address, this.#placement(address.cluster));
  }

  #subscriptionStub(id: string, cluster: string) {
    return subscriptionStub(this.env, id, this.#placement(cluster));
  }

  /** Where `cluster`'s objects live (clusters/placement.ts); the default cluster has no placement. */
  #placement(cluster: string): Placement {
    return placementOf(this.#registry.getCluster(cluster)?.connection);
  }
}
