/**
 * `/k8s` gets and lists: one object by key, or a list — paged with continue tokens at one
 * resourceVersion (k8s/continue-token.ts, cache/versioned-list.ts), or without limit streamed page
 * by page — and the namespace stand-in, with the namespaces list and watch synthesized when
 * namespaces are not mirrored. Whole lists and selector scans are heavy reads, admitted by
 * the informer object a few at a time (k8s/admission.ts); index reads are not. Both are served at
 * the resourceVersion k8s/list-consistency.ts decides (none: consistent, k8s/consistent-reads.ts);
 * a get also answers an object's `status` and `scale` subresources (k8s/subresources.ts).
 */
import { exactKey } from "../cache/key-scope.ts";
import type { Position } from "../cache/versioned-list.ts";
import { ApiError, unwrap } from "../errors.ts";
import type { ObjectFormat } from "../k8s/accept.ts";
import { HEAVY_READ_RETRY_AFTER_SECONDS, type HeavyRead } from "../k8s/admission.ts";
import { listBody, type ListPageAnswer, objectBody } from "../k8s/answer.ts";
import { requireReady } from "../k8s/cache-readiness.ts";
import { decodeListToken, encodeListToken, type ListToken } from "../k8s/continue-token.ts";
import { getResourceVersion, listResourceVersion, type ListResourceVersion, readAt } from "../k8s/list-consistency.ts";
import { checkListOptions, sendsInitialEvents, watchTimeoutSeconds } from "../k8s/list-options.ts";
import { NAMESPACES, namespaceStandIn } from "../k8s/namespace-stand-in.ts";
import { NAMESPACE_WATCH_MAX_CALLS, namespaceFilter, namespaceListBody, namespaceWatchFrames, readNamespaces, type ResourceNamespaces } from "../k8s/namespace-list.ts";
import { NAMESPACE_INDEX } from "../cache/indexer.ts";
import { MAX_LIST_LIMIT } from "../cache/lister.ts";
import { listEncoding, WATCH_ENCODING } from "../k8s/compression.ts";
import type { ResourceRequest, ServedResource } from "../k8s/served.ts";
import { statusErrors } from "../k8s/status.ts";
import { scaleOf, SCALE_PRINTER } from "../k8s/subresources.ts";
import { type IncludeObject, table } from "../k8s/table.ts";
import { partialObjectMetadata } from "../k8s/metadata-only.ts";
import type { KubeObject } from "../kube/types.ts";
import { parseFieldSelector, SelectorError } from "../kube/selectors.ts";
import { checkFieldSelector, informerStub, isTrue, type K8sContext, listOptionsQuery, queryParam, STREAM_HEADERS } from "./k8s-request.ts";
import { principalOf } from "./auth.ts";
import { served } from "./k8s-served.ts";
import { checkWatchSite, watchResponse } from "./k8s-watch.ts";

/** The namespace stand-in (k8s/namespace-stand-in.ts): Active when a served namespaced resource holds an object in it. */
export async function namespaceAnswer(c: K8sContext, name: string, format: ObjectFormat, includeObject: IncludeObject): Promise<Response> {
  const holdsNamespace = async (namespace: string) => {
    for (const resource of (await served(c)).filter((r) => r.info.namespaced)) {
      const answer = await informerStub(c, resource).listAt({ namespace, limit: 1 }, undefined);
      if (answer.ok && !answer.value.value.expired && answer.value.value.items.length > 0) return true;
    }
    return false;
  };
  return new Response(objectBody(NAMESPACES, await namespaceStandIn(name, holdsNamespace), format, includeObject, Date.now()), {
    headers: { "content-type": "application/json", "cache-control": "no-cache, private" },
  });
}

/**
 * The namespaces list or watch synthesized from the served namespaced resources
 * (k8s/namespace-list.ts): one `indexValues("namespace")` call to each, a few at a time
 * (NAMESPACE_READ_CONCURRENCY); a resource whose informer does not answer is left out.
 */
export async function namespacesAnswer(c: K8sContext, format: ObjectFormat, includeObject: IncludeObject, watching: boolean): Promise<Response> {
  const options = listOptionsQuery(c, watching);
  checkListOptions(options);
  const resources = (await served(c)).filter((r) => r.info.namespaced);
  const namespacesOf = async (resource: ServedResource): Promise<ResourceNamespaces[]> => {
    const answer = await informerStub(c, resource).indexValues(NAMESPACE_INDEX, { limit: MAX_LIST_LIMIT });
    if (!answer.ok) return [];
    // A resource in more than MAX_LIST_LIMIT namespaces lists its first ones (docs/security.md bounds).
    return [{ namespaces: answer.value.value.values, resourceVersion: answer.value.resourceVersion }];
  };
  const selected = selectedNamespaces(c);
  const read = async () => {
    const merged = await readNamespaces(resources, namespacesOf);
    return selected ? { ...merged, names: merged.names.filter(selected) } : merged;
  };
  if (!watching) {
    return new Response(namespaceListBody(await read(), format, includeObject, Date.now()), { headers: STREAM_HEADERS });
  }
  // Over WebSocket too (Headlamp's namespace picker), refused cross-site as every watch is.
  checkWatchSite(c);
  const timeoutSeconds = watchTimeoutSeconds(queryParam(c, "timeoutSeconds"));
  const frames = namespaceWatchFrames(
    {
      format,
      includeObject,
      initialEvents: sendsInitialEvents(options),
      bookmarks: isTrue(c.req.query("allowWatchBookmarks")),
      ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
      maxReads: Math.max(1, Math.floor(NAMESPACE_WATCH_MAX_CALLS / Math.max(1, resources.length))),
    },
    { read, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), now: Date.now },
  );
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await frames.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await frames.return(undefined);
    },
  });
  return watchResponse(c, body, { resource: "namespaces" });
}

