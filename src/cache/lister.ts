/**
 * Listing the cache the way the API server lists (client-go listers.go, with API pagination):
 * key order, optional namespace (served by the namespace index) or set of namespaces (their key
 * ranges: namespace-set.ts), label and field selectors, and
 * `limit` + `continue`. Like the API server, a page may hold fewer than `limit` items when a
 * selective selector scanned a bounded amount of the cache; only a present `continue` means more.
 * A page is bounded by bytes as well as by count (MAX_PAGE_BYTES, at least one item), and so is
 * each batch read from storage: a page of large objects is cut early, never the isolate's 128 MB.
 * Items stay JSON text: answers are assembled without re-encoding objects, and bodies are parsed
 * only when a selector must look inside. `listObjectsInTurns` makes the same page in parts of at
 * most SCAN_PER_TURN keys with a turn of the event loop between them: a selector scan on an
 * informer object leaves its thread to ingest and other requests meanwhile (review B3).
 */
import { ValidationError } from "../errors.ts";
import { decodeTokenText, encodeTokenText } from "../net/token-text.ts";
import {
  type FieldSelector,
  type LabelSelector,
  isEverything,
  matchesFields,
  matchesLabels,
} from "../kube/selectors.ts";
import type { KubeObject } from "../kube/types.ts";
import type { CachedObject, Indexer } from "./indexer.ts";
import type { NamespaceSet } from "./namespace-set.ts";
import { yieldToEventLoop } from "../clock.ts";

export interface ListQuery {
  namespace?: string;
  /** Only objects of these namespaces (never cluster-scoped ones): what the caller may list (namespace-set.ts). */
  namespaces?: NamespaceSet;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  /** An index to list by instead of all objects: ByIndex(name, value). */
  index?: { name: string; value: string };
  limit: number;
  continue?: string;
  /** Bytes of bodies a page holds at most (at least one item); MAX_PAGE_BYTES when absent. */
  maxBytes?: number;
  /** Objects a page examines at most; MAX_SCAN when absent. A page cut by it says `scanCut`. */
  maxScan?: number;
}

export interface ListPage {
  /** JSON text of each object. */
  items: string[];
  continue?: string;
  scanCut?: true;
}

export const MAX_LIST_LIMIT = 5_000;
/**
 * Bytes of object bodies (or index values) one answer carries, about: the answer is copied into the
 * RPC reply and the HTTP body, and one isolate (128 MB) serves many requests and objects.
 */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;
/** Rows read before the body sizes of this cache are known. */
const FIRST_BATCH = 16;
/** Objects examined per request at most when selectors filter, so one request stays cheap. */
export const MAX_SCAN = 20_000;
const SCAN_BATCH = 500;
/** Objects one part of a page made in turns (listObjectsInTurns, versioned-list.ts listInTurns) examines. */
export const SCAN_PER_TURN = 2_000;

export function encodeContinue(afterKey: string): string {
  return encodeTokenText({ after: afterKey });
}

export function decodeContinue(token: string): string {
  const parsed = decodeTokenText(token) as { after?: unknown } | null | undefined;
  if (typeof parsed?.after === "string") return parsed.after;
  throw new ValidationError("continue: not a continue token from this API");
}

export function listObjects(indexer: Indexer, query: ListQuery): ListPage {
  // Without an index, the namespace (or the set of them) is in the SQL (fetchBatch); by index, the
  // filter checks it, and the set is checked on each hit's key, unparsed.
  const filter = makeFilter(query.index ? query : { ...query, namespace: undefined });
  const outside = query.index && query.namespaces ? query.namespaces : undefined;
  const items: string[] = [];
  let bytes = 0;
  let largest = 0;
  let after = query.continue === undefined ? undefined : decodeContinue(query.continue);
  let scanned = 0;
  const maxBytes = query.maxBytes ?? MAX_PAGE_BYTES;
  for (;;) {
    const want = Math.min(batchSize(largest), filter || outside ? SCAN_BATCH : query.limit - items.length);
    const batch = fetchBatch(indexer, query, after, want);
    for (const object of batch) {
      largest = Math.max(largest, object.body.length);
      if ((!outside || outside.holdsKey(object.key)) && (!filter || filter(JSON.parse(object.body) as KubeObject))) {
        if (items.length > 0 && bytes + object.body.length > maxBytes) return { items, continue: encodeContinue(after!) };
        items.push(object.body);
        bytes += object.body.length;
      }
      scanned++;
      after = object.key;
      if (items.length === query.limit) {
        return hasMore(indexer, query, after) ? { items, continue: encodeContinue(after) } : { items };
      }
    }
    if (batch.length < want) return { items };
    if (scanned >= (query.maxScan ?? MAX_SCAN)) return { items, continue: encodeContinue(after!), ...(query.maxScan === undefined ? {} : { scanCut: true as const }) };
  }
}

