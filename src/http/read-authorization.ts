/**
 * The caller's read authorization of one cluster (auth/rbac/read-authorization.ts), as routes ask
 * it: `readAuthorizationOf` (once per cluster per request) and, for `/k8s`, `requireAllowed`, which
 * refuses as kube-apiserver refuses (403 Status with its message), and `revocationOf`, which ends a
 * watch once its reader may no longer watch (k8s/watch-revocation.ts).
 *
 * Guarantees:
 * - A cluster is `rbac` when this isolate's registry snapshot says so (http/registry-snapshot.ts:
 *   about a second behind a change made through another isolate).
 * - Fail closed: an `rbac` cluster whose RBAC objects cannot be read whole (its informers not synced
 *   yet, too large, unreachable) answers 503 with Retry-After, never a read.
 * - Asked after the credential's own checks (http/auth.ts `permit`), which stay first.
 * - Impersonation (`Impersonate-*` headers, `kubectl --as`) is refused (403) on an `rbac` cluster.
 */
import type { Context } from "hono";
import { informerReader, RbacUnavailable, rbacSource } from "../auth/rbac/rbac-source.ts";
import { BY_SCOPES, byRbac, bySuperuser, decide, forbiddenMessage, isSuperuser, type ReadAuthorization } from "../auth/rbac/read-authorization.ts";
import type { RequestAttributes } from "../auth/rbac/rbac-objects.ts";
import { isNonResource } from "../auth/rbac/rbac-objects.ts";
import { ApiError } from "../errors.ts";
import { statusErrors } from "../k8s/status.ts";
import { type Revocation, watchRevocation } from "../k8s/watch-revocation.ts";
import type { AppEnv } from "./app-env.ts";
import { principalOf } from "./auth.ts";
import { placementIn } from "./known-informer.ts";
import { registryCache, registrySource } from "./registry-snapshot.ts";

/** Seconds a client is told to wait when a cluster's RBAC cannot be read (its informers relist in seconds). */
const RBAC_UNAVAILABLE_RETRY_SECONDS = 5;

/** How the caller's reads of `cluster` are authorized; a 503 ApiError when its RBAC cannot be read whole. */
export async function readAuthorizationOf(c: Context<AppEnv>, cluster: string): Promise<ReadAuthorization> {
  let known = c.get("readAuthorizations");
  const held = known?.get(cluster);
  if (held) return held;
  const authorization = await currentAuthorization(c, cluster);
  if (!known) c.set("readAuthorizations", (known = new Map()));
  known.set(cluster, authorization);
  return authorization;
}

/** readAuthorizationOf as it stands now, not as this request first found it. */
async function currentAuthorization(c: Context<AppEnv>, cluster: string): Promise<ReadAuthorization> {
  const snapshot = await registryCache.snapshot(registrySource(c.env));
  let authorization = BY_SCOPES;
  if (snapshot.rbacClusters.includes(cluster)) {
    const principal = await principalOf(c);
    // The server's privileged group passes ahead of RBAC: it needs no RBAC objects, so no 503 either.
    if (isSuperuser(principal)) return bySuperuser(principal);
    try {
      authorization = byRbac(principal, await rbacSource.authorizer(cluster, informerReader(c.env, cluster, placementIn(c.env, snapshot, cluster))));
    } catch (error) {
      if (!(error instanceof RbacUnavailable)) throw error;
      throw new ApiError(
        "ServiceUnavailable",
        `cluster '${cluster}' authorizes reads with its own RBAC, which cannot be read whole now (${error.message}): no read of it is allowed until it can`,
        RBAC_UNAVAILABLE_RETRY_SECONDS,
      );
    }
  }
  return authorization;
}

/** Throws kube-apiserver's 403 Status unless the caller may make the read `attributes` describe on `cluster`. */
export async function requireAllowed(c: Context<AppEnv>, cluster: string, attributes: RequestAttributes): Promise<void> {
  const authorization = await readAuthorizationOf(c, cluster);
  if (authorization.mode === "scopes") return;
  // kubectl --as: the server would check `impersonate` rights and answer as that user; answering as
  // the caller instead would show one user's view under another's name.
  let impersonating: string | undefined;
  c.req.raw.headers.forEach((_, name) => (impersonating ??= name.toLowerCase().startsWith("impersonate-") ? name.toLowerCase() : undefined));
  if (impersonating) throw statusErrors.forbidden(`impersonation (${impersonating}) is not supported by this cache: ask as yourself`);
  const decision = decide(authorization, attributes);
  if (decision.allowed) {
    c.set("authorizedRead", { cluster, attributes });
    return;
  }
  const message = forbiddenMessage(authorization.user.name, attributes, decision.reason);
  throw isNonResource(attributes)
    ? statusErrors.forbidden(message)
    : statusErrors.forbidden(message, { group: attributes.apiGroup, resource: attributes.resource, name: attributes.name });
}

/**
 * How often an open watch's own checks ask the RBAC informers whether they moved (four one-object
 * reads): its invocation pays those subrequests for as long as it runs (10,000 by default, a watch
 * lasts up to an hour), so ≤ 4 per 10 s. Other reads of the cluster in the isolate refresh the
 * authorizer every second; the watch re-decides from it every RECHECK_EVERY_MS either way.
 */
export const WATCH_RBAC_CHECK_EVERY_MS = 10_000;

/**
 * For a watch an `rbac` cluster's RBAC allowed (`requireAllowed`): the revocation that ends it once
 * the reader may no longer make it (a cluster switched back to `scopes` ends it too, its RBAC
 * informers gone: the re-watch is served by scopes). Undefined for every other watch, and for a
 * `system:masters` reader, whom RBAC cannot revoke.
 */
export function revocationOf(c: Context<AppEnv>): Revocation | undefined {
  const authorized = c.get("authorizedRead");
  const principal = c.get("principal");
  if (!authorized || !principal || isSuperuser(principal)) return undefined;
  // Not readAuthorizationOf: no registry check each second, and the authorizer's own freshness bounded for a long-lived invocation.
  const reader = informerReader(c.env, authorized.cluster, c.get("placement"));
  return watchRevocation(async () => {
    const authorizer = await rbacSource.authorizer(authorized.cluster, reader, WATCH_RBAC_CHECK_EVERY_MS);
    return decide(byRbac(principal, authorizer), authorized.attributes).allowed;
  });
}
