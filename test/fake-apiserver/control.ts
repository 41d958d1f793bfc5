/**
 * The control API tests use to drive a fake cluster (JSON in, JSON out; errors are Status objects):
 *   POST   /__control/clusters            {id?, startRevision?, token?, bookmarkIntervalMs?} → 201 {id, url}
 *   GET    /__control/clusters            → {items: [{id, url}]}
 * and per cluster, under /clusters/{id}/__control (or /__control for "default"):
 *   GET    /            → ClusterInfo          DELETE /cluster → drop the cluster (not "default")
 *   POST   /objects     {op, resource, object} | {ops: [...]} → ApplyResult (ops applied in order;
 *                       the first failure answers its Status and leaves earlier ops applied)
 *   POST   /seed        SeedOptions → SeedResult          POST /churn  ChurnOptions → ChurnResult
 *   GET    /state?resource=pods[&namespace=ns] → StateResult
 *   GET    /requests → {items}                            DELETE /requests
 *   POST   /compact     {revision?} → CompactResult
 *   GET    /faults → {items}   POST /faults (a Fault or {faults: [...]})   DELETE /faults
 *   GET    /settings   POST /settings (Settings) → the settings now in force
 *   POST   /close-watches → {closed}
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { churn } from "./churn.ts";
import type { Cluster, ClusterRegistry, ClusterSettings } from "./cluster.ts";
import { FaultError, validateFault } from "./faults.ts";
import { readJson, sendJson, sendStatus } from "./http.ts";
import { asListItem, resourceByName } from "./resources.ts";
import { seedBulk } from "./seed.ts";
import { badRequest, methodNotAllowed, status, StatusError } from "./status.ts";
import type { ApplyResult, ChurnOptions, ClusterInfo, FakeObject, ObjectOp, SeedOptions } from "./types.ts";

const notFoundHere = (path: string) => status(404, "NotFound", `no control endpoint ${path}`);

function clusterUrl(req: IncomingMessage, id: string): string {
  return `http://${req.headers.host ?? "127.0.0.1"}/clusters/${id}`;
}

function asRecord(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new StatusError(badRequest("the body must be a JSON object"));
  return body as Record<string, unknown>;
}

function parseRevision(value: unknown, field: string): bigint | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^[0-9]+$/.test(text) || BigInt(text) === 0n) {
    throw new StatusError(badRequest(`${field} must be a positive decimal string`));
  }
  return BigInt(text);
}

function applySettings(cluster: Cluster, input: Record<string, unknown>): void {
  const next: ClusterSettings = { ...cluster.settings };
  for (const field of ["bookmarkIntervalMs", "bookmarkBeforeTimeoutMs"] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new StatusError(badRequest(`${field} must be a non-negative integer`));
    next[field] = v;
  }
  if (input.token !== undefined) {
    if (input.token !== null && typeof input.token !== "string") throw new StatusError(badRequest("token must be a string or null"));
    next.token = input.token || null;
  }
  for (const field of ["watchList", "watchCache"] as const) {
    const v = input[field];
    if (v === undefined) continue;
    if (typeof v !== "boolean") throw new StatusError(badRequest(`${field} must be a boolean`));
    next[field] = v;
  }
  Object.assign(cluster.settings, next);
}

/** `/__control/clusters`: creating and listing clusters. */
export async function handleClusters(registry: ClusterRegistry, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method === "GET") {
    sendJson(res, 200, { items: registry.ids().map((id) => ({ id, url: clusterUrl(req, id) })) });
    return;
  }
  if (req.method !== "POST") {
    sendStatus(res, methodNotAllowed(req.method ?? ""));
    return;
  }
  const body = asRecord(await readJson(req));
  if (body.id !== undefined && typeof body.id !== "string") throw new StatusError(badRequest("id must be a string"));
  const start = parseRevision(body.startRevision, "startRevision");
  let cluster: Cluster;
  try {
    cluster = registry.create(body.id as string | undefined, start);
  } catch (error) {
    const message = (error as Error).message;
    throw new StatusError(message.includes("already exists") ? status(409, "AlreadyExists", message) : badRequest(message));
  }
  applySettings(cluster, body);
  sendJson(res, 201, { id: cluster.id, url: clusterUrl(req, cluster.id) });
}

export function clusterInfo(cluster: Cluster, req: IncomingMessage): ClusterInfo {
  return {
    id: cluster.id,
    url: clusterUrl(req, cluster.id),
    resourceVersion: String(cluster.store.revision),
    compactedRevision: String(cluster.store.compactedRevision),
    openWatches: cluster.watches.size,
    settings: { ...cluster.settings },
    faults: cluster.faults.list(),
  };
}

