/**
 * `/k8s`: the cache as a read-only Kubernetes API server (API.md "Kubernetes-compatible read API";
 * kubernetes-api-server-facts.md). Discovery, get and list (JSON or Table) of the resources this
 * deployment mirrors (k8s/served.ts says which informer serves which), with `READ_TOKEN` as the
 * bearer token kubectl sends. Every error is a `Status`; every write verb is 405, since the cache is
 * read-only. The wire formats live in src/k8s/; this file only routes.
 *
 * One API server per cluster (issue 12): `/k8s/clusters/{cluster}/…` answers as that cluster's API
 * server, `/k8s/…` as the default cluster's, through the same handlers, so a kubeconfig context per
 * cluster (`server: https://<worker>/k8s/clusters/prod`) works with kubectl. An invalid cluster name
 * is a 400 Status, an unknown cluster a 404 Status, both before any informer object is touched; a
 * cluster only ever sees its own informers (the served-resource cache is kept per cluster).
 */
import { errorText, logger } from "../log.ts";
import { type Context, Hono } from "hono";
import { ApiError, type ErrorCode, unwrap } from "../errors.ts";
import { parseFieldSelector, SelectorError } from "../kube/selectors.ts";
import { DISCOVERY_MEDIA_TYPES, negotiateDiscovery, negotiateObject, OBJECT_MEDIA_TYPES, type ObjectFormat } from "../k8s/accept.ts";
import { listBody, type ListPageAnswer, objectBody } from "../k8s/answer.ts";
import { describeResource, type ResourceInfo } from "../k8s/catalog.ts";
import { decodeListToken, encodeListToken, type ListToken } from "../k8s/continue-token.ts";
import {
  aggregatedContentType,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  groupsOf,
  VERSION_INFO,
} from "../k8s/discovery.ts";
import { parseResourcePath, type ResourceRequest, type ServedResource, servedResources } from "../k8s/served.ts";
import { StatusError, statusErrors, statusResponse } from "../k8s/status.ts";
import { type IncludeObject, parseIncludeObject } from "../k8s/table.ts";
import { checkListOptions, type ListOptionsQuery, sendsInitialEvents, watchTimeoutSeconds } from "../k8s/list-options.ts";
import { listResourceVersion, type ListResourceVersion, readAt } from "../k8s/list-consistency.ts";
import { notReadyError, requireReady } from "../k8s/cache-readiness.ts";
import type { Position } from "../cache/versioned-list.ts";
import { exactKey } from "../cache/key-scope.ts";
import type { WatchParams } from "../k8s/watch-params.ts";
import type { AppEnv } from "./app-env.ts";
import { CLUSTER_NAME_RULE, DEFAULT_CLUSTER, type InformerAddress, informerObjectName, isClusterName } from "../clusters/cluster.ts";
import { informerStub as clusterInformerStub, relayStub } from "../clusters/stubs.ts";
import { relaysOf, relayShard } from "../k8s/watch-relay.ts";
import { clusterOf, permit, principalOf } from "./auth.ts";
import { clusterPlacement, isKnownCluster } from "./known-informer.ts";
import { registryCache, registrySource } from "./registry-snapshot.ts";
import { isReviewPath } from "../k8s/access-review.ts";
import { requireMetadataTarget } from "../k8s/metadata-only.ts";
import { listEncoding, WATCH_ENCODING } from "../k8s/compression.ts";
import { NAMESPACES, namespaceStandIn } from "../k8s/namespace-stand-in.ts";
import { serverEndpoints } from "./k8s-endpoints.ts";
import { HEAVY_READ_RETRY_AFTER_SECONDS, type HeavyRead } from "../k8s/admission.ts";

type K8sContext = Context<AppEnv>;

/** The API server's StatusReason for our error codes that are not already one. */
const K8S_REASON: Partial<Record<ErrorCode, string>> = { Misconfigured: "InternalError" };

/**
 * How long a cluster's served resources stand while the registry is unchanged: while a custom
 * resource is not described yet (its CRD unread, no object cached), about as often as the registry
 * is checked; once all are, a minute (a CRD may change its printer columns).
 */
