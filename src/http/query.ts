/**
 * Query routes (API.md "Querying the cache"): get by key, list with namespace / selectors /
 * pagination, index values and ByIndex. Every answer carries `X-Resource-Version` (the cache's
 * lastSyncResourceVersion) and `X-Synced` (client-go HasSynced). Objects are passed through as the
 * JSON text the cache holds.
 *
 * On a cluster whose authorization is `rbac` (issue 31 item 3; list-scope.ts), every route that
 * answers objects or index values answers only what the caller may read there, decided once per
 * request: a get needs `get` on the object; a list with `namespace` needs `list` there (else 403),
 * one without reads only the namespaces the caller may list in (cluster-scoped objects only with
 * cluster-wide list); an index lookup reads those namespaces too; index values need cluster-wide
 * list, except the namespace index's, which are those namespaces. The informer's status stays
 * readable by every reader of the cluster (counts, not objects).
 */
import { type Context, Hono } from "hono";
import * as z from "zod/mini";
import { unwrap } from "../errors.ts";
import type { QueryAnswer } from "../objects/informer-object.ts";
import type { AppEnv } from "./app-env.ts";
import { principalOf, requireRead } from "./auth.ts";
import { validate } from "./validate.ts";
import { informerStub } from "../clusters/stubs.ts";
import { informerAddress } from "./known-informer.ts";
import { MAX_LIST_LIMIT } from "../cache/lister.ts";
import { NAMESPACE_INDEX } from "../cache/indexer.ts";
import { splitKey } from "../cache/keys.ts";
import { informerRbacResource, permittedNamespaces, type RbacResource, requirePermitted } from "./list-scope.ts";

const text = (max: number) => z.optional(z.string().check(z.minLength(1), z.maxLength(max)));
const pageQuery = {
  limit: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(MAX_LIST_LIMIT))),
  // An index-value page's token holds the last value, which may be long (an indexed annotation).
  continue: text(12 * 1024),
};
export const listQuery = z.strictObject({
  namespace: text(63),
  labelSelector: text(4096),
  fieldSelector: text(4096),
  ...pageQuery,
});
const indexQuery = z.strictObject(pageQuery);

function answer<T>(c: Context<AppEnv>, result: QueryAnswer<T>, body: string): Response {
  return c.body(body, 200, {
    "content-type": "application/json",
    "x-resource-version": result.resourceVersion,
    "x-synced": String(result.synced),
  });
}

function itemsBody(resourceVersion: string, page: { items: string[]; continue?: string }): string {
  const rest = page.continue === undefined ? "" : `,"continue":${JSON.stringify(page.continue)}`;
  return `{"resourceVersion":${JSON.stringify(resourceVersion)},"items":[${page.items.join(",")}]${rest}}`;
}

function informer(c: Context<AppEnv>) {
  return informerStub(c.env, informerAddress(c), c.get("placement"));
}

/** The route's cluster and its informer's resource, when RBAC decides its reads (list-scope.ts). */
async function rbacTarget(c: Context<AppEnv>): Promise<{ cluster: string; resource: RbacResource } | undefined> {
  const address = informerAddress(c);
  const resource = await informerRbacResource(c, address);
  return resource && { cluster: address.cluster, resource };
}

/**
 * What a list may read: with `namespace`, that namespace if the caller may list there (else 403);
 * without, the namespaces the caller may list in, when not the whole cluster.
 */
async function readableNamespaces(c: Context<AppEnv>, namespace?: string): Promise<{ namespaces?: string[] }> {
  const target = await rbacTarget(c);
  if (!target) return {};
  if (namespace !== undefined) {
    await requirePermitted(c, target.cluster, { verb: "list", ...target.resource, namespace });
    return {};
  }
  const namespaces = await permittedNamespaces(c, target.cluster, target.resource);
  return namespaces === undefined ? {} : { namespaces };
}

async function getByKey(c: Context<AppEnv>, key: string): Promise<Response> {
  const target = await rbacTarget(c);
  if (target) {
    const { namespace, name } = splitKey(key);
    await requirePermitted(c, target.cluster, { verb: "get", ...target.resource, ...(namespace ? { namespace } : {}), name });
  }
  const result = unwrap(await informer(c).getObject(key));
  return answer(c, result, result.value);
}

export const queryRoutes = new Hono<AppEnv>()
  .use(requireRead)
  .get("/:name/objects", validate("query", listQuery), async (c) => {
    // A query with selectors is a heavy read, admitted fairly between credentials (review N1).
    const query = c.req.valid("query");
    const scoped = { ...query, ...(await readableNamespaces(c, query.namespace)) };
    const result = unwrap(await informer(c).listObjects(scoped, (await principalOf(c)).name));
    return answer(c, result, itemsBody(result.resourceVersion, result.value));
  })
  .get("/:name/objects/:namespace/:object", (c) => getByKey(c, `${c.req.param("namespace")}/${c.req.param("object")}`))
  .get("/:name/objects/:object", (c) => getByKey(c, c.req.param("object")))
  .get("/:name/indexes/:index", validate("query", indexQuery), async (c) => {
    const index = c.req.param("index");
    const scoped = await readableNamespaces(c);
    // Another index's values come from every namespace's objects: they need cluster-wide list (the 403 says so).
    const target = scoped.namespaces && index !== NAMESPACE_INDEX ? await rbacTarget(c) : undefined;
    if (target) await requirePermitted(c, target.cluster, { verb: "list", ...target.resource });
    const result = unwrap(await informer(c).indexValues(index, { ...c.req.valid("query"), ...scoped }));
    return answer(c, result, JSON.stringify(result.value));
  })
  .get("/:name/indexes/:index/:value", validate("query", indexQuery), async (c) => {
    const scoped = { ...c.req.valid("query"), ...(await readableNamespaces(c)) };
    const result = unwrap(await informer(c).byIndex(c.req.param("index"), c.req.param("value"), scoped));
    return answer(c, result, itemsBody(result.resourceVersion, result.value));
  });