/** `sub` is the path after `__control`, e.g. "/objects". */
export async function handleControl(
  registry: ClusterRegistry,
  cluster: Cluster,
  sub: string,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const route = `${req.method} ${sub.replace(/\/+$/, "") || "/"}`;
  const store = cluster.store;
  switch (route) {
    case "GET /":
      sendJson(res, 200, clusterInfo(cluster, req));
      return;
    case "DELETE /cluster":
      if (!registry.delete(cluster.id)) throw new StatusError(badRequest(`cluster "${cluster.id}" cannot be deleted`));
      sendJson(res, 200, { deleted: cluster.id });
      return;
    case "POST /objects": {
      const body = asRecord(await readJson(req));
      const ops = Array.isArray(body.ops) ? (body.ops as ObjectOp[]) : [body as unknown as ObjectOp];
      const objects: FakeObject[] = [];
      ops.forEach((op, i) => {
        try {
          objects.push(applyOp(cluster, op));
        } catch (error) {
          if (error instanceof StatusError && ops.length > 1) {
            throw new StatusError({ ...error.status, message: `ops[${i}]: ${error.status.message}` });
          }
          throw error;
        }
      });
      const result: ApplyResult = { resourceVersion: String(store.revision), objects };
      sendJson(res, 200, result);
      return;
    }
    case "POST /seed": {
      const body = asRecord(await readJson(req)) as SeedOptions;
      try {
        sendJson(res, 200, seedBulk(store, body));
      } catch (error) {
        if (error instanceof RangeError) throw new StatusError(badRequest(error.message));
        throw error;
      }
      return;
    }
    case "POST /churn": {
      const body = asRecord(await readJson(req)) as unknown as ChurnOptions;
      try {
        sendJson(res, 200, churn(store, body));
      } catch (error) {
        if (error instanceof RangeError) throw new StatusError(badRequest(error.message));
        throw error;
      }
      return;
    }
    case "GET /state": {
      const def = resourceByName(url.searchParams.get("resource") ?? "pods");
      if (!def) throw new StatusError(badRequest(`unknown resource ${JSON.stringify(url.searchParams.get("resource"))}`));
      const namespace = url.searchParams.get("namespace") ?? undefined;
      const items = store.table(def).currentItems(namespace).map((o) => asListItem(def, o));
      sendJson(res, 200, { resourceVersion: String(store.revision), items });
      return;
    }
    case "GET /requests":
      sendJson(res, 200, { items: cluster.requests() });
      return;
    case "DELETE /requests":
      cluster.clearRequests();
      sendJson(res, 200, {});
      return;
    case "POST /compact": {
      const body = asRecord(await readJson(req));
      store.compact(parseRevision(body.revision, "revision") ?? store.revision);
      sendJson(res, 200, { compactedRevision: String(store.compactedRevision), resourceVersion: String(store.revision) });
      return;
    }
    case "GET /faults":
      sendJson(res, 200, { items: cluster.faults.list() });
      return;
    case "POST /faults": {
      const body = asRecord(await readJson(req));
      const inputs = Array.isArray(body.faults) ? body.faults : [body];
      try {
        const faults = inputs.map(validateFault);
        for (const f of faults) cluster.faults.add(f);
      } catch (error) {
        if (error instanceof FaultError) throw new StatusError(badRequest(error.message));
        throw error;
      }
      sendJson(res, 200, { items: cluster.faults.list() });
      return;
    }
    case "DELETE /faults":
      cluster.faults.clear();
      sendJson(res, 200, { items: [] });
      return;
    case "GET /settings":
      sendJson(res, 200, cluster.settings);
      return;
    case "POST /settings":
      applySettings(cluster, asRecord(await readJson(req)));
      sendJson(res, 200, cluster.settings);
      return;
    case "POST /close-watches":
      sendJson(res, 200, { closed: cluster.closeWatches() });
      return;
    default:
      sendStatus(res, notFoundHere(route));
  }
}

function applyOp(cluster: Cluster, op: ObjectOp): FakeObject {
  if (op === null || typeof op !== "object") throw new StatusError(badRequest("each op must be an object"));
  const def = typeof op.resource === "string" ? resourceByName(op.resource) : undefined;
  if (!def) throw new StatusError(badRequest(`unknown resource ${JSON.stringify(op.resource)}`));
  const store = cluster.store;
  let change;
  switch (op.op) {
    case "create":
      change = store.create(def, op.object);
      break;
    case "update":
      change = store.update(def, op.object);
      break;
    case "upsert":
      change = store.upsert(def, op.object);
      break;
    case "delete":
      change = store.delete(def, op.object);
      break;
    default:
      throw new StatusError(badRequest(`op must be create, update, upsert or delete, not ${JSON.stringify(op.op)}`));
  }
  return asListItem(def, change.object) as FakeObject;
}