const UNDESCRIBED_TTL_MS = 1_000;
const DESCRIBED_TTL_MS = 60_000;
/**
 * Each cluster's served resources, as this isolate last derived them from its registry snapshot
 * (registry-snapshot.ts) and version. Keyed by cluster, so one cluster's resources never answer for
 * another's; only known clusters get here (requireK8sCluster), so the map holds at most one entry
 * per configured cluster.
 */
const registries = new Map<string, { version: string; at: number; undescribed: boolean; served: ServedResource[] }>();

async function served(c: K8sContext, fresh = false): Promise<ServedResource[]> {
  const cluster = clusterOf(c);
  const snapshot = await registryCache.snapshot(registrySource(c.env), fresh);
  const cached = registries.get(cluster);
  if (cached && cached.version === snapshot.version && !(fresh && cached.undescribed)) {
    if (Date.now() - cached.at < (cached.undescribed ? UNDESCRIBED_TTL_MS : DESCRIBED_TTL_MS)) return cached.served;
  }
  let undescribed = false;
  const list = await servedResources(
    snapshot.informers.filter((informer) => informer.cluster === cluster),
    async (name) => {
      const described = await clusterInformerStub(c.env, { cluster, name }, snapshot.placements[cluster]).resourceDescription();
      if (described.ok && described.value) return described.value;
      undescribed = true;
      return undefined;
    },
  );
  registries.set(cluster, { version: snapshot.version, at: Date.now(), undescribed, served: list });
  return list;
}

/**
 * What `found` finds in the served resources; on a miss they are derived again from a freshly
 * checked registry (the resource may be new), unless the same miss happened within MISS_TTL_MS.
 */
async function servedLookup<T>(c: K8sContext, missKey: string, found: (list: ServedResource[]) => T | undefined): Promise<T | undefined> {
  const first = found(await served(c));
  const key = `k8s ${clusterOf(c)} ${missKey}`;
  if (first !== undefined || registryCache.missedRecently(key)) return first;
  const again = found(await served(c, true));
  if (again === undefined) registryCache.recordMiss(key);
  return again;
}

async function findResource(c: K8sContext, group: string, version: string, plural: string): Promise<ServedResource | undefined> {
  return servedLookup(c, `resource ${group}/${version}/${plural}`, (list) =>
    list.find((r) => r.info.group === group && r.info.version === version && r.info.plural === plural),
  );
}

function json(body: unknown, contentType = "application/json"): Response {
  return new Response(JSON.stringify(body), { headers: { "content-type": contentType, "cache-control": "no-cache, private" } });
}

function discovery(c: K8sContext, legacy: () => unknown, aggregated: (version: "v2" | "v2beta1") => unknown): Response {
  const format = negotiateDiscovery(c.req.header("accept"));
  if (!format) throw statusErrors.notAcceptable(DISCOVERY_MEDIA_TYPES);
  if (format.kind === "legacy") return json(legacy());
  const response = json(aggregated(format.version), aggregatedContentType(format.version));
  response.headers.set("vary", "Accept");
  return response;
}

const infos = async (c: K8sContext): Promise<ResourceInfo[]> => (await served(c)).map((r) => r.info);

/** The served resources if `found` holds of them (looked up again on a miss: it may be new); else 404. */
async function infosWith(c: K8sContext, missKey: string, found: (infos: ResourceInfo[]) => boolean): Promise<ResourceInfo[]> {
  const list = await servedLookup(c, missKey, (served) => {
    const infos = served.map((r) => r.info);
    return found(infos) ? infos : undefined;
  });
  if (list === undefined) throw statusErrors.noSuchResource();
  return list;
}

