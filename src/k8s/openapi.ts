/**
 * OpenAPI under `/k8s` (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version path>`): the
 * upstream API server's own documents, so `kubectl explain` works and Argo CD's cluster cache
 * (which loads the v2 document as protobuf before it builds anything) can start. Real schemas need
 * the real server: we hold objects, not their types.
 *
 * Guarantees:
 * - Only a reader of the cluster gets here (http/k8s-endpoints.ts): the documents name every kind
 *   installed there.
 * - A v3 group version the cluster's `/k8s` does not serve is a 404 Status, as kube-apiserver
 *   answers an unknown one, and asks nothing upstream: no reader can make the API server (and the
 *   factory through which it is read) fetch a document per made-up group (review N6).
 * - One document per cluster, document and media type, kept in this isolate's memory
 *   (k8s/openapi-cache.ts: single flight, bounded in bytes, 404s kept briefly) and, where it keeps
 *   anything, in the Cache API as a second level shared by the isolates of a location (it keeps
 *   nothing on workers.dev or behind Access). A miss reads the upstream through the factory, which
 *   passes the body on without holding it (clusters/upstream-openapi.ts).
 * - The media type asked upstream is one the server offers (JSON, or the v2/v3 protobuf) and the
 *   answer's is passed on; the v3 index is narrowed to the group versions this cluster serves and
 *   its `serverRelativeURL`s are rewritten under this API server's prefix, because client-go
 *   replaces the whole path with them (rest.Request.RequestURI); a document the upstream cannot
 *   give is a Status (404 if it serves none, 503 otherwise) saying why.
 *
 * Where we differ: the v2 document and each v3 document are the upstream's whole ones, including
 * kinds we do not serve (narrowing a multi-MB document would parse it per fetch, and kubectl
 * resolves the kind through our discovery first); a v3 `?hash=` is not checked (the upstream
 * would redirect a stale one, and redirects from an API server are refused): the current
 * document is the answer.
 */
import type { UpstreamOpenApi } from "../clusters/upstream-openapi.ts";
import { type ResourceInfo, groupVersion } from "./catalog.ts";
import { DOCUMENT_TTL_MS, type OpenApiCache, type OpenApiSource } from "./openapi-cache.ts";
import { StatusError, statusErrors } from "./status.ts";

export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
export const OPENAPI_V3_PROTOBUF = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
/** Where a document comes from: the cluster's API server, through the factory (it holds the credentials). */
export type LoadOpenApi = (path: string, accept: string) => Promise<UpstreamOpenApi>;

export interface OpenApiRequest {
  cluster: string;
  /** This API server's path prefix: `/k8s` or `/k8s/clusters/{cluster}`. */
  prefix: string;
  /** The path below the prefix: `/openapi/v2`, `/openapi/v3`, `/openapi/v3/apis/apps/v1`. */
  path: string;
  accept: string | undefined;
  served: readonly ResourceInfo[];
  load: LoadOpenApi;
  /** This isolate's documents (openapi-cache.ts). */
  documents: OpenApiCache;
  /** The Cache API's cache, or undefined where there is none. */
  cache: Cache | undefined;
}

/** Whether `path` names an OpenAPI document the API server serves. */
export function isOpenApiPath(path: string): boolean {
  return /^\/openapi\/(v2|v3|v3\/(api\/v1|apis\/[a-z0-9.-]+\/[a-z0-9]+))$/.test(path);
}

/** The v3 path of a served group version (`api/v1`, `apis/apps/v1`), as the v3 index names it. */
function v3Path(info: Pick<ResourceInfo, "group" | "version">): string {
  return info.group === "" ? `api/${info.version}` : `apis/${groupVersion(info)}`;
}

/** Whether `path` is a document this cluster has: v2, the v3 index, or a served group version's. */
export function servesOpenApiPath(path: string, served: readonly ResourceInfo[]): boolean {
  if (path === "/openapi/v2" || path === "/openapi/v3") return true;
  return served.some((info) => `/openapi/v3/${v3Path(info)}` === path);
}

/** The media type to ask for: the first the client accepts of those the server offers for this document. */
export function negotiateOpenApi(accept: string | undefined, path: string): string | undefined {
  const protobuf = path === "/openapi/v2" ? OPENAPI_V2_PROTOBUF : path === "/openapi/v3" ? undefined : OPENAPI_V3_PROTOBUF;
  for (const clause of (accept ?? "*/*").split(",")) {
    const type = clause.split(";")[0]!.trim().toLowerCase();
    if (type === "application/json" || type === "*/*" || type === "application/*") return "application/json";
    if (protobuf !== undefined && type === protobuf.toLowerCase()) return protobuf;
  }
  return undefined;
}

/** The v3 index, narrowed to the served group versions, its URLs under `prefix`. */
export function rewriteIndex(body: Uint8Array, prefix: string, served: readonly ResourceInfo[]): string {
  const index = JSON.parse(new TextDecoder().decode(body)) as { paths?: Record<string, { serverRelativeURL?: string }> };
  const servedPaths = new Set(served.map(v3Path));
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [path, entry] of Object.entries(index.paths ?? {})) {
    if (!servedPaths.has(path) || typeof entry.serverRelativeURL !== "string") continue;
    paths[path] = { serverRelativeURL: `${prefix}${entry.serverRelativeURL}` };
  }
  return JSON.stringify({ paths });
}

export async function serveOpenApi(request: OpenApiRequest): Promise<Response> {
  if (!servesOpenApiPath(request.path, request.served)) throw statusErrors.noSuchResource();
  const mediaType = negotiateOpenApi(request.accept, request.path);
  if (mediaType === undefined) {
    throw new StatusError(406, "NotAcceptable", `only the following media types are accepted: application/json${request.path === "/openapi/v3" ? "" : `, ${request.path === "/openapi/v2" ? OPENAPI_V2_PROTOBUF : OPENAPI_V3_PROTOBUF}`}`);
  }
  // A key per cluster, document and media type; the host is ours and never fetched.
  const key = `https://openapi.edge-informer.invalid/${encodeURIComponent(request.cluster)}${request.path}?as=${encodeURIComponent(mediaType)}`;
  const document = await request.documents.get(key, () => fromSecondLevel(request, key, mediaType));
  if (!document.ok) {
    const why = `the OpenAPI document ${request.path} could not be read from cluster '${request.cluster}''s API server: ${document.message}`;
    throw document.status === 404 ? new StatusError(404, "NotFound", why, {}) : new StatusError(503, "ServiceUnavailable", why, { retryAfterSeconds: 10 });
  }
  const headers = { "content-type": document.contentType, "cache-control": "no-cache, private" };
  if (request.path === "/openapi/v3") return new Response(rewriteIndex(document.body, request.prefix, request.served), { headers });
  return new Response(document.body, { headers });
}

/** A miss of this isolate's: the Cache API's copy where it has one, else the upstream's (kept there once read). */
async function fromSecondLevel(request: OpenApiRequest, key: string, mediaType: string): Promise<OpenApiSource> {
  const { cache } = request;
  const hit = await cache?.match(key).catch(() => undefined);
  if (hit?.body) return { ok: true, contentType: hit.headers.get("content-type") ?? mediaType, body: hit.body };
  const fetched = await request.load(request.path, mediaType);
  if (!fetched.ok || !cache) return fetched;
  const headers = { "content-type": fetched.contentType, "cache-control": `max-age=${DOCUMENT_TTL_MS / 1000}` };
  return { ...fetched, read: (bytes) => cache.put(key, new Response(bytes, { headers })) };
}
