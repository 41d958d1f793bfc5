/**
 * The `/k8s` endpoints that are not resources: `/version` (the upstream's, kept:
 * k8s/server-version.ts), health (`/healthz`, `/livez`, `/readyz`), the
 * self-review APIs (the only POSTs `/k8s` accepts: they change nothing) and OpenAPI (the
 * upstream's documents, cached: k8s/openapi.ts, read by readers of the cluster only). Mounted in
 * src/http/k8s.ts beside the resource routes, once per API server (`/k8s` and
 * `/k8s/clusters/{cluster}`), after its credential and cluster checks. The answers' shapes live
 * in src/k8s/health.ts, src/k8s/access-review.ts and src/k8s/openapi.ts; this file only routes.
 */
import { limitBody } from "./validate.ts";
import { type Context, Hono } from "hono";
import { credentialConfig } from "../auth/credentials.ts";
import { permission } from "../auth/principal.ts";
import { answerReview, REVIEW_PATHS, type ReviewPath } from "../k8s/access-review.ts";
import type { ResourceInfo } from "../k8s/catalog.ts";
import { HEALTH_ENDPOINTS, healthResponse } from "../k8s/health.ts";
import { isOpenApiPath, serveOpenApi } from "../k8s/openapi.ts";
import { openApiDocuments } from "../k8s/openapi-cache.ts";
import { PROTOBUF_MEDIA_TYPE, reviewFromProtobuf } from "../k8s/review-protobuf.ts";
import { factoryStub } from "../objects/factory-stub.ts";
import { serverVersion } from "../k8s/server-version.ts";
import { statusErrors } from "../k8s/status.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf, permit, principalOf } from "./auth.ts";
import { apiPathOf, apiRootOf } from "./k8s-request.ts";
import { readAuthorizationOf } from "./read-authorization.ts";
import { BY_SCOPES } from "../auth/rbac/read-authorization.ts";

/** What this cluster serves, as the resource routes see it. */
export type ServedInfos = (c: Context<AppEnv>) => Promise<ResourceInfo[]>;

/** A self-review is a few hundred bytes; anything far larger is not one, and is not buffered. */
const MAX_REVIEW_BYTES = 16 * 1024;

export function serverEndpoints(servedInfos: ServedInfos): Hono<AppEnv> {
  const routes = new Hono<AppEnv>();
  // Indented, as the API server writes it (routes/version.go).
  routes.on("GET", ["/version", "/version/"], async (c) => {
    const cluster = clusterOf(c);
    const info = await serverVersion(cluster, () => factoryStub(c.env).serverVersion(cluster));
    return new Response(JSON.stringify(info, null, 2), { headers: { "content-type": "application/json" } });
  });
  for (const endpoint of HEALTH_ENDPOINTS) {
    routes.get(`/${endpoint}`, (c) => healthResponse(endpoint, c.req.query("verbose") !== undefined));
    routes.get(`/${endpoint}/:check`, (c) => healthResponse(endpoint, false, c.req.param("check")));
  }
  for (const path of Object.keys(REVIEW_PATHS) as ReviewPath[]) {
    routes.post(`/apis/${path}`, limitBody(MAX_REVIEW_BYTES, "a review"), async (c) => {
      const principal = await principalOf(c);
      const mayRead = permission(principal, "read", clusterOf(c), await credentialConfig(c.env), c.env) === undefined;
      let body: unknown;
      if ((c.req.header("content-type") ?? "").startsWith(PROTOBUF_MEDIA_TYPE)) {
        body = reviewFromProtobuf(REVIEW_PATHS[path], new Uint8Array(await c.req.arrayBuffer()));
      } else {
        try {
          body = await c.req.json();
        } catch {
          throw statusErrors.badRequest("the body of the request is not JSON");
        }
      }
      const authorization = mayRead ? await readAuthorizationOf(c, clusterOf(c)) : BY_SCOPES;
      const answer = answerReview(path, body, { principal, mayRead, served: mayRead ? await servedInfos(c) : [], authorization });
      return new Response(JSON.stringify(answer), { status: 201, headers: { "content-type": "application/json", "cache-control": "no-cache, private" } });
    });
  }
  routes.get("/openapi/*", async (c) => {
    const cluster = clusterOf(c);
    // A cluster's documents name every kind installed there (its CRDs): its readers' only (review N6).
    await permit(c, "read", cluster);
    // Where app.ts mounts /k8s: the v3 index names documents by their path from the host.
    const prefix = apiRootOf(c);
    const path = apiPathOf(c);
    if (!isOpenApiPath(path)) throw statusErrors.noSuchResource();
    return serveOpenApi({
      cluster,
      prefix,
      path,
      accept: c.req.header("accept"),
      served: await servedInfos(c),
      load: (upstreamPath, accept) => factoryStub(c.env).openApi(cluster, upstreamPath, accept),
      documents: openApiDocuments,
      // The Workers runtime's shared cache (its `default`, absent from the DOM's CacheStorage type).
      cache: (globalThis as unknown as { caches?: { default?: Cache } }).caches?.default,
    });
  });
  return routes;
}