/** One API server's routes: mounted at `/k8s` (the default cluster) and at `/k8s/clusters/{cluster}`. */
const apiServerRoutes = new Hono<AppEnv>()
  .route("/", serverEndpoints((c) => infos(c)))
  .on("GET", ["/version", "/version/"], () => new Response(JSON.stringify(VERSION_INFO, null, 2), { headers: { "content-type": "application/json" } }))
  // Each discovery path also with a trailing slash, as the real server serves them (the Python
  // client's get_api_resources asks `/api/v1/`).
  .on("GET", ["/api", "/api/"], async (c) => {
    const list = await infos(c);
    return discovery(c, () => apiVersions(new URL(c.req.url).host), (v) => aggregatedDiscovery(true, list, v));
  })
  .on("GET", ["/apis", "/apis/"], async (c) => {
    const list = await infos(c);
    return discovery(c, () => apiGroupList(list), (v) => aggregatedDiscovery(false, list, v));
  })
  .on("GET", ["/api/v1", "/api/v1/"], async (c) => json(apiResourceList("", "v1", await infos(c))))
  .on("GET", ["/apis/:group", "/apis/:group/"], async (c) => {
    const group = c.req.param("group");
    const list = await infosWith(c, `group ${group}`, (infos) => groupsOf(infos).includes(group));
    return json(apiGroup(group, list));
  })
  .on("GET", ["/apis/:group/:version", "/apis/:group/:version/"], async (c) => {
    const { group, version } = c.req.param();
    const list = await infosWith(c, `group ${group}/${version}`, (infos) => infos.some((info) => info.group === group && info.version === version));
    return json(apiResourceList(group, version, list));
  })
  .get("/api/v1/*", (c) => resource(c, "", "v1", "/api/v1/"))
  .get("/apis/:group/:version/*", (c) => {
    const { group, version } = c.req.param();
    return resource(c, group, version, `/apis/${group}/${version}/`);
  });

/**
 * The cluster of `/k8s/clusters/{cluster}/…` must be a valid name (400) and a known cluster (404),
 * checked before anything reads its informers, as on the Worker's own `/clusters/{cluster}` routes.
 * Where kube-apiserver has no such notion, the 404 is a NotFound Status naming the cluster, so
 * kubectl prints `Error from server (NotFound): cluster "x" not found`.
 */
async function requireK8sCluster(c: K8sContext, next: () => Promise<void>): Promise<void> {
  const cluster = c.req.param("cluster") ?? "";
  if (!isClusterName(cluster)) throw statusErrors.badRequest(`invalid cluster name ${JSON.stringify(cluster)}: a cluster name is ${CLUSTER_NAME_RULE}`);
  if (!(await isKnownCluster(c.env, cluster))) throw statusErrors.unknownCluster(cluster);
  c.set("placement", await clusterPlacement(c.env, cluster));
  await next();
}

export const k8sRoutes = new Hono<AppEnv>()
  .onError((error) => {
    if (error instanceof StatusError) return statusResponse(error);
    if (error instanceof ApiError) return statusResponse(new StatusError(error.status, K8S_REASON[error.code] ?? error.code, error.message));
    logger.error("k8s request failed", { error: errorText(error) });
    return statusResponse(new StatusError(500, "InternalError", "an internal error occurred while reading the cache"));
  })
  // Method and credential first: an anonymous client cannot tell known clusters from unknown ones.
  // Discovery then answers any reader, as kube-apiserver's system:discovery role does for every
  // authenticated user (kubectl discovers before it lists, and would otherwise print the refusal as
  // "unknown"); objects only readers of their cluster (`resource`).
  .use("*", async (c, next) => {
    const review = c.req.method === "POST" && isReviewPath(c.req.path);
    if (c.req.method !== "GET" && c.req.method !== "HEAD" && !review) throw statusErrors.methodNotAllowed();
    if (!(await principalOf(c)).read) await permit(c, "read", DEFAULT_CLUSTER);
    await next();
  })
  .use("/clusters/:cluster/*", requireK8sCluster)
  // No route of the default cluster's starts with /clusters, so the two mounts never overlap.
  .route("/clusters/:cluster", apiServerRoutes)
  .route("/", apiServerRoutes)
  // A sub-app's notFound does not apply once mounted: this catch-all keeps unknown paths a Status.
  .all("*", () => statusResponse(statusErrors.noSuchResource()));

