/**
 * The factory's clusters (objects/informer-factory.ts): their views, their health, their OpenAPI
 * documents, and the rules for adding, changing and removing them.
 *
 * Guarantees:
 * - A cluster's token never leaves: views show which credentials exist, never their values.
 * - At most MAX_CLUSTERS clusters, the default one included (bounded metric cardinality); a cluster
 *   with informers keeps its jurisdiction (its objects cannot move).
 * - The default cluster and declared ones change only where they are configured (Conflict).
 * - A probe's answer stands HEALTH_TTL_MS per connection, and at most PROBE_CONCURRENCY run at once.
 * - A cluster's `/version` (for `/k8s/version`) is read at most once per VERSION_TTL_MS per
 *   connection while it answers (once per HEALTH_TTL_MS while it does not), one read at a time; the
 *   last answer stands while the cluster is unreachable. Memory only.
 * - A new connection reaches every informer of the cluster, INFORMER_CALL_CONCURRENCY at a time;
 *   one unavailable object does not keep the others on the old connection (the cron retries it).
 */
import { authorizationOf, type ClusterAuthorization, type ClusterConnection, DEFAULT_CLUSTER, defaultConnection, type InformerAddress, publicConnection } from "../clusters/cluster.ts";
import { type ClusterHealth, probeCluster, readVersion, type VersionInfo } from "../clusters/health.ts";
import { type Jurisdiction, jurisdictionChangeRefusal, type LocationHint, placementOf } from "../clusters/placement.ts";
import { openConnection, resealConnection, sealConnection } from "../clusters/sealed-connection.ts";
import type { informerStub } from "../clusters/stubs.ts";
import { fetchOpenApi, type UpstreamOpenApi } from "../clusters/upstream-openapi.ts";
import type { InformerRegistry, InformerSource, RegisteredInformer } from "../config/informer-registry.ts";
import type { Env } from "../env.ts";
import { attemptAsync, fail, ok, type Result } from "../errors.ts";
import { informerIdentity } from "../log-identity.ts";
import { errorText, logger } from "../log.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { withConcurrency } from "./fan-out.ts";
import { rbacNameConflict } from "./rbac-reserved-names.ts";

/**
 * Most clusters one deployment holds, `default` included. Every informer and subscription metric
 * carries its cluster, and a scrape reads every informer of every cluster, so clusters must stay a
 * configured, bounded set: a new one beyond this is refused (409), whether PUT or declared.
 */
export const MAX_CLUSTERS = 100;
/** How long a cluster's probed health stands (GET /clusters). */
export const HEALTH_TTL_MS = 15_000;
/**
 * How long a cluster's `/version` stands for `/k8s/version`: an upgrade of the cluster shows within
 * this (Argo CD and kubectl read it per sync or per run, not per request).
 */
export const VERSION_TTL_MS = 600_000;
/** Probes in flight at once. */
const PROBE_CONCURRENCY = 6;
/**
 * Informer objects the factory calls at once when it reconnects or re-arms them all (the minute's
 * cron, a cluster's new connection): one after another, the change queue that admin changes and
 * every isolate's declared sync wait on lasted the sum of every informer's answer (review B6).
 */
export const INFORMER_CALL_CONCURRENCY = 6;

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
  /** How its reads are authorized (clusters/cluster.ts); `scopes` unless set. */
  authorization: ClusterAuthorization;
}

/** What the clusters' code needs of the factory. */
export interface FactoryContext {
  readonly env: Env;
  readonly registry: InformerRegistry;
  /** Counts a registry write (the version isolates compare); passes its result through. */
  written<T>(result: T): T;
  informer(address: InformerAddress): ReturnType<typeof informerStub>;
}


export class FactoryClusters {
  readonly #factory: FactoryContext;
  /** Recent probe answers by cluster and connection (health). Memory only. */
  readonly #health = new Map<string, { until: number; value: Promise<ClusterHealth> }>();
  /** `/version` answers by cluster and connection: the read in force, and the last one that answered. */
  readonly #versions = new Map<string, { until: number; value: Promise<VersionInfo | undefined>; known?: VersionInfo }>();

  constructor(factory: FactoryContext) {
    this.#factory = factory;
  }

