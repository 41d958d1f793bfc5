/**
 * `/k8s`: the cache as a read-only Kubernetes API server (API.md "Kubernetes-compatible read API";
 * kubernetes-api-server-facts.md). Discovery, get and list (JSON or Table) of the resources this
 * deployment mirrors (k8s/served.ts says which informer serves which), with `READ_TOKEN` as the
 * bearer token kubectl sends. Every error is a `Status`; every write verb is 405, since the cache is
 * read-only. The wire formats live in src/k8s/; this file only routes: requests are read by
 * k8s-request.ts, the served resources are k8s-served.ts's, gets and lists k8s-reads.ts's, watches
 * k8s-watch.ts's.
 *
 * One API server per cluster (issue 12): `/k8s/clusters/{cluster}/…` answers as that cluster's API
 * server, `/k8s/…` as the default cluster's, through the same handlers, so a kubeconfig context per
 * cluster (`server: https://<worker>/k8s/clusters/prod`) works with kubectl. An invalid cluster name
 * is a 400 Status, an unknown cluster a 404 Status, both before any informer object is touched; a
 * cluster only ever sees its own informers (the served-resource cache is kept per cluster).
 */
import { errorText, logger } from "../log.ts";
import { contentTag, ifNoneMatch } from "../k8s/etag.ts";
import { Hono } from "hono";
import { ApiError, type ErrorCode } from "../errors.ts";
import { DISCOVERY_MEDIA_TYPES, negotiateDiscovery, negotiateObject, OBJECT_MEDIA_TYPES } from "../k8s/accept.ts";
import {
  aggregatedContentType,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  groupsOf,
} from "../k8s/discovery.ts";
import { parseResourcePath, type ResourceRequest } from "../k8s/served.ts";
import { subresourceOf } from "../k8s/subresources.ts";
import { StatusError, statusErrors, statusResponse } from "../k8s/status.ts";
import type { AppEnv } from "./app-env.ts";
import { CLUSTER_NAME_RULE, DEFAULT_CLUSTER, isClusterName } from "../clusters/cluster.ts";
import { clusterOf, permit, principalOf } from "./auth.ts";
import { clusterPlacement, isKnownCluster } from "./known-informer.ts";
import { isReviewPath } from "../k8s/access-review.ts";
import { requireMetadataTarget } from "../k8s/metadata-only.ts";
import { serverEndpoints } from "./k8s-endpoints.ts";
import { apiPathOf, included, isTrue, type K8sContext, queryParam } from "./k8s-request.ts";
import { requireAllowed } from "./read-authorization.ts";
import { endpointAttributes, isResourcePath, resourceAttributes } from "../k8s/request-attributes.ts";
import { findResource, infos, infosWith } from "./k8s-served.ts";
import { getObject, listObjects, namespaceAnswer, namespacesAnswer } from "./k8s-reads.ts";
import { watch } from "./k8s-watch.ts";


/** The API server's StatusReason for our error codes that are not already one. */
const K8S_REASON: Partial<Record<ErrorCode, string>> = { Misconfigured: "InternalError" };

function json(body: unknown, contentType = "application/json"): Response {
  return new Response(JSON.stringify(body), { headers: { "content-type": contentType, "cache-control": "no-cache, private" } });
}

/**
 * A discovery document, legacy or aggregated as the client's Accept negotiates. The aggregated one
 * carries an ETag of its content, and a matching `If-None-Match` is a 304 (aggregated/etag.go), so
 * clients revalidate rather than refetch; its Cache-Control stays `no-cache, private` (the server
 * says `public`): answers to a credential are no shared cache's to keep.
 */
async function discovery(c: K8sContext, legacy: () => unknown, aggregated: (version: "v2" | "v2beta1") => unknown): Promise<Response> {
  const format = negotiateDiscovery(c.req.header("accept"));
  if (!format) throw statusErrors.notAcceptable(DISCOVERY_MEDIA_TYPES);
  if (format.kind === "legacy") return json(legacy());
  const body = JSON.stringify(aggregated(format.version));
  const headers = { "content-type": aggregatedContentType(format.version), "cache-control": "no-cache, private", vary: "Accept", etag: await contentTag(body) };
  if (ifNoneMatch(c.req.header("if-none-match"), headers.etag)) return new Response(null, { status: 304, headers });
  return new Response(body, { headers });
}

