/**
 * The Kubernetes write verbs the fake accepts so kubectl and clients can change state through the
 * real API too: POST to a collection (create, 201), PUT to an object (update with optimistic
 * concurrency, 200), DELETE an object (immediate, 200). Bodies are JSON; the URL's namespace and
 * name win and must agree with the body's, as on a real server. PATCH and protobuf bodies are not
 * supported (415, so kubectl's protobuf creates of built-in types fail clearly).
 */
import { readJson, sendJson, sendStatus } from "./http.ts";
import type { KubeRequest } from "./kube-request.ts";
import { withTypeMeta } from "./resources.ts";
import { badRequest, methodNotAllowed, status, StatusError } from "./status.ts";
import type { FakeObject } from "./types.ts";

async function bodyObject(ctx: KubeRequest): Promise<FakeObject> {
  const type = ctx.req.headers["content-type"];
  if (type && !/json/.test(type)) {
    // JSON only: a protobuf body (kubectl's default for built-in types) cannot be read.
    throw new StatusError(
      status(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: application/json`),
    );
  }
  const body = await readJson(ctx.req);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new StatusError(badRequest("the request body must be a JSON object"));
  }
  const obj = body as FakeObject;
  if (obj.metadata === null || typeof obj.metadata !== "object") obj.metadata = {};
  const { def, namespace } = ctx;
  if (def.namespaced && namespace !== undefined) {
    if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
      throw new StatusError(badRequest("the namespace of the provided object does not match the namespace sent on the request"));
    }
    obj.metadata.namespace = namespace;
  }
  return obj;
}

export async function serveCreate(ctx: KubeRequest): Promise<void> {
  if (ctx.def.namespaced && ctx.namespace === undefined) {
    sendStatus(ctx.res, methodNotAllowed("POST"));
    return;
  }
  const obj = await bodyObject(ctx);
  const change = ctx.cluster.store.create(ctx.def, obj);
  sendJson(ctx.res, 201, withTypeMeta(ctx.def, change.object));
}

export async function serveUpdate(ctx: KubeRequest, name: string): Promise<void> {
  const obj = await bodyObject(ctx);
  if (obj.metadata.name && obj.metadata.name !== name) {
    throw new StatusError(badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`));
  }
  obj.metadata.name = name;
  const change = ctx.cluster.store.update(ctx.def, obj);
  sendJson(ctx.res, 200, withTypeMeta(ctx.def, change.object));
}

export async function serveDelete(ctx: KubeRequest, name: string): Promise<void> {
  await readJson(ctx.req); // DeleteOptions are accepted and ignored: deletion is immediate
  const { def, namespace } = ctx;
  const change = ctx.cluster.store.delete(def, { metadata: { name, namespace } });
  if (def.name === "pods") {
    // Pods answer with the object itself; other types with a Success Status.
    sendJson(ctx.res, 200, withTypeMeta(def, change.object));
    return;
  }
  const success = status(200, undefined, "", {
    name,
    ...(def.group ? { group: def.group } : {}),
    kind: def.name,
  }) as unknown as Record<string, unknown>;
  success.status = "Success";
  delete success.message;
  (success.details as Record<string, unknown>).uid = change.object.metadata.uid;
  sendJson(ctx.res, 200, success);
}
