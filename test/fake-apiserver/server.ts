/**
 * HTTP wiring of the fake Kubernetes API server (node:http, no dependencies). One server hosts many
 * independent clusters:
 *   /clusters/{id}/<kubernetes path>   the cluster {id}        /<kubernetes path>   the cluster "default"
 *   /clusters/{id}/__control/…         its control API          /__control/…         default's control API
 *   /__control/clusters                create / list clusters
 * Every Kubernetes request is recorded in its cluster (before auth, so 401s are visible too).
 * `close()` ends open watches cleanly, drops remaining connections and stops listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ClusterRegistry, type Cluster } from "./cluster.ts";
import { handleClusters, handleControl } from "./control.ts";
import { apiGroup, apiVersions, groupList, resourceList, versionInfo } from "./discovery.ts";
import { serveGet } from "./get.ts";
import { sendJson, sendStatus } from "./http.ts";
import { noteFault, type KubeRequest } from "./kube-request.ts";
import { serveList } from "./list.ts";
import { parseListOptions } from "./list-options.ts";
import { serveResponseFault } from "./response-faults.ts";
import { routeKubePath } from "./routes.ts";
import { metadataOnly, requireForm } from "./metadata-only.ts";
import { OPENAPI_V2_PROTOBUF, openApiV2, openApiV2Protobuf, openApiV3Document, openApiV3Index } from "./openapi.ts";
import { crdNamed } from "./crd.ts";
import { methodNotAllowed, noSuchResource, notFound, notAcceptable, status, StatusError, unauthorized } from "./status.ts";
import type { RecordedRequest } from "./types.ts";
import { serveWatch } from "./watch.ts";
import { serveCreate, serveDelete, serveUpdate } from "./write.ts";

export interface FakeApiServer {
  /** e.g. http://127.0.0.1:8001 — the "default" cluster's API root. */
  url: string;
  close(): Promise<void>;
  /** In-process access to the clusters (seeding without HTTP). */
  clusters: ClusterRegistry;
}

