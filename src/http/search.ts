/**
 * `GET /search/{resource}` (issue 12, docs/api.md "Search across clusters"): the objects of one
 * resource in many clusters, read from each cluster's informer, merged into pages.
 *
 * Contract:
 * - Scope: the clusters named in `clusters=a,b`, or every cluster with an informer of the resource.
 *   In each, the informer that holds the whole resource answers — the `/k8s` rule (k8s/served.ts):
 *   no namespace or selectors, the first by name among several. An unknown cluster is a 404, an
 *   invalid name or resource a 400 (with the wording of informer specs), a named cluster without
 *   such an informer a 404; nothing is created either way.
 * - Items come in (key, cluster) order, each with its cluster in the `edge-informer/cluster`
 *   annotation (search/annotate.ts). `resourceVersions` names, per cluster read, the
 *   resourceVersion its items were read at.
 * - Paging (search/merge.ts, search/search-token.ts): the continue token holds each cluster's
 *   position and snapshot, so every page of one search reads each cluster at its first page's
 *   snapshot (versioned-list.ts): per cluster no duplicate and no gap, whatever changes meanwhile.
 *   Where a snapshot can no longer be served, that cluster continues after the same key in its
 *   cache as it is then (InformerObject.searchAt) — still no duplicate and no gap among objects
 *   that exist throughout — where `/k8s` answers 410 and makes the client start again: one
 *   cluster's churn should not restart a search over all of them.
 * - A cluster that does not answer within SEARCH_DEADLINE.ms (or fails, or is not synced yet) is
 *   named in `partial` and keeps its position in the token, so the next page tries it again; the
 *   others answer. `continue` is absent only when every cluster's list is complete.
 * Memory: bounded whatever the number of clusters — each cluster's read gets an equal share of
 * `limit` and of MAX_PAGE_BYTES, with floors (CLUSTER_SHARE): at most max(4 MiB, clusters × 256 KiB)
 * of bodies at once (25 MiB at the 100-cluster bound); the answer holds at most `limit` items and
 * is streamed a chunk of items at a time (no second copy of the page as one string).
 * - A cluster whose informer (or the cluster itself) is gone since the first page is named in
 *   `partial` once and left out of `continue`, so following `continue` always comes to an end.
 * - On a cluster whose authorization is `rbac` (issue 31 item 3, list-scope.ts), the caller's
 *   RBAC decides, once per page and cluster: only the namespaces it may list the resource in are
 *   read (cluster-scoped objects only with cluster-wide list); a cluster where it may list nothing
 *   (or not the `namespace` asked for) is not read and is absent from the answer; one whose RBAC
 *   cannot be read now is named in `partial`, its position kept (fail closed, no 503 for all).
 */
import { type Context, Hono } from "hono";
import * as z from "zod/mini";
import type { RegisteredInformer } from "../config/informer-registry.ts";
import type { Position, VersionedPage } from "../cache/versioned-list.ts";
import { CLUSTER_NAME_RULE, isClusterName } from "../clusters/cluster.ts";
import { informerStub } from "../clusters/stubs.ts";
import { checkResourceName } from "../config/informer-spec.ts";
import { ApiError, ValidationError } from "../errors.ts";
import { holdsWholeResource } from "../k8s/served.ts";
import { MAX_PAGE_BYTES } from "../cache/lister.ts";
import { parseFieldSelector, parseLabelSelector } from "../kube/selectors.ts";
import { errorText, logger } from "../log.ts";
import type { QueryAnswer } from "../objects/informer-object.ts";
import { withClusterAnnotation } from "../search/annotate.ts";
import { type ClusterPage, mergePages } from "../search/merge.ts";
import { type ClusterCursor, decodeSearchToken, encodeSearchToken, searchFingerprint } from "../search/search-token.ts";
import type { AppEnv } from "./app-env.ts";
import { principalOf, readableClusters } from "./auth.ts";
import { permittedNamespaces, rbacResourceOf } from "./list-scope.ts";
import { listQuery } from "./query.ts";
import { validate } from "./validate.ts";
import { isKnownCluster, placementIn } from "./known-informer.ts";
import { registryCache, registrySource } from "./registry-snapshot.ts";