  /** Every cluster, the default one first. */
  views(): ClusterView[] {
    const { env, registry } = this.#factory;
    const counts = new Map<string, number>();
    for (const informer of registry.list()) counts.set(informer.cluster, (counts.get(informer.cluster) ?? 0) + 1);
    const view = (name: string, connection: ClusterConnection, source: ClusterView["source"]): ClusterView => ({
      name,
      server: connection.server,
      source,
      credentials: publicConnection(name, connection, env).credentials,
      informers: counts.get(name) ?? 0,
      ...placementOf(connection),
      authorization: authorizationOf(connection),
    });
    return [view(DEFAULT_CLUSTER, defaultConnection(env), "environment"), ...registry.listClusters().map((c) => view(c.name, c.connection, c.source))];
  }

  /**
   * Asks each cluster's API server for its version (clusters/health.ts). An answer stands for
   * HEALTH_TTL_MS per connection, so polling `GET /clusters` does not poll every API server, and at
   * most PROBE_CONCURRENCY probes run at once: a Worker invocation holds few connections, and probes
   * queued behind blackholed ones would time out on timers already running.
   */
  async health(names: string[]): Promise<Record<string, ClusterHealth>> {
    const now = Date.now();
    for (const [key, entry] of this.#health) if (entry.until <= now) this.#health.delete(key);
    const probes = names.map((name) => {
      const connection = this.connectionOf(name);
      if (!connection.ok) return { name, run: async (): Promise<ClusterHealth> => ({ reachable: false, error: connection.error.message }) };
      const resolved = connection.value ?? defaultConnection(this.#factory.env);
      const key = JSON.stringify([name, resolved]);
      return {
        name,
        run: (): Promise<ClusterHealth> => {
          const cached = this.#health.get(key);
          if (cached) return cached.value;
          const value = openConnection(this.#sealer(), name, resolved).then(
            (opened) => probeCluster(name, opened, this.#factory.env),
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

  /**
   * `cluster`'s API server's `/version`, or undefined when it never answered one (the caller says
   * so). Kept VERSION_TTL_MS per connection, a failed read HEALTH_TTL_MS; concurrent callers share
   * one read; a failed read answers the last version the connection gave, if any.
   */
  async serverVersion(cluster: string): Promise<VersionInfo | undefined> {
    const connection = this.connectionOf(cluster);
    if (!connection.ok) return undefined;
    const resolved = connection.value ?? defaultConnection(this.#factory.env);
    const key = JSON.stringify([cluster, resolved]);
    const now = Date.now();
    for (const [k, entry] of this.#versions) if (entry.until <= now && k !== key) this.#versions.delete(k);
    const cached = this.#versions.get(key);
    if (cached && cached.until > now) return cached.value;
    const entry: { until: number; value: Promise<VersionInfo | undefined>; known?: VersionInfo } = {
      until: now + VERSION_TTL_MS,
      value: Promise.resolve(undefined),
      ...(cached?.known ? { known: cached.known } : {}),
    };
    entry.value = openConnection(this.#sealer(), cluster, resolved)
      .then((opened) => readVersion(cluster, opened, this.#factory.env))
      .catch(() => ({ reachable: false }) as { info?: VersionInfo })
      .then((read) => {
        if (read.info) return (entry.known = read.info);
        entry.until = Date.now() + HEALTH_TTL_MS;
        return entry.known;
      });
    this.#versions.set(key, entry);
    return entry.value;
  }

  /** One OpenAPI document from `cluster`'s API server (clusters/upstream-openapi.ts), its body unread; `/k8s` keeps it. */
  async openApi(cluster: string, path: string, accept: string): Promise<UpstreamOpenApi> {
    const connection = this.connectionOf(cluster);
    if (!connection.ok) return { ok: false, status: 404, message: connection.error.message };
    const opened = await openConnection(this.#sealer(), cluster, connection.value ?? defaultConnection(this.#factory.env));
    return fetchOpenApi(cluster, opened, this.#factory.env, path, accept);
  }

  /**
   * Adds or changes a run-time cluster (the caller serializes registry changes). A changed
   * connection reaches every informer of the cluster; another URL makes them relist
   * (InformerObject.configure).
   */
  async put(name: string, connection: ClusterConnection): Promise<Result<{ created: boolean; cluster: ClusterView }>> {
    const { registry } = this.#factory;
    const refused = this.refuseChange(name, "change");
    if (refused) return refused;
    const existing = registry.getCluster(name);
    const full = existing ? undefined : this.tooManyClusters(name);
    if (full) return fail("Conflict", full);
    const moved = jurisdictionChangeRefusal(name, existing?.connection, placementOf(connection), registry.list(name).length);
    if (moved) return fail("Conflict", moved);
    const reserved = authorizationOf(connection) === "rbac" ? rbacNameConflict(registry, name) : undefined;
    if (reserved) return reserved;
    // Before anything is written: without ENCRYPTION_KEY a token is refused and nothing changes.
    const sealed = await attemptAsync(() => sealConnection(this.#sealer(), name, connection));
    if (!sealed.ok) return sealed;
    this.#factory.written(registry.putCluster(name, sealed.value, "api", Date.now()));
    // Even when the stored connection is unchanged: a retry must reach the informers an earlier
    // attempt did not (configure is a no-op for the ones that have it).
    if (existing) await this.reconnect(name, sealed.value);
    const cluster = this.views().find((c) => c.name === name)!;
    return ok({ created: existing === undefined, cluster });
  }

  /** Why a new cluster would be beyond MAX_CLUSTERS (the default one counts); undefined when it is not. */
  tooManyClusters(name: string): string | undefined {
    if (this.#factory.registry.listClusters().length + 1 < MAX_CLUSTERS) return undefined;
    return `cluster '${name}' would be one too many: a deployment holds at most ${MAX_CLUSTERS} clusters (default included); delete one first`;
  }

  /** Why `name` may not be changed or removed through the API; undefined when it may. */
  refuseChange(name: string, verb: "change" | "remove"): Result<never> | undefined {
    if (name === DEFAULT_CLUSTER) {
      return fail("Conflict", `cluster '${DEFAULT_CLUSTER}' is KUBE_API_URL (with KUBE_TOKEN and CF_ACCESS_*): ${verb} it in wrangler.toml and secrets`);
    }
    if (this.#factory.registry.getCluster(name)?.source === "config") {
      return fail("Conflict", `cluster '${name}' is declared in CLUSTERS (wrangler.toml): ${verb} it there`);
    }
    return undefined;
  }

  /** The connection an informer of `cluster` is configured with: none for the default cluster (the environment's). */
  connectionOf(cluster: string): Result<ClusterConnection | undefined> {
    if (cluster === DEFAULT_CLUSTER) return ok(undefined);
    const registered = this.#factory.registry.getCluster(cluster);
    return registered ? ok(registered.connection) : fail("NotFound", `cluster '${cluster}' not found`);
  }

  /**
   * The cron's cheap occasion to seal a stale token (plain text from an earlier release, or sealed
   * under ENCRYPTION_KEY_PREVIOUS) under the current key; the reconnect that follows hands the new
   * form to every informer, so their copies follow. A token that cannot be re-sealed stays as it is.
   */
  async resealed(name: string, connection: ClusterConnection): Promise<ClusterConnection> {
    try {
      const resealed = await resealConnection(this.#sealer(), name, connection);
      if (resealed === undefined) return connection;
      this.#factory.registry.setClusterConnection(name, resealed);
      return resealed;
    } catch (error) {
      logger.error("re-encrypting a stored cluster token failed", { cluster: name, cause: "config", error: errorText(error) });
      return connection;
    }
  }

  /** Gives every informer of `cluster` (or only those `only` picks) its new connection. */
  async reconnect(cluster: string, connection: ClusterConnection, only: (informer: RegisteredInformer) => boolean = () => true): Promise<void> {
    const calls = this.#factory.registry.list(cluster).filter(only).map((informer) => async () => {
      // One unavailable object must not keep the others on the old connection; the cron retries it.
      const configured = await this.#factory
        .informer(informer)
        .configure(informer.spec, connection)
        .catch((error: unknown) => fail("Internal", errorText(error)));
      if (!configured.ok) logger.error("reconnecting an informer to its cluster failed", { ...informerIdentity(informer), error: configured.error.message });
    });
    await withConcurrency(calls, INFORMER_CALL_CONCURRENCY);
  }

  /** Seals and opens run-time cluster tokens (clusters/sealed-connection.ts). */
  #sealer() {
    return sealerFor(this.#factory.env);
  }
}
