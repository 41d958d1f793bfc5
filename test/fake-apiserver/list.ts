/**
 * LIST with the apiserver's resourceVersion semantics (reference §1.2, §1.3):
 * - RV unset: most recent, honours limit/continue;
 * - RV "0": served "from the watch cache": limit ignored, whole list, no continue (paginated when the
 *   cluster's watchCache setting is off, as on a server without the cache);
 * - RV N without limit (or RVM NotOlderThan): current state, 504 "Too large resource version" if N is in the future;
 * - RV N with limit (or RVM Exact): exactly snapshot N, 410 if N is compacted;
 * - continue: the page after the token's key at the token's snapshot (every page at page 1's RV),
 *   410 Expired with an "inconsistent" continue token once that snapshot is compacted.
 * Items are in key order; `remainingItemCount` only without selectors (as etcd3). Built-in items lack
 * kind/apiVersion; a metadata-only Accept gets a PartialObjectMetadataList. The snapshot is fixed when the request arrives, even if a delay fault holds the answer.
 */
import { matchesFields, matchesLabels } from "../../src/kube/selectors.ts";
import { decodeContinue, encodeContinue } from "./continue-token.ts";
import { ChunkedWriter, sendJson, sendStatus, sleep } from "./http.ts";
import { noteFault, type KubeRequest } from "./kube-request.ts";
import { asPartialObjectMetadata, metadataOnly } from "./metadata-only.ts";
import type { ListOptions } from "./list-options.ts";
import { apiVersionOf, asListItem, withTypeMeta } from "./resources.ts";
import {
  badRequest,
  expired,
  INCONSISTENT_CONTINUE,
  LIST_TOO_OLD,
  statusForCode,
  StatusError,
  tooLargeResourceVersion,
  type KubeStatus,
} from "./status.ts";
import { lowerBound } from "./store.ts";
import { requestedTable, tableOf } from "./table.ts";
import type { FakeObject, Fault } from "./types.ts";

interface Page {
  snapshot: bigint;
  items: FakeObject[];
  continue?: string;
  remainingItemCount?: number;
}

export function matchesSelectors(o: ListOptions, obj: FakeObject): boolean {
  if (o.everything) return true;
  return matchesLabels(o.labelSelector, obj.metadata.labels) && matchesFields(o.fieldSelector, obj);
}

export async function serveList(ctx: KubeRequest, o: ListOptions): Promise<void> {
  const { cluster, def, res, record } = ctx;
  const delay = cluster.faults.takeDelay(def.name, "list");
  if (delay) noteFault(record, "delay");
  const injected = cluster.faults.takeStatus(def.name, "list");
  let answer: Page | KubeStatus;
  if (injected) {
    noteFault(record, "status");
    answer = statusForCode(injected.code, injected);
  } else {
    try {
      answer = readPage(ctx, o);
    } catch (error) {
      if (!(error instanceof StatusError)) throw error;
      answer = error.status;
    }
  }
  if (delay) await sleep(delay.ms);
  if (res.destroyed) return;
  if ("kind" in answer) {
    sendStatus(res, answer);
    return;
  }
  const stall = cluster.faults.takeStallList(def.name, o.continue !== "");
  await writeList(ctx, answer, stall);
}