/** How long a search waits for each cluster's page. Tests shorten it. */
export const SEARCH_DEADLINE = { ms: 2_000 };
/** Items of a page without `limit`: each cluster reads up to this many, so less than the objects route's 5,000. */
const DEFAULT_LIMIT = 500;
/**
 * What each cluster's read of one page may hold: an equal share of `limit` and of MAX_PAGE_BYTES,
 * but never less than these floors. The share bounds a page's memory however many clusters it
 * reads; the floors keep pages full where clusters' keys do not interleave (a k-way merge can only
 * emit up to where the first cluster's read ends), so a few clusters read as much as one did.
 * Tests lower the floors.
 */
export const CLUSTER_SHARE = { minItems: 100, minBytes: 256 * 1024 };

const searchQuery = z.extend(listQuery, {
  // 64 names of 63 characters and their commas, at most.
  clusters: z.optional(z.string().check(z.minLength(1), z.maxLength(64 * 64))),
});
type SearchQuery = z.output<typeof searchQuery>;

/** Every cluster's informers, from this isolate's registry snapshot (registry-snapshot.ts; `fresh`: the version checked now). */
async function readInformers(env: AppEnv["Bindings"], fresh: boolean): Promise<RegisteredInformer[]> {
  return (await registryCache.snapshot(registrySource(env), fresh)).informers;
}

/**
 * Per cluster the caller may read, the informer that answers for `resource` (the `/k8s` rule;
 * `list()` is in (cluster, name) order).
 */
function servingInformers(informers: readonly RegisteredInformer[], resource: string, readable: (cluster: string) => boolean): Map<string, string> {
  const serving = new Map<string, string>();
  for (const { cluster, name, spec } of informers) {
    if (spec.resource === resource && holdsWholeResource(spec) && !serving.has(cluster) && readable(cluster)) serving.set(cluster, name);
  }
  return serving;
}

/** The names in `clusters=`, in order, without repeats; an invalid one is a 400. */
function namedClusters(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const names = [...new Set(text.split(",").map((name) => name.trim()))];
  for (const name of names) {
    if (!isClusterName(name)) throw new ValidationError(`clusters: '${name}' is not a cluster name: ${CLUSTER_NAME_RULE}`);
  }
  return names;
}

/** The clusters a first page reads, each with its informer: 404s for unknown clusters and clusters without one. */
async function firstScope(env: AppEnv["Bindings"], resource: string, named: string[] | undefined, readable: (cluster: string) => boolean): Promise<Map<string, string>> {
  // A miss checks the registry's version again, unless the same search missed just now.
  const missKey = `search ${resource} ${named?.join(",") ?? "*"}`;
  for (const fresh of [false, true]) {
    const serving = servingInformers(await readInformers(env, fresh), resource, readable);
    const missing = named?.find((name) => !serving.has(name));
    if (missing === undefined && serving.size > 0) {
      return named === undefined ? serving : new Map(named.map((name) => [name, serving.get(name)!]));
    }
    if (!fresh && !registryCache.missedRecently(missKey)) continue;
    registryCache.recordMiss(missKey);
    if (missing !== undefined && !(await isKnownCluster(env, missing))) throw new ApiError("NotFound", `cluster '${missing}' not found`);
    const where = missing === undefined ? "any cluster" : `cluster '${missing}'`;
    throw new ApiError("NotFound", `no informer in ${where} holds all of '${resource}' (one without namespace, labelSelector or fieldSelector)`);
  }
  throw new Error("unreachable");
}

type ClusterRead = { ok: true; answer: QueryAnswer<VersionedPage> } | { ok: false; why: string };

const NOTHING = "nothing";

