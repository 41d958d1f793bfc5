/**
 * A `/k8s` watch as the route hands it to the object that serves it (an informer's, or a watch
 * relay's: watch-relay.ts), and how that object reads it: selectors travel as text and are parsed
 * where they are used; a bad one throws a SelectorError (a 400 BadRequest).
 */
import { type FieldSelector, type LabelSelector, parseFieldSelector, parseLabelSelector } from "../kube/selectors.ts";
import type { CacheReadiness } from "./cache-readiness.ts";
import type { WatchRequest } from "./watch-source.ts";

/** A `/k8s` watch as the route hands it over: selectors as text, parsed by `watchRequestOf`. */
export interface WatchParams extends Omit<WatchRequest, "labelSelector" | "fieldSelector"> {
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * A `/k8s` watch as opened: its stream, or — the cache not synced — why it was not opened, or — too
 * many watches or heavy reads (watcher-caps.ts, admission.ts) — the 429 to answer.
 */
export type WatchOpening =
  | { stream: ReadableStream<Uint8Array> }
  | { notReady: CacheReadiness }
  | { tooMany: { message: string; retryAfterSeconds: number } };

/** Selectors as text (a request's) parsed for the cache; a bad one throws a SelectorError (400). */
export function parseSelectors(query: { labelSelector?: string; fieldSelector?: string }): { labelSelector?: LabelSelector; fieldSelector?: FieldSelector } {
  return {
    ...(query.labelSelector ? { labelSelector: parseLabelSelector(query.labelSelector) } : {}),
    ...(query.fieldSelector ? { fieldSelector: parseFieldSelector(query.fieldSelector) } : {}),
  };
}

/** The hub's request of a route's watch: selectors parsed, absent options left out. */
export function watchRequestOf(params: WatchParams): WatchRequest {
  return {
    info: params.info,
    format: params.format,
    includeObject: params.includeObject,
    bookmarks: params.bookmarks,
    initialEvents: params.initialEvents,
    ...(params.namespace === undefined ? {} : { namespace: params.namespace }),
    ...parseSelectors(params),
    ...(params.resourceVersion === undefined ? {} : { resourceVersion: params.resourceVersion }),
    ...(params.timeoutSeconds === undefined ? {} : { timeoutSeconds: params.timeoutSeconds }),
    ...(params.principal === undefined ? {} : { principal: params.principal }),
  };
}