/** The namespaces list's selectors (k8s/namespace-list.ts namespaceFilter), or a 400 as the server words it. */
function selectedNamespaces(c: K8sContext): ((name: string) => boolean) | undefined {
  const fieldSelector = queryParam(c, "fieldSelector");
  const labelSelector = queryParam(c, "labelSelector");
  if (fieldSelector !== undefined) checkFieldSelector(fieldSelector, { informer: "", info: NAMESPACES, indexedFields: [] });
  try {
    return namespaceFilter(labelSelector, fieldSelector);
  } catch (error) {
    if (error instanceof SelectorError) throw statusErrors.badRequest(`unable to parse requirement: ${error.message}`);
    throw error;
  }
}

export async function getObject(
  c: K8sContext,
  served: ServedResource,
  request: Extract<ResourceRequest, { kind: "object" }>,
  format: ObjectFormat,
  includeObject: IncludeObject,
  subresource?: "status" | "scale",
): Promise<Response> {
  const key = request.namespace === undefined ? request.name : `${request.namespace}/${request.name}`;
  const at = getResourceVersion(queryParam(c, "resourceVersion"));
  const stub = informerStub(c, served);
  const answer = await readAt(at, {
    read: async () => {
      const found = await stub.findObject(key);
      if (!found.ok) throw new ApiError(found.error.code, found.error.message);
      requireReady(served.info, found.value);
      return found.value;
    },
    reach: async (rv, waitMs) => unwrap(await stub.awaitResourceVersion(rv, waitMs)),
    consistent: async () => unwrap(await stub.awaitConsistency()),
  });
  if (answer.value === null) throw statusErrors.notFound(served.info, request.name);
  // `status` is the object itself; `scale` an autoscaling/v1 Scale built from it.
  const body =
    subresource === "scale" ? scaleBody(scaleOf(JSON.parse(answer.value) as KubeObject), format, includeObject) : objectBody(served.info, answer.value, format, includeObject, Date.now());
  return new Response(body, {
    headers: { "content-type": "application/json", "cache-control": "no-cache, private" },
  });
}

function scaleBody(scale: Record<string, unknown>, format: ObjectFormat, includeObject: IncludeObject): string {
  const text = JSON.stringify(scale);
  if (format.kind === "json") return text;
  if (format.kind === "metadata") return partialObjectMetadata(text, format.apiVersion);
  const object = scale as unknown as KubeObject;
  const options = { now: Date.now(), includeObject, apiVersion: format.apiVersion };
  return JSON.stringify(table({ kind: "Scale", printer: SCALE_PRINTER }, [object], { resourceVersion: object.metadata.resourceVersion ?? "" }, options));
}

interface ListParams {
  limit: number | undefined;
  continue?: ListToken;
  labelSelector?: string;
  fieldSelector?: string;
  at: ListResourceVersion;
}

