/**
 * Clusters (issue 12): one deployment mirrors many API servers. A cluster is a name (a DNS label)
 * with an API server URL and its credentials; every informer belongs to one.
 *
 * Guarantees:
 * - The cluster named `default` is `KUBE_API_URL` with `KUBE_TOKEN` and `CF_ACCESS_*`, read from the
 *   environment each time a connection is made, exactly as before clusters existed; `/informers/…`,
 *   `/k8s/…` and `INFORMERS` entries without a `cluster` address it.
 * - An informer's Durable Object is named by `informerObjectName`: the informer's name alone in the
 *   default cluster (so objects created before clusters keep their state), `<cluster>/<name>`
 *   otherwise. Both parts are DNS labels, so no two addresses share an object.
 * - Credentials are either named Worker secrets (declared clusters: resolved when a connection is
 *   made, so a rotated secret applies at the next watch) or a token given at run time, which is
 *   stored write-only: `publicConnection` is the only view of a connection that leaves the Worker.
 */
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { type EgressSettings, egressRefusal, egressRule, httpsRefusal } from "../net/egress.ts";
import type { Jurisdiction, LocationHint } from "./placement.ts";
import { defaultClusterPlacement } from "./placement-settings.ts";

export const DEFAULT_CLUSTER = "default";

/** What a cluster name is, as a 400 states it. */
export const CLUSTER_NAME_RULE = "a lower-case DNS label of 1-63 characters (a-z, 0-9 and '-', starting and ending with a letter or digit)";
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isClusterName(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** Where an informer lives: its cluster and its name, unique within the cluster. */
export interface InformerAddress {
  cluster: string;
  name: string;
}

/**
 * An address from an RPC caller. During a gradual deployment a Worker isolate of the previous
 * release may still call with a bare informer name (the default cluster's, as everything was then).
 */
export function asAddress(address: InformerAddress | string): InformerAddress {
  return typeof address === "string" ? { cluster: DEFAULT_CLUSTER, name: address } : address;
}

export function informerObjectName(address: InformerAddress): string {
  return address.cluster === DEFAULT_CLUSTER ? address.name : `${address.cluster}/${address.name}`;
}

/** `informer 'pods'`, or `informer 'pods' in cluster 'prod'`: how messages name an informer. */
export function describeInformer(address: InformerAddress): string {
  return address.cluster === DEFAULT_CLUSTER ? `informer '${address.name}'` : `informer '${address.name}' in cluster '${address.cluster}'`;
}

/** How to reach an API server. Secrets are named (declared) or given (run time), never both. */
export interface ClusterConnection {
  server: string;
  /** A bearer token given through `PUT /clusters/{name}`: write-only. */
  token?: string;
  /** Names of Worker secrets holding the token and a Cloudflare Access service token. */
  tokenSecret?: string;
  accessClientIdSecret?: string;
  accessClientSecretSecret?: string;
  /** Where the cluster's objects live (placement.ts); not a credential, so answers show it. */
  locationHint?: LocationHint;
  jurisdiction?: Jurisdiction;
  /** Who may read what (issue 31): absent is `scopes`. Not a credential, so answers show it. */
  authorization?: ClusterAuthorization;
}

/**
 * How reads of a cluster are authorized: `scopes` (the credential's cluster and resource scopes,
 * the default) or `rbac` (also the member cluster's own RBAC, mirrored by internal informers:
 * objects/factory-rbac-informers.ts, which decides every read of it: http/read-authorization.ts).
 */
export const AUTHORIZATION_MODES = ["scopes", "rbac"] as const;
export type ClusterAuthorization = (typeof AUTHORIZATION_MODES)[number];

export function authorizationOf(connection: Pick<ClusterConnection, "authorization"> | undefined): ClusterAuthorization {
  return connection?.authorization ?? "scopes";
}

/**
 * The default cluster's `authorization`: `KUBE_API_AUTHORIZATION` (unset or empty: `scopes`). Any
 * other value fails closed, naming the setting (a typo must not leave a cluster readable by scopes
 * that its operator meant RBAC to guard).
 */
export function defaultClusterAuthorization(env: Pick<Env, "KUBE_API_AUTHORIZATION">): ClusterAuthorization {
  const value = env.KUBE_API_AUTHORIZATION;
  if (value === undefined || value === "") return "scopes";
  if ((AUTHORIZATION_MODES as readonly string[]).includes(value)) return value as ClusterAuthorization;
  throw new ApiError("Misconfigured", `KUBE_API_AUTHORIZATION must be one of ${AUTHORIZATION_MODES.join(", ")}, not '${value}': set it in wrangler.toml [vars], or remove it`);
}

/** The default cluster, as the environment describes it (its placement: placement-settings.ts). */
export function defaultConnection(
  env: Pick<Env, "KUBE_API_URL" | "KUBE_API_LOCATION_HINT" | "KUBE_API_JURISDICTION" | "FACTORY_JURISDICTION" | "KUBE_API_AUTHORIZATION">,
): ClusterConnection {
  const authorization = defaultClusterAuthorization(env);
  return {
    server: env.KUBE_API_URL ?? "",
    tokenSecret: "KUBE_TOKEN",
    accessClientIdSecret: "CF_ACCESS_CLIENT_ID",
    accessClientSecretSecret: "CF_ACCESS_CLIENT_SECRET",
    ...defaultClusterPlacement(env),
    ...(authorization === "rbac" ? { authorization } : {}),
  };
}

/**
 * Why the Worker may not connect to the API server at `server`, or undefined when it may: https
 * (plain http carries the bearer token in clear) unless loopback, and a host the egress rules admit
 * (net/egress.ts: `CLUSTER_ALLOWED_HOSTS`, required in a deployment unless `ALLOW_ANY_EGRESS`; never
 * the Worker's own host). Checked when a cluster is accepted (`requestHost`: the Host of the request
 * that submits it) and again before every connection.
 */
export function clusterServerRefusal(server: string, env: EgressSettings, requestHost?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return `'${server}' is not an absolute URL`;
  }
  return httpsRefusal(url) ?? egressRefusal(url, egressRule(env, "CLUSTER_ALLOWED_HOSTS", requestHost));
}

