/**
 * What the caller may read of one resource on one cluster, for the Worker's own read routes
 * (`/informers/{name}/objects` and `/indexes`: http/query.ts; `/search`: http/search.ts; a
 * subscription's dead letters: http/subscriptions.ts) — issue 31 item 3, docs/security.md
 * "Member-cluster RBAC: the Worker's own read routes".
 *
 * Contract:
 * - A `scopes` cluster (the default), a caller in `system:masters`, or one whose RBAC allows the
 *   verb cluster-wide: no restriction (`undefined`), the routes read as before.
 * - Otherwise the answer is the namespaces whose RoleBindings allow the verb (auth/rbac
 *   `listScopeOf`): decided once per request and cluster from the authorizer the isolate holds — no
 *   subrequest beyond the lead's `readAuthorizationOf`, nothing per object. The routes hand the set
 *   to the informer, which reads only those namespaces' key ranges (cache/namespace-set.ts);
 *   dead letters, read from a subscription, are filtered by key in the Worker (`listableKeys`).
 *   Cluster-scoped objects are never in a set: they need the verb cluster-wide, as on the server.
 * - A refusal is a 403 ApiError with kube-apiserver's text (`forbiddenMessage`); an `rbac` cluster
 *   whose RBAC cannot be read whole is a 503 (readAuthorizationOf: fail closed).
 * - The resource is named as informer specs and searches name it (`plural[.group]`); RBAC decides
 *   on its group and plural, whatever version the informer reads.
 */
import type { Context } from "hono";
import { decide, forbiddenMessage, inListScope, listScopeOf } from "../auth/rbac/read-authorization.ts";
import type { ResourceAttributes } from "../auth/rbac/rbac-objects.ts";
import { splitKey } from "../cache/keys.ts";
import { describeInformer, type InformerAddress } from "../clusters/cluster.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import { readAuthorizationOf } from "./read-authorization.ts";
import { registryCache, registrySource } from "./registry-snapshot.ts";

/** A resource as RBAC rules name it. */
export interface RbacResource {
  apiGroup: string;
  resource: string;
}

/** `pods` → core `pods`; `deployments.apps` → `apps` `deployments` (the spec's name, already validated). */
export function rbacResourceOf(name: string): RbacResource {
  const dot = name.indexOf(".");
  return dot === -1 ? { apiGroup: "", resource: name } : { apiGroup: name.slice(dot + 1), resource: name.slice(0, dot) };
}

/**
 * The resource of the informer at `address` as RBAC names it, when its cluster's reads are decided
 * by RBAC; undefined on a `scopes` cluster (nothing more to decide). The spec is read from this
 * isolate's registry snapshot.
 */
export async function informerRbacResource(c: Context<AppEnv>, address: InformerAddress): Promise<RbacResource | undefined> {
  if ((await readAuthorizationOf(c, address.cluster)).mode === "scopes") return undefined;
  const { informers } = await registryCache.snapshot(registrySource(c.env));
  const registered = informers.find((i) => i.cluster === address.cluster && i.name === address.name);
  if (!registered) throw new ApiError("NotFound", `${describeInformer(address)} not found`);
  return rbacResourceOf(registered.spec.resource);
}

/**
 * Which keys (`namespace/name`, `name`) of the informer at `address` the caller may list, as a
 * predicate; undefined when all of them. For answers that carry objects other than through the
 * informer's own reads (a subscription's dead letters), filtered in the Worker.
 */
export async function listableKeys(c: Context<AppEnv>, address: InformerAddress): Promise<((key: string) => boolean) | undefined> {
  const resource = await informerRbacResource(c, address);
  if (!resource) return undefined;
  const scope = listScopeOf(await readAuthorizationOf(c, address.cluster), { verb: "list", ...resource });
  return scope.all ? undefined : (key) => inListScope(scope, splitKey(key).namespace);
}

/**
 * The namespaces the caller may `verb` (`list` unless said) `resource` in on `cluster`, sorted; or
 * undefined when the whole cluster (see the contract).
 */
export async function permittedNamespaces(c: Context<AppEnv>, cluster: string, resource: RbacResource, verb = "list"): Promise<string[] | undefined> {
  const scope = listScopeOf(await readAuthorizationOf(c, cluster), { verb, ...resource });
  return scope.all ? undefined : [...scope.namespaces].sort();
}

/** Throws a 403 ApiError (kube-apiserver's message) unless the caller may make the read `attributes` describe on `cluster`. */
export async function requirePermitted(c: Context<AppEnv>, cluster: string, attributes: ResourceAttributes): Promise<void> {
  const authorization = await readAuthorizationOf(c, cluster);
  if (authorization.mode === "scopes") return;
  const decision = decide(authorization, attributes);
  if (!decision.allowed) throw new ApiError("Forbidden", forbiddenMessage(authorization.user.name, attributes, decision.reason));
}