function listParams(c: K8sContext, served: ServedResource): ListParams {
  const q = (name: string) => queryParam(c, name);
  const limitText = q("limit");
  const asked = limitText === undefined ? undefined : Number(limitText);
  if (asked !== undefined && !Number.isSafeInteger(asked)) throw statusErrors.badRequest(`invalid limit: ${JSON.stringify(limitText)}`);
  // The server pages only with a limit above 0 (etcd3 store.go `pred.Limit > 0`): -1 is no limit.
  const limit = asked !== undefined && asked < 0 ? 0 : asked;
  const options = listOptionsQuery(c, false);
  checkListOptions(options);
  const { at, limit: pageLimit } = listResourceVersion(options, limit);
  const token = options.continue;
  const fieldSelector = q("fieldSelector");
  if (fieldSelector !== undefined) checkFieldSelector(fieldSelector, served);
  let decoded: ListParams["continue"];
  if (token !== undefined) {
    try {
      decoded = decodeListToken(token);
    } catch (error) {
      throw statusErrors.badRequest(`invalid continue token: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return {
    limit: pageLimit,
    ...(decoded ? { continue: decoded } : {}),
    ...(q("labelSelector") === undefined ? {} : { labelSelector: q("labelSelector")! }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    at,
  };
}

/** Most items one page read from the informer holds (it also stops at about 4 MB). */
const PAGE_LIMIT = 5_000;
/** The first read of a list without limit: small, so the answer starts streaming at once. */
const FIRST_PAGE_LIMIT = 500;

export async function listObjects(
  c: K8sContext,
  served: ServedResource,
  request: Extract<ResourceRequest, { kind: "collection" }>,
  format: ObjectFormat,
  includeObject: IncludeObject,
): Promise<Response> {
  const params = listParams(c, served);
  const stub = informerStub(c, served);
  const query = {
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(params.labelSelector === undefined ? {} : { labelSelector: params.labelSelector }),
    ...(params.fieldSelector === undefined ? {} : { fieldSelector: params.fieldSelector }),
  };
  // A whole list, or a selector scan, is a heavy read: the informer object runs a few at a time and
  // sheds the rest with a 429 before anything is sent (k8s/admission.ts); a page after the first of
  // a list without limit belongs to a read already admitted. One object by namespace and name
  // (`kubectl wait`'s list) reads one key: not heavy. A field selector an index of the informer
  // answers (`spec.nodeName=n1`) is no scan either: the informer, which knows its indexes, serves
  // such a page unadmitted (k8s/cache-reads.ts, cache/index-selector.ts).
  const fixedKey = exactKey(request.namespace, params.fieldSelector === undefined ? undefined : parseFieldSelector(params.fieldSelector));
  const heavy = (params.limit === undefined || params.labelSelector !== undefined || params.fieldSelector !== undefined) && fixedKey === undefined;
  // A list without limit is one answer whose pages are fetched as it streams: it keeps its heavy-read
  // slot from page to page, so its pages never queue behind other reads while ingest moves the log
  // on past where its snapshot can be rebuilt (issue 27: bodies broke off mid-list).
  const hold = heavy && params.limit === undefined ? crypto.randomUUID() : undefined;
  // Heavy reads are admitted fairly between credentials (review N1).
  const owner = (await principalOf(c)).name;
  const read = async (from: Position | undefined, limit: number, of?: string, part: HeavyRead = "first") => {
    const answer = await stub.listAt({ ...query, limit: Math.min(limit, PAGE_LIMIT) }, from, of, heavy ? { part, owner, ...(hold === undefined ? {} : { hold }) } : undefined);
    if (!answer.ok && answer.error.code === "TooManyRequests") throw statusErrors.tooManyRequests(answer.error.message, HEAVY_READ_RETRY_AFTER_SECONDS);
    return unwrap(answer);
  };
  const first = await readAt(params.at, {
    read: async () => {
      // A token names the informer whose log its position is in: another may serve the resource now.
      const answer = await read(params.continue?.from, params.limit ?? FIRST_PAGE_LIMIT, params.continue?.informer);
      requireReady(served.info, answer);
      return answer;
    },
    reach: async (rv, waitMs) => unwrap(await stub.awaitResourceVersion(rv, waitMs)),
    consistent: async () => unwrap(await stub.awaitConsistency()),
  });
  if (first.value.expired) {
    const { resume } = first.value;
    throw statusErrors.expiredContinue(resume && encodeListToken({ rv: first.resourceVersion, informer: served.informer, from: resume }));
  }
  const resourceVersion = params.continue?.rv ?? first.resourceVersion;
  const page = first.value;
  const firstPage: ListPageAnswer = { items: page.items };
  let rest: AsyncIterable<string[]> | undefined;
  if (page.next) {
    // The list's size is known from its first page of the whole resource; each token carries what is left.
    const known = params.continue ? params.continue.left : first.value.total;
    const left = known === undefined ? undefined : Math.max(known - page.items.length, 0);
    if (params.limit !== undefined) {
      firstPage.continue = encodeListToken({ rv: resourceVersion, informer: served.informer, from: page.next, ...(left === undefined ? {} : { left }) });
      if (left !== undefined) firstPage.remainingItemCount = left;
    } else rest = remainingPages((from) => read(from, PAGE_LIMIT, undefined, "next"), page.next);
  }
  const body = listBody({ info: served.info, format, includeObject, resourceVersion, now: Date.now(), first: firstPage, ...(rest ? { rest } : {}) });
  return new Response(body, { headers: { ...STREAM_HEADERS, ...listEncoding(c.req.header("accept-encoding"), body) } });
}

/** The pages after `next` of a list without limit, each as one informer read. */
async function* remainingPages(
  read: (from: Position) => Promise<{ value: { expired: true } | { expired: false; items: string[]; next?: Position } }>,
  next: Position,
): AsyncGenerator<string[]> {
  let from: Position | undefined = next;
  while (from) {
    const answer = await read(from);
    if (answer.value.expired) throw new Error("the cache moved on too far while the list was being sent");
    yield answer.value.items;
    from = answer.value.next;
  }
}
