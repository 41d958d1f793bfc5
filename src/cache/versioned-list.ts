/**
 * Listing the cache as it was at a log position: what makes the pages of one `/k8s` list a
 * consistent snapshot, as the API server's are (every page is served at the first page's
 * resourceVersion), although the cache moves on between requests.
 *
 * Guarantees:
 * - Page 1 is the cache as it is (read in one synchronous call, so one state); its token carries
 *   the log's tail `at`. Every later page lists the keys after the previous page's last key as they
 *   were at `at`: a key untouched since holds its cached state; for a key changed since, the first
 *   event after `at` tells its state then (an `add`: absent; an `update`, `sync` or `delete`: the
 *   state it replaced, which the event carries). Objects deleted since are therefore still listed,
 *   objects added since are not, and nothing appears twice or in two versions.
 * - A token whose events are no longer all retained (retention passed `at`), that lags the log by
 *   more than MAX_CONTINUE_LAG events, or that is of another log incarnation, is expired: the caller
 *   answers 410 Expired, and the client starts a new list, as with an API server's compacted
 *   continue token — or goes on inconsistently from `resumeAfter`, as that server's 410 offers.
 * - Pages are bounded by count and by bytes (MAX_PAGE_BYTES, at least one item); items stay JSON text.
 * - `listInTurns` builds the same page from parts of at most SCAN_PER_TURN keys each, every part at
 *   the first part's position, yielding to the event loop in between: a heavy read (a whole list, a
 *   selector scan) leaves the object's thread to ingest and to other requests between parts (B3).
 *
 * Cost: the changes after `at` (without bodies) are read once per page; the states replaced since
 * `at` are read from the segments holding their keys' first changes. Bounded by MAX_CONTINUE_LAG. Keys a namespace or a `metadata.name=` /
 * `metadata.namespace=` selector excludes, or a set of namespaces (namespace-set.ts: a caller's RBAC), are skipped unparsed; a namespace with a fixed name reads
 * that one key (what `kubectl get pod x -w` and `kubectl wait` list), as the watch cache indexes by name;
 * an equality on an indexed field (`spec.nodeName=n1`) reads that index's hits (index-selector.ts).
 */
import type { KubeObject } from "../kube/types.ts";
import type { EventLog } from "./event-log.ts";
import type { CachedObject, Indexer } from "./indexer.ts";
import { indexLookup } from "./index-selector.ts";
import { exactKey, keyScope } from "./key-scope.ts";
import type { NamespaceSet } from "./namespace-set.ts";
import { type ListQuery, makeFilter, MAX_PAGE_BYTES, MAX_SCAN, SCAN_PER_TURN } from "./lister.ts";
import { yieldToEventLoop } from "../clock.ts";

/** Events a continue token may lag behind the log before it expires. */
export const MAX_CONTINUE_LAG = 10_000;
const SCAN_BATCH = 500;
/** The largest batch an unfiltered page reads at once (its limit and one more, to prove more follow). */
const MAX_PAGE_BATCH = 1_001;
export { SCAN_PER_TURN };

export interface VersionedQuery extends Pick<ListQuery, "namespace" | "namespaces" | "labelSelector" | "fieldSelector"> {
  limit: number;
  /** Bytes of bodies a page holds at most (at least one item); MAX_PAGE_BYTES when absent. */
  maxBytes?: number;
  /** Keys a page examines at most; MAX_SCAN when absent. A page cut by it says `scanCut`. */
  maxScan?: number;
}

export interface Position {
  /** The log position the list is served at. */
  at: number;
  /**
   * The log incarnation `at` is in (EventLog.incarnation); absent: this log's. A position of a log
   * made anew since (the informer deleted and re-created) is expired.
   */
  log?: string;
  /** The last key listed (exclusive cursor). */
  after: string;
}

export type VersionedPage =
  /** `keys[i]` is the key of `items[i]`: a search across clusters merges pages by key (src/search). */
  | { expired: false; items: string[]; keys: string[]; at: number; next?: Position; scanCut?: true }
  /** `resume`: where the list may go on inconsistently (resumeAfter), when the caller asked for it. */
  | { expired: true; resume?: Position };

