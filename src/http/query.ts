/**
 * Query routes (API.md "Querying the cache"): get by key, list with namespace / selectors /
 * pagination, index values and ByIndex. Every answer carries `X-Resource-Version` (the cache's
 * lastSyncResourceVersion) and `X-Synced` (client-go HasSynced). Objects are passed through as the
 * JSON text the cache holds.
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

async function getByKey(c: Context<AppEnv>, key: string): Promise<Response> {
  const result = unwrap(await informer(c).getObject(key));
  return answer(c, result, result.value);
}

export const queryRoutes = new Hono<AppEnv>()
  .use(requireRead)
  .get("/:name/objects", validate("query", listQuery), async (c) => {
    // A query with selectors is a heavy read, admitted fairly between credentials (review N1).
    const result = unwrap(await informer(c).listObjects(c.req.valid("query"), (await principalOf(c)).name));
    return answer(c, result, itemsBody(result.resourceVersion, result.value));
  })
  .get("/:name/objects/:namespace/:object", (c) => getByKey(c, `${c.req.param("namespace")}/${c.req.param("object")}`))
  .get("/:name/objects/:object", (c) => getByKey(c, c.req.param("object")))
  .get("/:name/indexes/:index", validate("query", indexQuery), async (c) => {
    const result = unwrap(await informer(c).indexValues(c.req.param("index"), c.req.valid("query")));
    return answer(c, result, JSON.stringify(result.value));
  })
  .get("/:name/indexes/:index/:value", validate("query", indexQuery), async (c) => {
    const result = unwrap(await informer(c).byIndex(c.req.param("index"), c.req.param("value"), c.req.valid("query")));
    return answer(c, result, itemsBody(result.resourceVersion, result.value));
  });