async function resource(c: K8sContext, group: string, version: string, prefix: string): Promise<Response> {
  await permit(c, "read", clusterOf(c));
  // The first match is the group version's: a cluster name is one segment, and the segment after it
  // is always `api` or `apis`, so `/k8s/clusters/{cluster}/` cannot hold `prefix` itself.
  const path = c.req.path.slice(c.req.path.indexOf(prefix) + prefix.length);
  let segments: string[];
  try {
    segments = path.split("/").filter((s) => s !== "").map(decodeURIComponent);
  } catch {
    throw statusErrors.noSuchResource(); // a malformed %-escape names nothing we serve
  }
  const request = parseResourcePath(segments);
  if (!request) throw statusErrors.noSuchResource();
  const served = await findResource(c, group, version, request.plural);
  const format = negotiateObject(c.req.header("accept"));
  if (!format) throw statusErrors.notAcceptable(OBJECT_MEDIA_TYPES);
  const includeObject = included(c.req.query("includeObject"));
  if (!served && isNamespaceGet(group, request)) return namespaceAnswer(c, request.name, format, includeObject);
  if (!served || (request.namespace !== undefined && !served.info.namespaced)) throw statusErrors.noSuchResource();
  // The real server has no route for a namespaced object without its namespace (`/api/v1/pods/x`).
  if (request.kind === "object" && request.namespace === undefined && served.info.namespaced && !request.watch) throw statusErrors.noSuchResource();
  // `?watch=true` on an item path is still a get there; only the deprecated `/watch/` path watches one object.
  const watching = request.watch || (request.kind === "collection" && isTrue(c.req.query("watch")));
  if (format.kind === "metadata") requireMetadataTarget(format, request.kind === "collection" && !watching);
  if (watching) return watch(c, served, request, format, includeObject);
  return request.kind === "object" ? getObject(c, served, request, format, includeObject) : listObjects(c, served, request, format, includeObject);
}

/**
 * A watch: validated as the server validates watch options, then streamed by the informer object.
 * A name in the path (`get pod x -w` on a deprecated path) becomes a metadata.name field selector.
 */
