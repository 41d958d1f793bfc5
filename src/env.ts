/** The Worker's bindings and variables (wrangler.toml, API.md "Configuration"). */
import type { InformerFactory } from "./objects/informer-factory.ts";
import type { InformerObject } from "./objects/informer-object.ts";
import type { SubscriptionObject } from "./objects/subscription-object.ts";

export interface Env {
  INFORMER: DurableObjectNamespace<InformerObject>;
  FACTORY: DurableObjectNamespace<InformerFactory>;
  SUBSCRIPTION: DurableObjectNamespace<SubscriptionObject>;
  /** Base URL of the Kubernetes API server: the cluster named `default`. */
  KUBE_API_URL?: string;
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
  /** Secret: bearer token for mutating endpoints. */
  ADMIN_TOKEN?: string;
  /** Secret: when set, read endpoints need it (or ADMIN_TOKEN). */
  READ_TOKEN?: string;
  /** "true" lets mutating endpoints through without ADMIN_TOKEN: local development only. */
  ALLOW_UNAUTHENTICATED?: string;
  /** Set by `npm start` (scripts/dev.mjs): /healthz echoes it, so the script knows it polls the Worker it started. */
  DEV_RUN_ID?: string;
  /** Lowest log level written: debug, info (default), warn or error (src/log.ts). */
  LOG_LEVEL?: string;
}