/**
 * The first page of a list (review F18): at `snapshot`, the last position the cache was complete at
 * (Informer.snapshotPosition), while a committed Replace is still being popped — so no list shows
 * objects the relist removed beside objects only it brought — or as the cache is, when there is no
 * such position or it is too far behind to rebuild (a Replace of more than MAX_CONTINUE_LAG events).
 */
export function listFirstPage(indexer: Indexer, log: EventLog, query: VersionedQuery, snapshot: number | undefined): VersionedPage {
  if (snapshot !== undefined) {
    const page = listAt(indexer, log, query, { at: snapshot, after: "" });
    if (!page.expired) return page;
  }
  return listAt(indexer, log, query);
}

/**
 * Where a list whose position expired may go on: after the same key, in the cache as it is now (the
 * log's tail, as etcd's "inconsistent" continue token goes on at the latest revision). Objects
 * changed between the two positions may show in either version, or both sides of a key; nothing
 * after the key is missed.
 */
export function resumeAfter(log: EventLog, after: string): Position {
  return { at: log.bounds().tail, log: log.incarnation(), after };
}

/** One page of the cache as it was at `from.at` (or as it is, when `from` is absent). */
export function listAt(indexer: Indexer, log: EventLog, query: VersionedQuery, from?: Position): VersionedPage {
  const { head, tail } = log.bounds();
  const at = from?.at ?? tail;
  const incarnation = log.incarnation();
  // Beyond the tail, the position is another log's too (an informer re-created before the log
  // carried its incarnation): expired as well, as the API server expires a continue it cannot use.
  if (from?.log !== undefined && from.log !== incarnation) return { expired: true };
  if (at > tail || at + 1 < head || tail - at > MAX_CONTINUE_LAG) return { expired: true };
  const earlier = from === undefined ? new Map<string, string | null>() : statesAt(log, at, from.after, query.namespace, query.namespaces);
  // The namespace is already scoped: by the SQL for cached rows, by key prefix in statesAt.
  const filter = makeFilter({ ...query, namespace: undefined });
  const inScope = withinSet(keyScope(query.namespace, query.fieldSelector), query.namespaces);
  const only = exactKey(query.namespace, query.fieldSelector);
  const items: string[] = [];
  const keys: string[] = [];
  let bytes = 0;
  let after = from?.after ?? "";
  let scanned = 0;
  // Unfiltered, a page is its limit and the one key that proves more follow: read that many at once,
  // not a batch of SCAN_BATCH and then another (twice the rows for a page of 500).
  const batch = filter ? SCAN_BATCH : Math.min(query.limit + 1, MAX_PAGE_BATCH);
  // An equality on an indexed field reads the index's hits (index-selector.ts); the namespace and the
  // whole selector still apply to each (inScope, filter), so the page is a scan's.
  const lookup = only === undefined ? indexLookup(indexer, query.fieldSelector) : undefined;
  const rows: RowSource = lookup
    ? (from, limit) => indexer.byIndex(lookup.name, lookup.value, { after: from, limit })
    : query.namespace === undefined && query.namespaces
      ? (from, limit) => indexer.listIn(query.namespaces!, { after: from, limit })
      : (from, limit) => indexer.list({ after: from, limit, ...(query.namespace === undefined ? {} : { namespace: query.namespace }) });
  const entries = only === undefined ? entriesAt(rows, after, earlier, batch) : entryAt(indexer, only, after, earlier);
  for (const [key, body] of entries) {
    if (body !== null && (!inScope || inScope(key)) && (!filter || filter(JSON.parse(body) as KubeObject))) {
      // A match that does not fit: the page ends before it, and it proves that more follow.
      if (items.length === query.limit || (items.length > 0 && bytes + body.length > (query.maxBytes ?? MAX_PAGE_BYTES))) {
        return { expired: false, items, keys, at, next: { at, log: incarnation, after } };
      }
      items.push(body);
      keys.push(key);
      bytes += body.length;
    }
    after = key;
    if (++scanned >= (query.maxScan ?? MAX_SCAN)) {
      return { expired: false, items, keys, at, next: { at, log: incarnation, after }, ...(query.maxScan === undefined ? {} : { scanCut: true as const }) };
    }
  }
  return { expired: false, items, keys, at };
}

/**
 * One page as `read` (listFirstPage or listAt) makes it, in parts of SCAN_PER_TURN keys with a turn
 * of the event loop between them; at most MAX_SCAN keys in all, as one call. A part whose position
 * has expired meanwhile ends the page early: its continue position expires in turn, as it would
 * have on the next page.
 */