/**
 * What the caller may search of `resource` in `cluster` (list-scope.ts; issue 31 item 3): all of
 * it (`scoped` empty), some namespaces, NOTHING (no namespace, or not the `namespace` asked for: a
 * search spans what the caller sees, as it leaves out clusters it may not read), or — the cluster's
 * RBAC cannot be read now — why, so that the cluster is named `partial` and keeps its position.
 */
async function readableIn(
  c: Context<AppEnv>,
  cluster: string,
  resource: string,
  namespace: string | undefined,
): Promise<{ ok: true; scoped: { namespaces?: string[] } } | { ok: false; why: string } | typeof NOTHING> {
  let namespaces: string[] | undefined;
  try {
    namespaces = await permittedNamespaces(c, cluster, rbacResourceOf(resource));
  } catch (error) {
    if (error instanceof ApiError && error.code === "ServiceUnavailable") return { ok: false, why: error.message };
    throw error;
  }
  if (namespaces === undefined) return { ok: true, scoped: {} };
  if (namespace !== undefined) return namespaces.includes(namespace) ? { ok: true, scoped: {} } : NOTHING;
  return namespaces.length === 0 ? NOTHING : { ok: true, scoped: { namespaces } };
}

/** One cluster's page, or why it has none in time. The read goes on after the deadline; its answer is dropped. */
async function readCluster(
  env: AppEnv["Bindings"],
  address: { cluster: string; name: string },
  query: Omit<SearchQuery, "clusters" | "continue"> & { limit: number },
  from: Position | undefined,
  owner: string,
): Promise<ClusterRead> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<ClusterRead>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, why: `no answer within ${SEARCH_DEADLINE.ms} ms` }), SEARCH_DEADLINE.ms);
  });
  const read = informerStub(env, address, placementIn(env, await registryCache.snapshot(registrySource(env)), address.cluster))
    .searchAt(query, from, owner)
    .then((result): ClusterRead => {
      if (!result.ok) return { ok: false, why: result.error.message };
      if (!result.value.synced) return { ok: false, why: "its cache is not synced yet" };
      return { ok: true, answer: result.value as QueryAnswer<VersionedPage> };
    })
    .catch((error: unknown): ClusterRead => ({ ok: false, why: errorText(error) }));
  try {
    return await Promise.race([read, deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

async function search(c: Context<AppEnv>, resource: string, query: SearchQuery): Promise<Response> {
  try {
    checkResourceName(resource);
    if (query.labelSelector) parseLabelSelector(query.labelSelector);
    if (query.fieldSelector) parseFieldSelector(query.fieldSelector);
  } catch (error) {
    throw new ApiError("BadRequest", error instanceof Error ? error.message : String(error));
  }
  const named = namedClusters(query.clusters);
  const fingerprint = searchFingerprint([resource, query.namespace, query.labelSelector, query.fieldSelector, named?.join(",")]);
  const token = query.continue === undefined ? undefined : decodeSearchToken(query.continue, fingerprint);
  // Clusters the caller may not read are left out, wherever they are named (not errors: a search
  // spans what the caller sees).
  const readable = await readableClusters(c);
  const readableNamed = named?.filter(readable);
  if (readableNamed?.length === 0) return c.json({ items: [], resourceVersions: {} });
  let scope: Map<string, string | undefined>;
  if (token === undefined) {
    scope = await firstScope(c.env, resource, readableNamed, readable);
  } else {
    // A continuation reads the token's clusters; one whose informer is gone since answers nothing (partial).
    const serving = servingInformers(await readInformers(c.env, false), resource, readable);
    scope = new Map([...token.clusters.keys()].filter(readable).map((cluster) => [cluster, serving.get(cluster)]));
    if (scope.size === 0) return c.json({ items: [], resourceVersions: {} });
  }
  const limit = query.limit ?? DEFAULT_LIMIT;
  const listing = {
    limit: Math.max(Math.ceil(limit / scope.size), Math.min(limit, CLUSTER_SHARE.minItems)),
    maxBytes: Math.max(Math.floor(MAX_PAGE_BYTES / scope.size), CLUSTER_SHARE.minBytes),
    ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
    ...(query.labelSelector === undefined ? {} : { labelSelector: query.labelSelector }),
    ...(query.fieldSelector === undefined ? {} : { fieldSelector: query.fieldSelector }),
  };
  // A search with selectors is a heavy read of each informer, admitted fairly between credentials (review N1).
  const owner = (await principalOf(c)).name;
  const reads = await Promise.all(
    [...scope].map(async ([cluster, informer]) => {
      const cursor = token?.clusters.get(cluster) ?? null;
      const readable = await readableIn(c, cluster, resource, query.namespace);
      // Nothing the caller may list there: the cluster is not read, and has nothing to continue.
      if (readable === NOTHING) return undefined;
      const read: ClusterRead =
        informer === undefined
          ? { ok: false, why: "no informer holds the resource any more" }
          : !readable.ok
            ? readable
            : await readCluster(c.env, { cluster, name: informer }, { ...listing, ...readable.scoped }, cursor?.from, owner);
      return { cluster, cursor, read };
    }),
  );

  const pages: ClusterPage[] = [];
  const versions = new Map<string, string>();
  const next = new Map<string, ClusterCursor | null>();
  const partial: string[] = [];
  for (const { cluster, cursor, read } of reads.filter((read) => read !== undefined)) {
    if (scope.get(cluster) === undefined) {
      // Its informer (or the cluster) is gone: named this once, then left out of `continue`, so a
      // client following it comes to an end instead of paging a cluster that cannot answer again.
      partial.push(cluster);
      continue;
    }
    if (!read.ok || read.answer.value.expired) {
      // searchAt never answers expired; kept position either way.
      partial.push(cluster);
      next.set(cluster, cursor);
      logger.warn("search: a cluster did not answer", { cluster, why: read.ok ? "expired" : read.why });
      continue;
    }
    const page = read.answer.value;
    // The same snapshot as the previous page, or (first page, or one no longer servable) a new one.
    versions.set(cluster, cursor !== null && page.at === cursor.from.at ? cursor.rv : read.answer.resourceVersion);
    pages.push({ cluster, from: cursor?.from.after ?? "", at: page.at, items: page.items, keys: page.keys, ...(page.next ? { next: page.next } : {}) });
  }
  const merged = mergePages(pages, limit);
  for (const [cluster, position] of merged.positions) if (position) next.set(cluster, { rv: versions.get(cluster)!, from: position });

  const resourceVersions = JSON.stringify(Object.fromEntries([...versions].sort(([a], [b]) => (a < b ? -1 : 1))));
  const rest =
    (next.size === 0 ? "" : `,"continue":${JSON.stringify(encodeSearchToken({ search: fingerprint, clusters: next }))}`) +
    (partial.length === 0 ? "" : `,"partial":${JSON.stringify(partial.sort())}`);
  return c.body(streamedItems(merged.items, `,"resourceVersions":${resourceVersions}${rest}}`), 200, { "content-type": "application/json" });
}

/** Items annotated and encoded per chunk of the answer. */
const ITEMS_PER_CHUNK = 64;

/**
 * `{"items":[…]` then `tail`, streamed as the client reads: each item annotated and encoded a chunk
 * at a time, so the page's bodies are held once (as read), never joined into a second copy of the
 * whole answer and encoded into a third (issue 20 item 3).
 */
function streamedItems(items: readonly { body: string; cluster: string }[], tail: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let index = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        let text = index === 0 ? '{"items":[' : "";
        const end = Math.min(items.length, index + ITEMS_PER_CHUNK);
        for (; index < end; index++) text += (index === 0 ? "" : ",") + withClusterAnnotation(items[index]!.body, items[index]!.cluster);
        if (index < items.length) return controller.enqueue(encoder.encode(text));
        controller.enqueue(encoder.encode(`${text}]${tail}`));
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

export const searchRoutes = new Hono<AppEnv>().get("/:resource", validate("query", searchQuery), (c) => search(c, c.req.param("resource"), c.req.valid("query")));
