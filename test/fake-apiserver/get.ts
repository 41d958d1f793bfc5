/**
 * GET of one object by name: the current state WITH kind/apiVersion (as a real GET returns it), or
 * a 404 NotFound Status naming the resource and object.
 */
import { sendJson, sendStatus } from "./http.ts";
import type { KubeRequest } from "./kube-request.ts";
import { withTypeMeta } from "./resources.ts";
import { objectKey } from "./store.ts";
import { notFound } from "./status.ts";

export function serveGet(ctx: KubeRequest, name: string): void {
  const { cluster, def, namespace, res } = ctx;
  const obj = cluster.store.table(def).current(objectKey(def, namespace, name));
  if (!obj) {
    sendStatus(res, notFound(def.name, def.group, name));
    return;
  }
  sendJson(res, 200, withTypeMeta(def, obj));
}
