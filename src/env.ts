/**
 * The Worker's bindings and variables (wrangler.toml, API.md "Configuration").
 *
 * Every layer reads settings from `Env`, so this file imports nothing from src/ (docs/architecture.md
 * "Layers"). The Durable Object classes behind the namespaces are named by src/index.ts, the
 * entry that exports them, which fills in `DurableObjectClasses` (declaration merging): the stubs
 * stay typed without env.ts importing the object shells above it.
 */
export interface DurableObjectClasses {}

export interface Env {
  INFORMER: DurableObjectNamespace<DurableObjectClasses["INFORMER"]>;
  FACTORY: DurableObjectNamespace<DurableObjectClasses["FACTORY"]>;
  SUBSCRIPTION: DurableObjectNamespace<DurableObjectClasses["SUBSCRIPTION"]>;
  /**
   * Workers Rate Limiting (wrangler.toml `[[ratelimits]]`): refused credentials per client address
   * and period, past which the client is answered 429 (auth/failed-credentials.ts). Unset: no limit here.
   */
  FAILED_CREDENTIALS?: RateLimit;
  /** Watch relays: `/k8s` watchers served off their informer's thread (objects/watch-relay-object.ts). */
  RELAY: DurableObjectNamespace<DurableObjectClasses["RELAY"]>;
  /**
   * Watch relays per informer, 0–64 (default 4): a `/k8s` watch goes to one of them, at random;
   * 0 serves watchers in the informer's own object (k8s/watch-relay.ts).
   */
  WATCH_RELAYS?: string;
  /** `/k8s` watches one credential may hold open per informer (across its relays), 1–1,000 (default 100: k8s/watcher-caps.ts). */
  WATCHERS_PER_CREDENTIAL?: string;
  /**
   * The running Worker version's id, tag and upload time (wrangler.toml `[version_metadata]`): a slice
   * started under another version was ended by a deploy, not killed (objects/slice-kills.ts).
   */
  CF_VERSION_METADATA?: WorkerVersionMetadata;
  /** Base URL of the Kubernetes API server: the cluster named `default`. */
  KUBE_API_URL?: string;
  /**
   * Where the default cluster's objects live (clusters/placement-settings.ts): a Cloudflare location
   * hint (`weur`, …) and jurisdiction (`eu`, …). Unset: none. The jurisdiction must be set before the
   * default cluster's first informer: changing it while it has informers is refused (Misconfigured).
   */
  KUBE_API_LOCATION_HINT?: string;
  KUBE_API_JURISDICTION?: string;
  /** How the default cluster's reads are authorized: `scopes` (unset) or `rbac` (its own RBAC: clusters/cluster.ts). */
  KUBE_API_AUTHORIZATION?: string;
  /** The factory's jurisdiction (the registry): set before first use; changing it starts an empty registry. */
  FACTORY_JURISDICTION?: string;
  /** Secret: bearer token for the API server. */
  KUBE_TOKEN?: string;
  /** Secrets: a Cloudflare Access service token, for an API server behind Cloudflare Tunnel + Access. */
  CF_ACCESS_CLIENT_ID?: string;
  CF_ACCESS_CLIENT_SECRET?: string;
  /**
   * JSON object of clusters besides the default one: name → `{server, tokenSecret?,
   * accessClientIdSecret?, accessClientSecretSecret?}`, secrets named, never inline.
   */
  CLUSTERS?: string;
  /** JSON array of informer specs. */
  INFORMERS?: string;
  /** Secret: shorthand for an admin credential on every cluster (at least 32 characters). */
  ADMIN_TOKEN?: string;
  /** Secret: shorthand for a read credential on every cluster (at least 32 characters). */
  READ_TOKEN?: string;
  /**
   * Secret: JSON array of named, scoped credentials (src/auth/): `{name, sha256 | identity, role:
   * "read" | "admin", clusters: ["*"] | [names]}`.
   */
  TOKENS?: string;
  /** Cloudflare Access: the team domain (`myteam.cloudflareaccess.com`) whose keys sign `Cf-Access-Jwt-Assertion`. */
  ACCESS_TEAM_DOMAIN?: string;
  /** Cloudflare Access: the application's audience tag, the JWT's `aud`. */
  ACCESS_AUD?: string;
  /**
   * Cloudflare Access: comma-separated host names the Access application protects; a JWT is
   * accepted only on a request addressed to one of them (required with ACCESS_*: auth/credentials.ts).
   */
  ACCESS_HOSTNAMES?: string;
  /**
   * "true": local development. Anonymous requests are served where no credential of their role is
   * configured, but only when their Host is loopback (DNS rebinding).
   */
  ALLOW_UNAUTHENTICATED?: string;
  /** Comma-separated host suffixes that cluster servers must match (unset: none in a deployment, net/egress.ts). */
  CLUSTER_ALLOWED_HOSTS?: string;
  /** Comma-separated host suffixes that webhook receiver URLs must match (unset: none in a deployment, net/egress.ts). */
  WEBHOOK_ALLOWED_HOSTS?: string;
  /**
   * Comma-separated names of the queue producer bindings (wrangler.toml `[[queues.producers]]`) that
   * subscriptions may send to instead of a URL (delivery/queue-target.ts). Unset: none.
   */
  WEBHOOK_QUEUES?: string;
  /** "true": an unset allow-list above admits any host name in a deployment too (net/egress.ts). */
  ALLOW_ANY_EGRESS?: string;
  /** Secret: the key that encrypts cluster tokens and webhook secrets stored in Durable Object SQLite. */
  ENCRYPTION_KEY?: string;
  /** Secret: the previous ENCRYPTION_KEY while rows are re-encrypted with the new one (rotation). */
  ENCRYPTION_KEY_PREVIOUS?: string;
  /** Set by `npm start` (scripts/dev.mjs): /healthz echoes it, so the script knows it polls the Worker it started. */
  DEV_RUN_ID?: string;
  /** Seconds a /metrics or status-page snapshot is served before another is collected: 0–300, default 15 (src/metrics/snapshot-cache.ts). */
  METRICS_SNAPSHOT_SECONDS?: string;
  /**
   * The platform's subrequests per invocation, as wrangler.toml's `[limits] subrequests` sets it
   * (the Worker cannot read its limits); unset: the platform's default, 10,000. Alarm slices end at
   * 80 % of it (net/subrequest-budget.ts).
   */
  SUBREQUESTS_PER_INVOCATION?: string;
  /**
   * Whole decimal megabytes of an informer's database past which its event log's retention shrinks,
   * 100–10,000 (the platform's 10 GB); unset: 7,000 (cache/storage-ceiling.ts).
   */
  STORAGE_CEILING_MB?: string;
  /** Lowest log level written: debug, info (default), warn or error (src/log.ts). */
  LOG_LEVEL?: string;
}
