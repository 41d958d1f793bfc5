/**
 * Access for the HTTP API (API.md "Access"; the rules are src/auth/): every route but `/healthz`
 * authenticates its caller once per request (`principalOf`) and checks the role it needs on the
 * cluster it addresses (`requireRead`, `requireAdmin`, `permit`); routes that span clusters
 * (`/search`, `GET /clusters`, `/metrics`, the status page) show only the clusters the caller may
 * read (`readableClusters`). Every mutation is recorded in one audit line naming the credential.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ACCESS_JWT_HEADER } from "../auth/access-jwt.ts";
import { credentialConfig, type Role } from "../auth/credentials.ts";
import { authenticate, mayAccess, permission, type Principal, type Refusal } from "../auth/principal.ts";
import { DEFAULT_CLUSTER } from "../clusters/cluster.ts";
import { subprotocolCredential } from "../k8s/watch-websocket.ts";
import { ApiError, type ErrorCode } from "../errors.ts";
import { logger } from "../log.ts";
import type { AppEnv } from "./app-env.ts";

const CODE_OF: Record<Refusal["status"], ErrorCode> = {
  401: "Unauthorized",
  403: "Forbidden",
  429: "TooManyRequests",
  500: "Misconfigured",
  503: "ServiceUnavailable",
};

function refused(refusal: Refusal): ApiError {
  return new ApiError(CODE_OF[refusal.status], refusal.message, refusal.retryAfterSeconds);
}

/** The cluster a route addresses: `{cluster}`, or the default cluster outside `/clusters/…`. */
export function clusterOf(c: Context<AppEnv>): string {
  return c.req.param("cluster") ?? DEFAULT_CLUSTER;
}

function isRead(c: Context<AppEnv>): boolean {
  return c.req.method === "GET" || c.req.method === "HEAD";
}

/**
 * The request's `Authorization`; for a WebSocket request without one, the bearer token of its
 * subprotocols, as browsers send it (k8s/watch-websocket.ts). Throws 401 for malformed ones.
 */
function authorizationOf(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("authorization");
  if (header !== undefined) return header;
  const presented = subprotocolCredential(c.req.raw.headers);
  if (presented === undefined) return undefined;
  if ("refused" in presented) throw new ApiError("Unauthorized", presented.refused);
  return `Bearer ${presented.token}`;
}

/** Who sent this request: authenticated on first use, then remembered for the request. Throws a refusal. */
export async function principalOf(c: Context<AppEnv>): Promise<Principal> {
  const known = c.get("principal");
  if (known) return known;
  const outcome = await authenticate(c.env, await credentialConfig(c.env), {
    authorization: authorizationOf(c),
    accessJwt: c.req.header(ACCESS_JWT_HEADER),
    hostname: new URL(c.req.url).hostname,
    clientAddress: c.req.header("cf-connecting-ip"),
  });
  if (!outcome.ok) throw refused(outcome);
  c.set("principal", outcome.principal);
  return outcome.principal;
}

/** The caller, if it may `role` on `cluster`; otherwise throws the refusal (401 or 403). */
export async function permit(c: Context<AppEnv>, role: Role, cluster: string): Promise<Principal> {
  const principal = await principalOf(c);
  const refusal = permission(principal, role, cluster, await credentialConfig(c.env), c.env);
  if (refusal) throw refused(refusal);
  return principal;
}

/**
 * The caller, if it may `role` on some cluster: for routes that learn their cluster later (a
 * subscription's) or span clusters. A caller refused here learns nothing about any cluster.
 */
export async function permitRole(c: Context<AppEnv>, role: Role): Promise<Principal> {
  const principal = await principalOf(c);
  if (principal.via === "anonymous" || (role === "admin" && !principal.admin)) await permit(c, role, DEFAULT_CLUSTER);
  return principal;
}

/** Whether the caller may see `cluster` in a listing that spans clusters; throws when it may read nothing. */
export async function readableClusters(c: Context<AppEnv>): Promise<(cluster: string) => boolean> {
  return (await readableScope(c)).readable;
}

/** readableClusters, and a name for that scope: callers of one scope may share what was read for it. */
export async function readableScope(c: Context<AppEnv>): Promise<{ readable: (cluster: string) => boolean; scope: string }> {
  const principal = await permitRole(c, "read");
  const scope = principal.clusters === "*" ? "*" : JSON.stringify([...principal.clusters].sort());
  return { readable: (cluster) => mayAccess(principal, cluster), scope };
}

/** Guards a read of the route's cluster. */
export const requireRead: MiddlewareHandler<AppEnv> = async function requireRead(c, next) {
  await permit(c, "read", clusterOf(c));
  return next();
};

/** Guards a change to the route's cluster. */
export const requireAdmin: MiddlewareHandler<AppEnv> = async function requireAdmin(c, next) {
  await permit(c, "admin", clusterOf(c));
  return next();
};

/** Every route but `/healthz` needs a caller that may do something: refuses the rest before any route runs. */
export const requireCredential: MiddlewareHandler<AppEnv> = async function requireCredential(c, next) {
  const principal = await principalOf(c);
  if (!principal.read && !principal.admin) await permit(c, isRead(c) ? "read" : "admin", DEFAULT_CLUSTER);
  return next();
};

/** One audit line per request that may change something: which credential, what, and how it ended. */
export const auditMutations: MiddlewareHandler<AppEnv> = async function auditMutations(c, next) {
  if (isRead(c) || c.req.method === "OPTIONS") return next();
  try {
    await next();
  } finally {
    logger.audit("mutation", {
      credential: c.get("principal")?.name ?? null,
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
    });
  }
};