export async function listInTurns(
  read: (query: VersionedQuery, from?: Position) => VersionedPage,
  query: VersionedQuery,
  from?: Position,
  pause: () => Promise<void> = yieldToEventLoop,
): Promise<VersionedPage> {
  const maxBytes = query.maxBytes ?? MAX_PAGE_BYTES;
  let page = read({ ...query, maxScan: SCAN_PER_TURN }, from);
  if (page.expired) return page;
  const { at } = page;
  const items = [...page.items];
  const keys = [...page.keys];
  let bytes = items.reduce((sum, item) => sum + item.length, 0);
  for (let scanned = SCAN_PER_TURN; page.scanCut && page.next && items.length < query.limit && bytes < maxBytes && scanned < MAX_SCAN; scanned += SCAN_PER_TURN) {
    await pause();
    const part = read({ ...query, limit: query.limit - items.length, maxBytes: maxBytes - bytes, maxScan: Math.min(SCAN_PER_TURN, MAX_SCAN - scanned) }, page.next);
    if (part.expired) break;
    items.push(...part.items);
    keys.push(...part.keys);
    bytes += part.items.reduce((sum, item) => sum + item.length, 0);
    page = part;
  }
  return { expired: false, items, keys, at, ...(page.next ? { next: page.next } : {}) };
}

/** The cached rows a list reads, in key order after a key: all (of a namespace), or an index's hits. */
type RowSource = (after: string, limit: number) => CachedObject[];

/**
 * The keys after `after` in key order with their state at the list's position: the cache's rows
 * (`source`), merged with the keys changed since (`earlier`, whose states replace the cached ones;
 * null: absent). With an index's hits as the source, a key changed since keeps its state at the
 * position whether or not the index holds it now; the caller's filter decides.
 */
function* entriesAt(source: RowSource, after: string, earlier: Map<string, string | null>, batchSize: number): Generator<[string, string | null]> {
  const pending = [...earlier.keys()].sort();
  let cursor = after;
  for (;;) {
    const rows = source(cursor, batchSize);
    for (const object of rows) {
      while (pending.length > 0 && pending[0]! < object.key) {
        const key = pending.shift()!;
        yield [key, earlier.get(key)!];
      }
      if (pending[0] === object.key) pending.shift();
      yield [object.key, earlier.has(object.key) ? earlier.get(object.key)! : object.body];
    }
    if (rows.length < batchSize) break;
    cursor = rows.at(-1)!.key;
  }
  for (const key of pending) yield [key, earlier.get(key)!];
}

/** entriesAt for the one key a list can hold: its state at the list's position, if after `after`. */
function* entryAt(indexer: Indexer, key: string, after: string, earlier: Map<string, string | null>): Generator<[string, string | null]> {
  if (key <= after) return;
  yield [key, earlier.has(key) ? earlier.get(key)! : (indexer.get(key)?.body ?? null)];
}

/**
 * For each key after `after` (in `namespace`, and in `namespaces`) changed since `at`: its state at `at`, or null when
 * it did not exist then.
 */
function statesAt(log: EventLog, at: number, after: string, namespace: string | undefined, namespaces: NamespaceSet | undefined): Map<string, string | null> {
  const first = new Map<string, number>();
  for (const change of log.changesAfter(at, MAX_CONTINUE_LAG)) {
    if (change.key <= after || first.has(change.key)) continue;
    if (namespace !== undefined && !change.key.startsWith(`${namespace}/`)) continue;
    if (namespaces && !namespaces.holdsKey(change.key)) continue;
    first.set(change.key, change.seq);
  }
  // An add replaced nothing (absent at `at`); an update, sync or delete the state the key had then,
  // which its event carries; a delete of a key that was only queued (never cached) replaced none either.
  const replaced = log.replacedStates([...first.values()]);
  return new Map([...first].map(([key, seq]) => [key, replaced.get(seq) ?? null]));
}

/** `scope` narrowed to the keys of `namespaces` (a set drops cluster-scoped keys too), unparsed. */
function withinSet(scope: ((key: string) => boolean) | undefined, namespaces: NamespaceSet | undefined): ((key: string) => boolean) | undefined {
  if (!namespaces) return scope;
  return (key) => namespaces.holdsKey(key) && (!scope || scope(key));
}