export async function startFakeApiServer(options: { port: number; host?: string }): Promise<FakeApiServer> {
  const host = options.host ?? "127.0.0.1";
  const registry = new ClusterRegistry();
  const server = createServer((req, res) => {
    handle(registry, req, res).catch((error: unknown) => {
      if (error instanceof StatusError) {
        if (!res.headersSent) sendStatus(res, error.status);
        else res.destroy();
        return;
      }
      console.error("fake-apiserver: request failed", req.method, req.url, error);
      if (!res.headersSent) sendStatus(res, status(500, "InternalError", `Internal error occurred: ${(error as Error).message}`));
      else res.destroy();
    });
  });
  // Keep idle keep-alive connections longer than clients do, so a reused connection is never cut mid-request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  return {
    url,
    clusters: registry,
    close: () =>
      new Promise<void>((resolve) => {
        registry.closeAllWatches();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(registry: ClusterRegistry, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://fake");
  let path = url.pathname;
  if (path === "/__control/clusters" || path === "/__control/clusters/") {
    await handleClusters(registry, req, res);
    return;
  }
  let cluster: Cluster = registry.defaultCluster;
  const scoped = /^\/clusters\/([^/]+)(\/.*)?$/.exec(path);
  if (scoped) {
    const found = registry.get(decodeURIComponent(scoped[1]!));
    if (!found) {
      sendStatus(res, status(404, "NotFound", `cluster "${scoped[1]}" not found`));
      return;
    }
    cluster = found;
    path = scoped[2] ?? "/";
  }
  if (path === "/__control" || path.startsWith("/__control/")) {
    await handleControl(registry, cluster, path.slice("/__control".length), url, req, res);
    return;
  }
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) if (!(k in query)) query[k] = v;
  const record = cluster.record({ method: req.method ?? "GET", path, query, time: Date.now(), verb: "unknown", status: 0 });
  try {
    await handleKube(cluster, path, url.searchParams, record, req, res);
  } catch (error) {
    if (!(error instanceof StatusError) || res.headersSent) throw error;
    sendStatus(res, error.status);
  } finally {
    if (res.headersSent) record.status = res.statusCode;
  }
}

async function handleKube(
  cluster: Cluster,
  path: string,
  params: URLSearchParams,
  record: RecordedRequest,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const token = cluster.settings.token;
  if (token && req.headers.authorization !== `Bearer ${token}`) {
    sendStatus(res, unauthorized());
    return;
  }
  const accept = req.headers.accept;
  const route = routeKubePath(path);
  // JSON everywhere; the OpenAPI route below also offers v2 as protobuf.
  if (accept && !/json|\*\/\*|application\/\*/.test(accept) && route.kind !== "openapi") {
    sendStatus(res, notAcceptable());
    return;
  }
  const method = req.method ?? "GET";
  switch (route.kind) {
    case "notFound":
      sendStatus(res, noSuchResource());
      return;
    case "crd": {
      record.verb = "get";
      const crd = crdNamed(route.name);
      if (method !== "GET") sendStatus(res, methodNotAllowed(method));
      else if (!crd) sendStatus(res, notFound("customresourcedefinitions", "apiextensions.k8s.io", route.name));
      else sendJson(res, 200, crd);
      return;
    }
    case "openapi": {
      record.verb = "discovery";
      // v2 as protobuf when asked first (client-go's discovery asks for it alone); otherwise JSON.
      if (route.document === "v2" && accept?.split(",")[0]?.trim().startsWith(OPENAPI_V2_PROTOBUF)) {
        res.writeHead(200, { "content-type": OPENAPI_V2_PROTOBUF });
        res.end(openApiV2Protobuf());
        return;
      }
      if (accept && !/application\/json|\*\/\*|application\/\*/.test(accept)) {
        sendStatus(res, notAcceptable());
        return;
      }
      const document = route.document === "v2" ? openApiV2() : route.document === "v3" ? openApiV3Index() : openApiV3Document(route.document.groupVersion);
      if (!document) sendStatus(res, noSuchResource());
      else sendJson(res, 200, document);
      return;
    }
    case "version":
    case "apiVersions":
    case "groupList":
    case "group":
    case "resourceList": {
      record.verb = "discovery";
      if (method !== "GET") {
        sendStatus(res, methodNotAllowed(method));
        return;
      }
      const versionFault = route.kind === "version" ? cluster.faults.takeResponse("", "version") : undefined;
      if (versionFault) {
        noteFault(record, versionFault.kind);
        await serveResponseFault(res, versionFault);
        return;
      }
      const body =
        route.kind === "version"
          ? versionInfo()
          : route.kind === "apiVersions"
            ? apiVersions(req.headers.host ?? "127.0.0.1")
            : route.kind === "groupList"
              ? groupList()
              : route.kind === "group"
                ? apiGroup(route.group)
                : resourceList(route.group, route.version);
      sendJson(res, 200, body);
      return;
    }
    case "collection":
    case "object": {
      const { def, namespace } = route;
      record.resource = def.name;
      if (namespace !== undefined) record.namespace = namespace;
      if (route.kind === "object" && def.namespaced && namespace === undefined) {
        sendStatus(res, noSuchResource()); // `/api/v1/pods/{name}` is no route on a real server
        return;
      }
      const ctx: KubeRequest = { cluster, def, namespace, params, record, req, res };
      const isWatch = route.forceWatch || ["1", "t", "T", "TRUE", "true", "True"].includes(params.get("watch") ?? "");
      if (method === "GET") requireForm(metadataOnly(req), route.kind === "collection" && !isWatch);
      if (method === "GET" && (route.kind === "collection" || isWatch)) {
        if (route.kind === "object") {
          // Watching one object is a watch on its collection with a name field selector.
          const existing = params.get("fieldSelector");
          params.set("fieldSelector", `${existing ? `${existing},` : ""}metadata.name=${route.name}`);
        }
        record.verb = isWatch ? "watch" : "list";
        const responseFault = cluster.faults.takeResponse(def.name, record.verb);
        if (responseFault) {
          noteFault(record, responseFault.kind);
          await serveResponseFault(res, responseFault);
          return;
        }
        const options = parseListOptions(params, def, { forceWatch: route.forceWatch, watchListEnabled: cluster.settings.watchList });
        await (options.watch ? serveWatch(ctx, options) : serveList(ctx, options));
        return;
      }
      if (route.kind === "collection") {
        if (method === "POST") {
          record.verb = "create";
          await serveCreate(ctx);
        } else {
          sendStatus(res, methodNotAllowed(method));
        }
        return;
      }
      switch (method) {
        case "GET":
          record.verb = "get";
          serveGet(ctx, route.name);
          return;
        case "PUT":
          record.verb = "update";
          await serveUpdate(ctx, route.name);
          return;
        case "DELETE":
          record.verb = "delete";
          await serveDelete(ctx, route.name);
          return;
        default:
          sendStatus(res, methodNotAllowed(method));
      }
    }
  }
}
