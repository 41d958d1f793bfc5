/**
 * GET of one object by name: the current state WITH kind/apiVersion (as a real GET returns it), or
 * a 404 NotFound Status naming the resource and object; metadata only when the Accept header asks.
 */
import { sendJson, sendStatus } from "./http.ts";
import { asPartialObjectMetadata, metadataOnly } from "./metadata-only.ts";
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
  const wanted = metadataOnly(ctx.req);
  sendJson(res, 200, wanted ? asPartialObjectMetadata(wanted, obj) : withTypeMeta(def, obj));
}
