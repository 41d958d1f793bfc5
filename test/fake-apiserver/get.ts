/**
 * GET of one object by name: the current state WITH kind/apiVersion (as a real GET returns it), or
 * a 404 NotFound Status naming the resource and object; a one-row Table, or metadata only, when the
 * Accept header asks for one.
 */
import { sendJson, sendStatus } from "./http.ts";
import { asPartialObjectMetadata, metadataOnly } from "./metadata-only.ts";
import type { KubeRequest } from "./kube-request.ts";
import { withTypeMeta } from "./resources.ts";
import { objectKey } from "./store.ts";
import { requestedTable, tableOf } from "./table.ts";
import { notFound } from "./status.ts";

export function serveGet(ctx: KubeRequest, name: string): void {
  const { cluster, def, namespace, res } = ctx;
  const obj = cluster.store.table(def).current(objectKey(def, namespace, name));
  if (!obj) {
    sendStatus(res, notFound(def.name, def.group, name));
    return;
  }
  const typed = withTypeMeta(def, obj);
  const tableFormat = requestedTable(ctx.req, ctx.params, def);
  const wanted = metadataOnly(ctx.req);
  // A Table of one object carries that object's resourceVersion as its ListMeta.
  const body = tableFormat ? tableOf(tableFormat, [{ typed, obj }], { resourceVersion: obj.metadata.resourceVersion }) : wanted ? asPartialObjectMetadata(wanted, obj) : typed;
  sendJson(res, 200, body);
}