async function watch(c: K8sContext, served: ServedResource, request: ResourceRequest, format: ObjectFormat, includeObject: IncludeObject): Promise<Response> {
  const q = (name: string) => queryParam(c, name);
  const fields = [q("fieldSelector"), request.kind === "object" ? `metadata.name=${request.name}` : undefined].filter((f) => f !== undefined);
  const fieldSelector = fields.length > 0 ? fields.join(",") : undefined;
  if (fieldSelector !== undefined) checkFieldSelector(fieldSelector, served);
  const timeoutSeconds = watchTimeoutSeconds(q("timeoutSeconds"));
  const options = listOptionsQuery(c, true);
  checkListOptions(options);
  const resourceVersion = options.resourceVersion;
  const params: WatchParams = {
    info: served.info,
    format,
    includeObject,
    bookmarks: isTrue(c.req.query("allowWatchBookmarks")),
    initialEvents: sendsInitialEvents(options),
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(q("labelSelector") === undefined ? {} : { labelSelector: q("labelSelector")! }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(timeoutSeconds === undefined || timeoutSeconds === 0 ? {} : { timeoutSeconds }),
    // Watches are capped per credential (k8s/watcher-caps.ts); `resource` has authenticated it.
    principal: (await principalOf(c)).name,
  };
  const relays = relaysOf(c.env);
  // Served by a relay (k8s/watch-relay.ts), off the informer's thread; WATCH_RELAYS=0: by the informer.
  const opened =
    relays === 0
      ? await informerStub(c, served).watch(params)
      : await relayStub(c.env, addressOf(c, served), relayShard(params.principal ?? "", relays), c.get("placement")).watch(informerObjectName(addressOf(c, served)), params);
  if (!opened.ok) throw new ApiError(opened.error.code, opened.error.message);
  if ("notReady" in opened.value) throw notReadyError(served.info, opened.value.notReady);
  if ("tooMany" in opened.value) throw statusErrors.tooManyRequests(opened.value.tooMany.message, opened.value.tooMany.retryAfterSeconds);
  return new Response(opened.value.stream, { headers: { ...STREAM_HEADERS, ...WATCH_ENCODING } });
}

/** The ListOptions the server's validation reads (list-options.ts), empty values read as absent. */
function listOptionsQuery(c: K8sContext, watch: boolean): ListOptionsQuery {
  const sendInitialEvents = c.req.query("sendInitialEvents");
  return {
    watch,
    resourceVersion: queryParam(c, "resourceVersion"),
    resourceVersionMatch: queryParam(c, "resourceVersionMatch"),
    continue: queryParam(c, "continue"),
    sendInitialEvents: sendInitialEvents === undefined ? undefined : isTrue(sendInitialEvents),
  };
}

/** Headers of a streamed answer; its content-encoding comes from k8s/compression.ts. */
const STREAM_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

function isNamespaceGet(group: string, request: ResourceRequest): request is Extract<ResourceRequest, { kind: "object" }> {
  return group === "" && request.kind === "object" && request.plural === "namespaces" && request.namespace === undefined && !request.watch;
}

/** The namespace stand-in (k8s/namespace-stand-in.ts): Active when a served namespaced resource holds an object in it. */
async function namespaceAnswer(c: K8sContext, name: string, format: ObjectFormat, includeObject: IncludeObject): Promise<Response> {
  const holdsNamespace = async (namespace: string) => {
    for (const resource of (await served(c)).filter((r) => r.info.namespaced)) {
      const answer = await informerStub(c, resource).listAt({ namespace, limit: 1 }, undefined);
      if (answer.ok && !answer.value.value.expired && answer.value.value.items.length > 0) return true;
    }
    return false;
  };
  return new Response(objectBody(NAMESPACES, await namespaceStandIn(name, holdsNamespace), format, includeObject, Date.now()), {
    headers: { "content-type": "application/json", "cache-control": "no-cache, private" },
  });
}

/** A query parameter, with an empty value read as absent (as the API server reads these). */
function queryParam(c: K8sContext, name: string): string | undefined {
  const value = c.req.query(name);
  return value === undefined || value === "" ? undefined : value;
}

function included(value: string | undefined): IncludeObject {
  try {
    return parseIncludeObject(value);
  } catch (error) {
    throw statusErrors.badRequest(error instanceof Error ? error.message : String(error));
  }
}

/**
 * A boolean query parameter as apimachinery reads one (Convert_Slice_string_To_bool): absent is
 * false; present, anything but "0" or "false" (any case) is true — clients send "true", "1", "True".
 */
const isTrue = (value: string | undefined) => value !== undefined && value !== "0" && value.toLowerCase() !== "false";

function informerStub(c: K8sContext, served: ServedResource) {
  return clusterInformerStub(c.env, addressOf(c, served), c.get("placement"));
}

function addressOf(c: K8sContext, served: ServedResource): InformerAddress {
  return { cluster: clusterOf(c), name: served.informer };
}

async function getObject(
  c: K8sContext,
  served: ServedResource,
  request: Extract<ResourceRequest, { kind: "object" }>,
  format: ObjectFormat,
  includeObject: IncludeObject,
): Promise<Response> {
  const key = request.namespace === undefined ? request.name : `${request.namespace}/${request.name}`;
  const answer = await informerStub(c, served).findObject(key);
  if (!answer.ok) throw new ApiError(answer.error.code, answer.error.message);
  requireReady(served.info, answer.value);
  if (answer.value.value === null) throw statusErrors.notFound(served.info, request.name);
  return new Response(objectBody(served.info, answer.value.value, format, includeObject, Date.now()), {
    headers: { "content-type": "application/json", "cache-control": "no-cache, private" },
  });
}

interface ListParams {
  limit: number | undefined;
  continue?: ListToken;
  labelSelector?: string;
  fieldSelector?: string;
  at: ListResourceVersion;
}

function listParams(c: K8sContext, served: ServedResource): ListParams {
  const q = (name: string) => queryParam(c, name);
  const limitText = q("limit");
  const limit = limitText === undefined ? undefined : Number(limitText);
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) throw statusErrors.badRequest(`invalid limit: ${JSON.stringify(limitText)}`);
  const options = listOptionsQuery(c, false);
  checkListOptions(options);
  const { at, limit: pageLimit } = listResourceVersion(options, limit);
  const token = options.continue;
  const fieldSelector = q("fieldSelector");
  if (fieldSelector !== undefined) checkFieldSelector(fieldSelector, served);
  let decoded: ListParams["continue"];
  if (token !== undefined) {
    try {
      decoded = decodeListToken(token);
    } catch (error) {
      throw statusErrors.badRequest(`invalid continue token: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return {
    limit: pageLimit,
    ...(decoded ? { continue: decoded } : {}),
    ...(q("labelSelector") === undefined ? {} : { labelSelector: q("labelSelector")! }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    at,
  };
}

/** Field selectors name metadata.name, metadata.namespace, the type's field labels, or an indexed field. */
function checkFieldSelector(text: string, served: ServedResource): void {
  let requirements;
  try {
    requirements = parseFieldSelector(text).requirements;
  } catch (error) {
    if (error instanceof SelectorError) throw statusErrors.badRequest(`invalid selector: '${text}'; ${error.message}`);
    throw error;
  }
  const labels = served.info.fieldLabels;
  if (labels === null) return;
  for (const { path } of requirements) {
    if (path === "metadata.name" || path === "metadata.namespace" || labels.includes(path) || served.indexedFields.includes(path)) continue;
    throw statusErrors.badRequest(
      labels.length > 0
        ? `field label not supported: ${path}`
        : `"${path}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
    );
  }
}

/** Most items one page read from the informer holds (it also stops at about 4 MB). */
const PAGE_LIMIT = 5_000;
/** The first read of a list without limit: small, so the answer starts streaming at once. */
const FIRST_PAGE_LIMIT = 500;

async function listObjects(
  c: K8sContext,
  served: ServedResource,
  request: Extract<ResourceRequest, { kind: "collection" }>,
  format: ObjectFormat,
  includeObject: IncludeObject,
): Promise<Response> {
  const params = listParams(c, served);
  const stub = informerStub(c, served);
  const query = {
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(params.labelSelector === undefined ? {} : { labelSelector: params.labelSelector }),
    ...(params.fieldSelector === undefined ? {} : { fieldSelector: params.fieldSelector }),
  };
  // A whole list, or a selector scan, is a heavy read: the informer object runs a few at a time and
  // sheds the rest with a 429 before anything is sent (k8s/admission.ts); a page after the first of
  // a list without limit belongs to a read already admitted. One object by namespace and name
  // (`kubectl wait`'s list) reads one key: not heavy.
  const fixedKey = exactKey(request.namespace, params.fieldSelector === undefined ? undefined : parseFieldSelector(params.fieldSelector));
  const heavy = (params.limit === undefined || params.labelSelector !== undefined || params.fieldSelector !== undefined) && fixedKey === undefined;
  const read = async (from: Position | undefined, limit: number, of?: string, part: HeavyRead = "first") => {
    const answer = await stub.listAt({ ...query, limit: Math.min(limit, PAGE_LIMIT) }, from, of, heavy ? part : undefined);
    if (!answer.ok && answer.error.code === "TooManyRequests") throw statusErrors.tooManyRequests(answer.error.message, HEAVY_READ_RETRY_AFTER_SECONDS);
    return unwrap(answer);
  };
  const first = await readAt(params.at, {
    read: async () => {
      // A token names the informer whose log its position is in: another may serve the resource now.
      const answer = await read(params.continue?.from, params.limit ?? FIRST_PAGE_LIMIT, params.continue?.informer);
      requireReady(served.info, answer);
      return answer;
    },
    reach: async (rv, waitMs) => unwrap(await stub.awaitResourceVersion(rv, waitMs)),
  });
  if (first.value.expired) {
    const { resume } = first.value;
    throw statusErrors.expiredContinue(resume && encodeListToken({ rv: first.resourceVersion, informer: served.informer, from: resume }));
  }
  const resourceVersion = params.continue?.rv ?? first.resourceVersion;
  const page = first.value;
  const firstPage: ListPageAnswer = { items: page.items };
  let rest: AsyncIterable<string[]> | undefined;
  if (page.next) {
    if (params.limit !== undefined) firstPage.continue = encodeListToken({ rv: resourceVersion, informer: served.informer, from: page.next });
    else rest = remainingPages((from) => read(from, PAGE_LIMIT, undefined, "next"), page.next);
  }
  const body = listBody({ info: served.info, format, includeObject, resourceVersion, now: Date.now(), first: firstPage, ...(rest ? { rest } : {}) });
  return new Response(body, { headers: { ...STREAM_HEADERS, ...listEncoding(c.req.header("accept-encoding"), body) } });
}

/** The pages after `next` of a list without limit, each as one informer read. */
async function* remainingPages(
  read: (from: Position) => Promise<{ value: { expired: true } | { expired: false; items: string[]; next?: Position } }>,
  next: Position,
): AsyncGenerator<string[]> {
  let from: Position | undefined = next;
  while (from) {
    const answer = await read(from);
    if (answer.value.expired) throw new Error("the cache moved on too far while the list was being sent");
    yield answer.value.items;
    from = answer.value.next;
  }
}