/** Resolves the snapshot and reads one page (synchronously, so no write can interleave). */
function readPage(ctx: KubeRequest, o: ListOptions): Page {
  const { cluster, def, namespace, record } = ctx;
  const store = cluster.store;
  let snapshot: bigint;
  let start: string | undefined;
  let limit = o.limit;
  if (o.continue !== "") {
    const token = decodeContinue(o.continue);
    if (o.resourceVersion !== "" && o.resourceVersion !== "0") {
      throw new StatusError(badRequest("specifying resource version is not allowed when using continue"));
    }
    const expiredToken = (): StatusError => {
      const s = expired(INCONSISTENT_CONTINUE);
      s.metadata.continue = encodeContinue({ rv: -1n, start: token.start });
      return new StatusError(s);
    };
    if (cluster.faults.takeExpireContinue(def.name)) {
      noteFault(record, "expireContinue");
      throw expiredToken();
    }
    snapshot = token.rv === -1n ? store.revision : token.rv;
    if (snapshot < store.compactedRevision) throw expiredToken();
    if (snapshot > store.revision) throw new StatusError(badRequest("invalid continue token: resource version is in the future"));
    start = token.start;
  } else if (o.resourceVersion === "") {
    snapshot = store.revision;
  } else if (o.resourceVersion === "0") {
    snapshot = store.revision;
    if (cluster.settings.watchCache) limit = 0; // the watch cache ignores limit for RV=0
  } else {
    const rv = BigInt(o.resourceVersion);
    if (cluster.faults.takeTooLargeRv(def.name)) {
      noteFault(record, "tooLargeRv");
      // As if this replica's watch cache lagged just behind the requested RV.
      const lagging = rv - 1n < store.revision ? rv - 1n : store.revision;
      throw new StatusError(tooLargeResourceVersion(rv, lagging));
    }
    if (rv > store.revision) throw new StatusError(tooLargeResourceVersion(rv, store.revision));
    const exact = o.resourceVersionMatch === "Exact" || (o.resourceVersionMatch === "" && limit > 0);
    if (exact) {
      if (rv < store.compactedRevision) throw new StatusError(expired(LIST_TOO_OLD));
      snapshot = rv;
    } else {
      snapshot = store.revision;
    }
  }

  const table = store.table(def);
  const keys = table.keysAt(snapshot, namespace);
  const items: FakeObject[] = [];
  let lastKey = "";
  let i = start === undefined ? 0 : lowerBound(keys, start);
  for (; i < keys.length; i++) {
    if (limit > 0 && items.length >= limit) break;
    const obj = table.at(keys[i]!, snapshot)!;
    if (!matchesSelectors(o, obj)) continue;
    items.push(obj);
    lastKey = keys[i]!;
  }
  const page: Page = { snapshot, items };
  // More data = more keys exist at the snapshot (matching or not), as etcd's "more" flag.
  if (limit > 0 && items.length >= limit && i < keys.length) {
    page.continue = encodeContinue({ rv: snapshot, start: `${lastKey}\u0000` });
    if (o.everything) page.remainingItemCount = keys.length - i;
  }
  return page;
}

async function writeList(ctx: KubeRequest, page: Page, stall?: Extract<Fault, { kind: "stallList" }>): Promise<void> {
  const { def, res } = ctx;
  const metadata: Record<string, unknown> = { resourceVersion: String(page.snapshot) };
  if (page.continue !== undefined) metadata.continue = page.continue;
  if (page.remainingItemCount !== undefined) metadata.remainingItemCount = page.remainingItemCount;
  const tableFormat = requestedTable(ctx.req, ctx.params, def);
  if (tableFormat) {
    const objects = page.items.map((obj) => ({ typed: withTypeMeta(def, obj), obj }));
    sendJson(res, 200, tableOf(tableFormat, objects, metadata), { "cache-control": "no-cache, private" });
    return;
  }
  res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private" });
  const out = new ChunkedWriter(res);
  const wanted = metadataOnly(ctx.req);
  const head = JSON.stringify(wanted ? { kind: "PartialObjectMetadataList", apiVersion: wanted.apiVersion, metadata } : { kind: def.listKind, apiVersion: apiVersionOf(def), metadata });
  const item = (obj: FakeObject) => (wanted ? asPartialObjectMetadata(wanted, obj) : asListItem(def, obj));
  await out.write(`${head.slice(0, -1)},"items":[`);
  for (let i = 0; i < page.items.length && !out.gone; i++) {
    if (stall && i === stall.afterItems) {
      // Everything before the stall reaches the client; the rest waits (or the client goes away).
      await out.flush();
      noteFault(ctx.record, "stallList");
      await holdUnlessClosed(res, stall.ms ?? 30_000);
      if (out.gone) break;
    }
    await out.write((i === 0 ? "" : ",") + JSON.stringify(item(page.items[i]!)));
  }
  await out.write("]}");
  await out.end();
}

/** Waits `ms`, or less if the response closes first (the client went away). */
function holdUnlessClosed(res: KubeRequest["res"], ms: number): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once("close", done);
  });
}
