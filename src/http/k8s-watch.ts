/**
 * A `/k8s` watch: its options validated as the API server validates them, then opened in a watch
 * relay (any: k8s/watch-relay.ts pickRelay) — off the informer's thread — or, with
 * WATCH_RELAYS=0, in the informer's object, and streamed; the body ends normally even when that
 * object's stream breaks off (k8s/watch-body.ts). A request with `Upgrade: websocket` gets the same
 * stream as a WebSocket, one event per message (k8s/watch-websocket.ts); refusals stay HTTP answers.
 */
import { informerObjectName } from "../clusters/cluster.ts";
import { relayStub } from "../clusters/stubs.ts";
import { ApiError } from "../errors.ts";
import type { ObjectFormat } from "../k8s/accept.ts";
import { notReadyError } from "../k8s/cache-readiness.ts";
import { WATCH_ENCODING } from "../k8s/compression.ts";
import { checkListOptions, sendsInitialEvents, watchTimeoutSeconds } from "../k8s/list-options.ts";
import type { ResourceRequest, ServedResource } from "../k8s/served.ts";
import { statusErrors } from "../k8s/status.ts";
import type { IncludeObject } from "../k8s/table.ts";
import type { WatchParams } from "../k8s/watch-params.ts";
import { endingCleanly } from "../k8s/watch-body.ts";
import { pickRelay, relaysOf } from "../k8s/watch-relay.ts";
import { crossSiteRefusal, isWebSocketRequest, webSocketWatch } from "../k8s/watch-websocket.ts";
import { errorText, logger } from "../log.ts";
import { principalOf } from "./auth.ts";
import { revocationOf } from "./read-authorization.ts";
import { addressOf, checkFieldSelector, informerStub, isTrue, type K8sContext, listOptionsQuery, queryParam, STREAM_HEADERS } from "./k8s-request.ts";

/**
 * A watch: validated as the server validates watch options, then streamed by the informer object.
 * A name in the path (`get pod x -w` on a deprecated path) becomes a metadata.name field selector.
 */
export async function watch(c: K8sContext, served: ServedResource, request: ResourceRequest, format: ObjectFormat, includeObject: IncludeObject): Promise<Response> {
  checkWatchSite(c);
  const q = (name: string) => queryParam(c, name);
  const fields = [q("fieldSelector"), request.kind === "object" ? `metadata.name=${request.name}` : undefined].filter((f) => f !== undefined);
  const fieldSelector = fields.length > 0 ? fields.join(",") : undefined;
  if (fieldSelector !== undefined) checkFieldSelector(fieldSelector, served);
  const timeoutSeconds = watchTimeoutSeconds(q("timeoutSeconds"));
  const options = listOptionsQuery(c, true);
  checkListOptions(options);
  const resourceVersion = options.resourceVersion;
  const params: WatchParams = {
    info: served.info,
    format,
    includeObject,
    bookmarks: isTrue(c.req.query("allowWatchBookmarks")),
    initialEvents: sendsInitialEvents(options),
    ...(request.namespace === undefined ? {} : { namespace: request.namespace }),
    ...(q("labelSelector") === undefined ? {} : { labelSelector: q("labelSelector")! }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    ...(timeoutSeconds === undefined || timeoutSeconds === 0 ? {} : { timeoutSeconds }),
    // Watches are capped per credential (k8s/watcher-caps.ts); `resource` has authenticated it.
    principal: (await principalOf(c)).name,
  };
  const relays = relaysOf(c.env);
  // Served by a relay (k8s/watch-relay.ts), off the informer's thread; WATCH_RELAYS=0: by the informer.
  const opened =
    relays === 0
      ? await informerStub(c, served).watch(params)
      : await relayStub(c.env, addressOf(c, served), pickRelay(relays), c.get("placement")).watch(informerObjectName(addressOf(c, served)), params);
  if (!opened.ok) throw new ApiError(opened.error.code, opened.error.message);
  if ("notReady" in opened.value) throw notReadyError(served.info, opened.value.notReady);
  if ("tooMany" in opened.value) throw statusErrors.tooManyRequests(opened.value.tooMany.message, opened.value.tooMany.retryAfterSeconds);
  return watchResponse(c, opened.value.stream, { resource: served.info.plural, relays });
}

/**
 * Refuses (403) a WebSocket watch a page of another site opens without its own token
 * (k8s/watch-websocket.ts crossSiteRefusal). Any watch route calls it before opening its stream.
 */
export function checkWatchSite(c: K8sContext): void {
  const refusal = crossSiteRefusal(c.req.raw.headers, c.req.url);
  if (refusal !== undefined) throw new ApiError("Forbidden", refusal);
}

/**
 * A watch stream's answer: a WebSocket for an `Upgrade: websocket` request, else the chunked HTTP
 * body. Either way the stream ends normally when its source breaks off — the object serving it may
 * restart (a deploy, an eviction) or its RPC break: the client sees a normal end and re-watches from
 * its last resourceVersion, never a reset stream (a relist) — and when the member cluster's RBAC no
 * longer allows it (http/read-authorization.ts revocationOf).
 */
export function watchResponse(c: K8sContext, source: ReadableStream<Uint8Array>, logged: Record<string, unknown>): Response {
  const revocation = revocationOf(c);
  const body = endingCleanly(source, {
    ended: (error) =>
      logger.info("watch stream ended early (its source broke off, its client left, or its reader may no longer watch): the body ends normally", {
        ...logged,
        error: errorText(error),
      }),
    ...(revocation ? { stop: revocation.signal, settled: revocation.done } : {}),
  });
  if (isWebSocketRequest(c.req.raw.headers)) return webSocketWatch(body, c.req.raw.headers);
  return new Response(body, { headers: { ...STREAM_HEADERS, ...WATCH_ENCODING } });
}