/** listObjects in parts of SCAN_PER_TURN objects with a turn of the event loop between them; at most MAX_SCAN in all, as one call. */
export async function listObjectsInTurns(indexer: Indexer, query: ListQuery, pause: () => Promise<void> = yieldToEventLoop): Promise<ListPage> {
  const maxBytes = query.maxBytes ?? MAX_PAGE_BYTES;
  const items: string[] = [];
  let bytes = 0;
  let from = query.continue;
  for (let scanned = 0; ; ) {
    const { continue: _, ...rest } = query;
    const part = listObjects(indexer, {
      ...rest,
      ...(from === undefined ? {} : { continue: from }),
      limit: query.limit - items.length,
      maxBytes: maxBytes - bytes,
      maxScan: Math.min(SCAN_PER_TURN, MAX_SCAN - scanned),
    });
    items.push(...part.items);
    bytes += part.items.reduce((sum, item) => sum + item.length, 0);
    scanned += SCAN_PER_TURN;
    const more = part.scanCut && part.continue !== undefined && items.length < query.limit && bytes < maxBytes && scanned < MAX_SCAN;
    if (!more) return { items, ...(part.continue === undefined ? {} : { continue: part.continue }) };
    from = part.continue;
    await pause();
  }
}

/** A page of an index's values (those `keep` keeps), bounded by `limit` and by MAX_PAGE_BYTES (paged ListIndexFuncValues). */
export function listIndexValues(
  indexer: Pick<Indexer, "indexValuesPage">,
  index: string,
  query: { limit: number; continue?: string },
  keep?: (value: string) => boolean,
): { values: string[]; continue?: string } {
  let after = query.continue === undefined ? undefined : decodeContinue(query.continue);
  const values: string[] = [];
  let bytes = 0;
  let largest = 0;
  for (;;) {
    // One value more than the page still needs tells whether another page follows.
    const want = Math.min(batchSize(largest), query.limit - values.length + 1);
    const batch = indexer.indexValuesPage(index, { limit: want, ...(after === undefined ? {} : { after }) });
    for (const value of batch) {
      largest = Math.max(largest, value.length);
      if (keep && !keep(value)) {
        after = value;
        continue;
      }
      if (values.length === query.limit || (values.length > 0 && bytes + value.length > MAX_PAGE_BYTES)) {
        return { values, continue: encodeContinue(after!) };
      }
      values.push(value);
      bytes += value.length;
      after = value;
    }
    if (batch.length < want) return { values };
  }
}

/** Rows per read: a batch holds its bodies until it is done, so size it by the largest seen so far. */
function batchSize(largest: number): number {
  return Math.min(SCAN_BATCH, largest === 0 ? FIRST_BATCH : Math.max(1, Math.floor(MAX_PAGE_BYTES / largest)));
}

function fetchBatch(indexer: Indexer, query: ListQuery, after: string | undefined, limit: number): CachedObject[] {
  const options = { limit, ...(after === undefined ? {} : { after }) };
  if (query.index) return indexer.byIndex(query.index.name, query.index.value, options);
  if (query.namespace !== undefined) return query.namespaces && !query.namespaces.has(query.namespace) ? [] : indexer.list({ ...options, namespace: query.namespace });
  return query.namespaces ? indexer.listIn(query.namespaces, options) : indexer.list(options);
}

function hasMore(indexer: Indexer, query: ListQuery, after: string): boolean {
  return fetchBatch(indexer, query, after, 1).length > 0;
}

/**
 * The predicate a namespace and selectors make, or undefined when they select everything. Leave out
 * a namespace the SQL already scoped: checking it here costs a parse of every object.
 */
export function makeFilter(query: Pick<ListQuery, "namespace" | "labelSelector" | "fieldSelector">): ((object: KubeObject) => boolean) | undefined {
  const labels = query.labelSelector && !isEverything(query.labelSelector) ? query.labelSelector : undefined;
  const fields = query.fieldSelector && !isEverything(query.fieldSelector) ? query.fieldSelector : undefined;
  const namespace = query.namespace;
  if (!labels && !fields && namespace === undefined) return undefined;
  return (object) =>
    (namespace === undefined || (object.metadata.namespace ?? "") === namespace) &&
    (!labels || matchesLabels(labels, object.metadata.labels)) &&
    (!fields || matchesFields(fields, object));
}
