/**
 * OpenAPI under `/k8s` (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version path>`): the
 * upstream API server's own documents, fetched once per cluster, document and media type, and
 * kept in the Cache API for CACHE_TTL_SECONDS, so `kubectl explain` works and Argo CD's cluster
 * cache (which loads the v2 document as protobuf before it builds anything) can start. Real
 * schemas need the real server: we hold objects, not their types.
 *
 * Guarantees: the media type asked upstream is one the server offers (JSON, or the v2/v3
 * protobuf) and the answer's is passed on; the v3 index is narrowed to the group versions this
 * cluster serves and its `serverRelativeURL`s are rewritten under this API server's prefix,
 * because client-go replaces the whole path with them (rest.Request.RequestURI); a document the
 * upstream cannot give is a Status (404 if it serves none, 503 otherwise) saying why.
 *
 * Where we differ: the v2 document and each v3 document are the upstream's whole ones, including
 * kinds we do not serve (narrowing a multi-MB document would parse it per fetch, and kubectl
 * resolves the kind through our discovery first); a v3 `?hash=` is not checked (the upstream
 * would redirect a stale one, and redirects from an API server are refused): the current
 * document is the answer. On a workers.dev host the Cache API stores nothing, so each read
 * fetches again.
 */
import type { UpstreamOpenApi } from "../clusters/upstream-openapi.ts";
import { type ResourceInfo, groupVersion } from "./catalog.ts";
import { StatusError } from "./status.ts";

export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
export const OPENAPI_V3_PROTOBUF = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
/** How long a fetched document stands: a CRD change shows up within this. */
export const CACHE_TTL_SECONDS = 600;

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
  /** The Cache API's cache, or undefined where there is none. */
  cache: Cache | undefined;
}

/** Whether `path` names an OpenAPI document the API server serves. */
export function isOpenApiPath(path: string): boolean {
  return /^\/openapi\/(v2|v3|v3\/(api\/v1|apis\/[a-z0-9.-]+\/[a-z0-9]+))$/.test(path);
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
  const servedPaths = new Set(served.map((info) => (info.group === "" ? `api/${info.version}` : `apis/${groupVersion(info)}`)));
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const [path, entry] of Object.entries(index.paths ?? {})) {
    if (!servedPaths.has(path) || typeof entry.serverRelativeURL !== "string") continue;
    paths[path] = { serverRelativeURL: `${prefix}${entry.serverRelativeURL}` };
  }
  return JSON.stringify({ paths });
}

export async function serveOpenApi(request: OpenApiRequest): Promise<Response> {
  const mediaType = negotiateOpenApi(request.accept, request.path);
  if (mediaType === undefined) {
    throw new StatusError(406, "NotAcceptable", `only the following media types are accepted: application/json${request.path === "/openapi/v3" ? "" : `, ${request.path === "/openapi/v2" ? OPENAPI_V2_PROTOBUF : OPENAPI_V3_PROTOBUF}`}`);
  }
  const document = await cachedDocument(request, mediaType);
  const headers = { "content-type": document.contentType, "cache-control": "no-cache, private" };
  if (request.path === "/openapi/v3") return new Response(rewriteIndex(document.body, request.prefix, request.served), { headers });
  return new Response(document.body, { headers });
}

async function cachedDocument(request: OpenApiRequest, mediaType: string): Promise<{ contentType: string; body: Uint8Array<ArrayBuffer> }> {
  // A key per cluster, document and media type; the host is ours and never fetched.
  const key = new Request(`https://openapi.edge-informer.invalid/${encodeURIComponent(request.cluster)}${request.path}?as=${encodeURIComponent(mediaType)}`);
  const hit = await request.cache?.match(key);
  if (hit) return { contentType: hit.headers.get("content-type") ?? mediaType, body: new Uint8Array(await hit.arrayBuffer()) };
  const fetched = await request.load(request.path, mediaType);
  if (!fetched.ok) {
    const why = `the OpenAPI document ${request.path} could not be read from cluster '${request.cluster}''s API server: ${fetched.message}`;
    throw fetched.status === 404 ? new StatusError(404, "NotFound", why, {}) : new StatusError(503, "ServiceUnavailable", why, { retryAfterSeconds: 10 });
  }
  await request.cache?.put(key, new Response(fetched.body, { headers: { "content-type": fetched.contentType, "cache-control": `max-age=${CACHE_TTL_SECONDS}` } }));
  return fetched;
}
