/**
 * Listing the cache the way the API server lists (client-go listers.go, with API pagination):
 * key order, optional namespace (served by the namespace index), label and field selectors, and
 * `limit` + `continue`. Like the API server, a page may hold fewer than `limit` items when a
 * selective selector scanned a bounded amount of the cache; only a present `continue` means more.
 * Items stay JSON text: answers are assembled without re-encoding objects.
 */
import { ValidationError } from "../errors.ts";
import {
  type FieldSelector,
  type LabelSelector,
  isEverything,
  matchesFields,
  matchesLabels,
} from "../kube/selectors.ts";
import type { KubeObject } from "../kube/types.ts";
import type { CachedObject, Indexer } from "./indexer.ts";

export interface ListQuery {
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  /** An index to list by instead of all objects: ByIndex(name, value). */
  index?: { name: string; value: string };
  limit: number;
  continue?: string;
}

export interface ListPage {
  /** JSON text of each object. */
  items: string[];
  continue?: string;
}

export const MAX_LIST_LIMIT = 5_000;
/** Objects examined per request at most when selectors filter, so one request stays cheap. */
export const MAX_SCAN = 20_000;
const SCAN_BATCH = 500;

export function encodeContinue(afterKey: string): string {
  return btoa(JSON.stringify({ after: afterKey })).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

export function decodeContinue(token: string): string {
  try {
    const json = atob(token.replace(/-/g, "+").replace(/_/g, "/"));
    const parsed = JSON.parse(json) as { after?: unknown };
    if (typeof parsed.after === "string") return parsed.after;
  } catch {
    // fall through
  }
  throw new ValidationError("continue: not a continue token from this API");
}

export function listObjects(indexer: Indexer, query: ListQuery): ListPage {
  const filter = makeFilter(query);
  const items: string[] = [];
  let after = query.continue === undefined ? undefined : decodeContinue(query.continue);
  let scanned = 0;
  for (;;) {
    const want = filter ? SCAN_BATCH : Math.min(SCAN_BATCH, query.limit - items.length);
    const batch = fetchBatch(indexer, query, after, want);
    for (const object of batch) {
      scanned++;
      after = object.key;
      if (!filter || filter(JSON.parse(object.body) as KubeObject)) items.push(object.body);
      if (items.length === query.limit) {
        return hasMore(indexer, query, after) ? { items, continue: encodeContinue(after) } : { items };
      }
    }
    if (batch.length < want) return { items };
    if (scanned >= MAX_SCAN) return { items, continue: encodeContinue(after!) };
  }
}

function fetchBatch(indexer: Indexer, query: ListQuery, after: string | undefined, limit: number): CachedObject[] {
  const options = { limit, ...(after === undefined ? {} : { after }) };
  if (query.index) return indexer.byIndex(query.index.name, query.index.value, options);
  return indexer.list({ ...options, ...(query.namespace === undefined ? {} : { namespace: query.namespace }) });
}

function hasMore(indexer: Indexer, query: ListQuery, after: string): boolean {
  return fetchBatch(indexer, query, after, 1).length > 0;
}

function makeFilter(query: ListQuery): ((object: KubeObject) => boolean) | undefined {
  const labels = query.labelSelector && !isEverything(query.labelSelector) ? query.labelSelector : undefined;
  const fields = query.fieldSelector && !isEverything(query.fieldSelector) ? query.fieldSelector : undefined;
  const namespace = query.index ? query.namespace : undefined; // without an index, the namespace is in the SQL
  if (!labels && !fields && namespace === undefined) return undefined;
  return (object) =>
    (namespace === undefined || (object.metadata.namespace ?? "") === namespace) &&
    (!labels || matchesLabels(labels, object.metadata.labels)) &&
    (!fields || matchesFields(fields, object));
}