/** A connection made concrete: the URL and the headers of every request to the API server. */
export interface ResolvedConnection {
  apiUrl: string;
  token?: string;
  headers: Record<string, string>;
}

/**
 * Resolves named secrets from the Worker's environment. A missing URL or secret, or a server the
 * egress rules refuse (clusterServerRefusal, read from `env` now: a stored cluster is held to the
 * current rules), is a configuration error, thrown before anything is sent.
 */
export function resolveConnection(cluster: string, connection: ClusterConnection, env: object): ResolvedConnection {
  const serverName = cluster === DEFAULT_CLUSTER ? "KUBE_API_URL" : `cluster '${cluster}'`;
  if (!connection.server) {
    throw new Error(
      cluster === DEFAULT_CLUSTER
        ? "KUBE_API_URL is not set: configure the API server's URL in wrangler.toml [vars]"
        : `cluster '${cluster}' has no API server URL`,
    );
  }
  const refusal = clusterServerRefusal(connection.server, env as EgressSettings);
  if (refusal !== undefined) throw new Error(`${serverName} is refused, nothing was sent to it: its server ${refusal}`);
  const secret = (name: string | undefined, required: boolean): string | undefined => {
    if (name === undefined) return undefined;
    const value = (env as Record<string, unknown>)[name];
    if (typeof value === "string" && value !== "") return value;
    if (required) throw new Error(`cluster '${cluster}' names the Worker secret '${name}', which is not set (wrangler secret put ${name})`);
    return undefined;
  };
  // The default cluster's secrets are optional, as they always were; a declared cluster's are not.
  const required = cluster !== DEFAULT_CLUSTER;
  const token = connection.token ?? secret(connection.tokenSecret, required);
  const accessId = secret(connection.accessClientIdSecret, required);
  const accessSecret = secret(connection.accessClientSecretSecret, required);
  const headers: Record<string, string> = {};
  if (accessId && accessSecret) {
    headers["cf-access-client-id"] = accessId;
    headers["cf-access-client-secret"] = accessSecret;
  }
  return { apiUrl: connection.server, ...(token ? { token } : {}), headers };
}

/**
 * A connection as answers show it: the URL, and which credentials it has, never their values. A
 * named secret is `secret:NAME`, or `secret:NAME (not set)` when the Worker lacks it (a declared
 * cluster cannot connect then); the default cluster's secrets are optional, so unset ones are left out.
 */
export function publicConnection(cluster: string, connection: ClusterConnection, env: object): { server: string; credentials: string[] } {
  const credentials: string[] = [];
  if (connection.token !== undefined) credentials.push("token");
  for (const name of [connection.tokenSecret, connection.accessClientIdSecret, connection.accessClientSecretSecret]) {
    if (name === undefined) continue;
    const value = (env as Record<string, unknown>)[name];
    if (typeof value === "string" && value !== "") credentials.push(`secret:${name}`);
    else if (cluster !== DEFAULT_CLUSTER) credentials.push(`secret:${name} (not set)`);
  }
  return { server: connection.server, credentials };
}