/**
 * An `rbac` cluster's RBAC decides every request as kube-apiserver's would (http/read-authorization.ts):
 * discovery, `/version`, health and OpenAPI as non-resource paths, self-reviews as `create` on their
 * resource, here; resource requests in `resource`, once their path is read.
 */
async function authorizeEndpoint(c: K8sContext, next: () => Promise<void>): Promise<void> {
  const path = apiPathOf(c);
  const attributes = endpointAttributes(c.req.method, path);
  if (attributes.verb === "create" || !isResourcePath(path)) await requireAllowed(c, clusterOf(c), attributes);
  await next();
}

/**
 * The default cluster's placement for the `/k8s` mount (a named cluster's is set by
 * requireK8sCluster): without it, its objects were addressed with no jurisdiction — other, empty
 * objects when KUBE_API_JURISDICTION is set.
 */
async function placeCluster(c: K8sContext, next: () => Promise<void>): Promise<void> {
  if (c.get("placement") === undefined) c.set("placement", await clusterPlacement(c.env, clusterOf(c)));
  await next();
}

/** One API server's routes: mounted at `/k8s` (the default cluster) and at `/k8s/clusters/{cluster}`. */
const apiServerRoutes = new Hono<AppEnv>()
  .use("*", placeCluster)
  .use("*", authorizeEndpoint)
  .route("/", serverEndpoints((c) => infos(c)))
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
    if (error instanceof ApiError) {
      const details = error.retryAfterSeconds === undefined ? undefined : { retryAfterSeconds: error.retryAfterSeconds };
      return statusResponse(new StatusError(error.status, K8S_REASON[error.code] ?? error.code, error.message, details));
    }
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
  // Authorized before the resource is looked up, as the server does: a refused reader learns nothing of what is served.
  await requireAllowed(c, clusterOf(c), resourceAttributes(group, request, isTrue(c.req.query("watch")), queryParam(c, "fieldSelector")));
  const served = await findResource(c, group, version, request.plural);
  const format = negotiateObject(c.req.header("accept"));
  if (!format) throw statusErrors.notAcceptable(OBJECT_MEDIA_TYPES);
  const includeObject = included(c.req.query("includeObject"));
  if (!served && isNamespaceGet(group, request)) return namespaceAnswer(c, request.name, format, includeObject);
  if (!served && isNamespaceList(group, request)) {
    const watchingNamespaces = request.watch || isTrue(c.req.query("watch"));
    if (format.kind === "metadata") requireMetadataTarget(format, !watchingNamespaces);
    return namespacesAnswer(c, format, includeObject, watchingNamespaces);
  }
  if (!served || (request.namespace !== undefined && !served.info.namespaced)) throw statusErrors.noSuchResource();
  // The real server has no route for a namespaced object without its namespace (`/api/v1/pods/x`).
  if (request.kind === "object" && request.namespace === undefined && served.info.namespaced && !request.watch) throw statusErrors.noSuchResource();
  // `?watch=true` on an item path is still a get there; only the deprecated `/watch/` path watches one object.
  const watching = request.watch || (request.kind === "collection" && isTrue(c.req.query("watch")));
  if (format.kind === "metadata") requireMetadataTarget(format, request.kind === "collection" && !watching);
  if (request.kind === "object" && request.subresource !== undefined) {
    const subresource = subresourceOf(served.info, request.subresource);
    if (subresource === undefined) throw statusErrors.noSuchResource();
    if (subresource === "refused") throw statusErrors.subresourceNotServed(served.info, request.name, request.subresource);
    return getObject(c, served, request, format, includeObject, subresource);
  }
  if (watching) return watch(c, served, request, format, includeObject);
  return request.kind === "object" ? getObject(c, served, request, format, includeObject) : listObjects(c, served, request, format, includeObject);
}

/** `/api/v1/namespaces` (and its deprecated `/api/v1/watch/namespaces`): synthesized when not mirrored (k8s/namespace-list.ts). */
function isNamespaceList(group: string, request: ResourceRequest): boolean {
  return group === "" && request.kind === "collection" && request.plural === "namespaces" && request.namespace === undefined;
}

function isNamespaceGet(group: string, request: ResourceRequest): request is Extract<ResourceRequest, { kind: "object" }> {
  return group === "" && request.kind === "object" && request.plural === "namespaces" && request.namespace === undefined && !request.watch;
}
