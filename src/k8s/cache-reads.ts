/**
 * The cache's read API over one informer: gets, the `/k8s` lists at a log position, the search's
 * pages, and the query API's lists, index values and index lookups, each answered with the
 * cache's resourceVersion and readiness (QueryAnswer). InformerObject routes its read RPCs here.
 *
 * Guarantees:
 * - Every answer reads the informer the object serves at that moment (`WithInformer`): none while
 *   it is unconfigured or deleted (NotFound), and a heavy read takes it only once admitted, so a
 *   reconfiguration while it waited is seen.
 * - A list is one snapshot (versioned-list.ts): page 1 as the cache is now, later pages at the first
 *   page's log position; a position of another informer or one expired is answered expired, with
 *   where the list may go on inconsistently (`resume`).
 * - Heavy reads (k8s/admission.ts) — a `/k8s` list page marked heavy (unless an index answers its
 *   field selector: cache/index-selector.ts), a query API page with selectors — wait for one of
 *   the object's few slots or are refused with TooManyRequests while the queue is full (only a
 *   read's first page), and scan in turns with other work between them.
 *   A list whose pages name a `hold` (a `/k8s` list without limit, streamed) keeps its slot from
 *   page to page, so its pages never queue behind later reads (issue 27).
 * - Readiness says "not synced" before "not found" (review F4): a get answers null, not an error,
 *   so `/k8s` can tell them apart.
 */
import { indexLookup } from "../cache/index-selector.ts";
import { NAMESPACE_INDEX } from "../cache/indexer.ts";
import { NamespaceSet } from "../cache/namespace-set.ts";
import type { Informer, QueryView } from "../cache/informer.ts";
import { listIndexValues, type ListQuery, listObjects, listObjectsInTurns, MAX_LIST_LIMIT } from "../cache/lister.ts";
import { listAt, listFirstPage, listInTurns, type Position, resumeAfter, type VersionedPage, type VersionedQuery } from "../cache/versioned-list.ts";
import { yieldToEventLoop } from "../clock.ts";
import { ApiError, attemptAsync, fail, type Result } from "../errors.ts";
import { ANONYMOUS_OWNER, HEAVY_READ_SHED_MESSAGE, HeldSlots, type HeavyRead, type HeavyReadPart, type HoldSlot, inSlot, type ReadAdmission } from "./admission.ts";
import { type CacheReadiness, readinessOf } from "./cache-readiness.ts";
import { parseSelectors } from "./watch-params.ts";

export interface ObjectQuery {
  namespace?: string;
  /**
   * Only objects of these namespaces, never cluster-scoped ones: the namespaces an `rbac` cluster's
   * caller may list (http/list-scope.ts); absent, no such restriction. Read as key ranges (namespace-set.ts).
   */
  namespaces?: string[];
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
}

/** A query answer: items as JSON text plus the headers API.md promises. */
export interface QueryAnswer<T> extends CacheReadiness {
  value: T;
  resourceVersion: string;
}

/**
 * Runs `fn` on the informer the object serves now and its spec (as much of it as the caller reads),
 * or answers NotFound while there is none; what `fn` throws becomes the Result's error.
 */
export type WithInformer<S> = <T>(fn: (spec: S, informer: Informer) => T) => Result<T>;

/** A `/k8s` list page; a first page of the whole resource may tell how many objects the list has in all. */
export type ListPage = VersionedPage & { total?: number };

/** A `/k8s` list page's query: no continue token (the position stands for it), a limit. */
export type PageQuery = Omit<ObjectQuery, "continue"> & { limit: number };

/**
 * `value` with the cache's resourceVersion and readiness: as they are now, or as `view` found them
 * in the synchronous turn that read `value`'s state (a read made in turns answers the RV of its first
 * part, not the RV ingest reached during its yields: review N1, DESIGN.md invariant 9).
 */
export function answerOf<T>(informer: Informer, value: T, view: QueryView = informer.queryView()): QueryAnswer<T> {
  const { resourceVersion, synced } = view;
  return { value, resourceVersion, ...readinessOfInformer(informer, synced) };
}

/** Synced, or why not: the reflector's state is read only while the cache is not synced. */
export function readinessOfInformer(informer: Informer, synced = informer.queryView().synced): CacheReadiness {
  return readinessOf(synced, synced ? null : informer.lastFailure());
}

export class CacheReads {
  readonly #at: WithInformer<{ name: string }>;
  readonly #admission: ReadAdmission;
  readonly #pause: () => Promise<void>;
  readonly #held = new HeldSlots();

  /**
   * @param admission the object's heavy reads, shared with its watches' initial listings.
   * @param pause what a heavy read awaits between its parts (a turn of the event loop; tests apply ingest there).
   */
  constructor(at: WithInformer<{ name: string }>, admission: ReadAdmission, pause: () => Promise<void> = yieldToEventLoop) {
    this.#at = at;
    this.#admission = admission;
    this.#pause = pause;
  }

  getObject(key: string): Result<QueryAnswer<string>> {
    return this.#at((_, informer) => {
      const object = informer.indexer.get(key);
      if (!object) throw new ApiError("NotFound", `object '${key}' is not in the cache`);
      return answerOf(informer, object.body);
    });
  }

  /** One object or null, with the cache's readiness: `/k8s` tells "not synced" before "not found" (review F4). */
  findObject(key: string): Result<QueryAnswer<string | null>> {
    return this.#at((_, informer) => answerOf(informer, informer.indexer.get(key)?.body ?? null));
  }

  /**
   * A page of the cache as it was at a log position (versioned-list.ts): page 1 as it is now, later
   * pages at the first page's position, so that one list is one snapshot (the `/k8s` API). `from`
   * is a position in the log of informer `of` (when the token named one): another informer's, or
   * one expired, is answered expired with where the list may go on inconsistently (`resume`).
   * `heavy` marks a page of a heavy read (admission.ts): which part, whose, and the name its slot is
   * held under from one page to its next (HeldSlots), if it is.
   */
  listAt(query: PageQuery, from?: Position, of?: string, heavy?: HeavyReadPart): Result<QueryAnswer<ListPage>> | Promise<Result<QueryAnswer<ListPage>>> {
    if (heavy !== undefined && !this.#readsIndex(query)) return this.#heavyListAt(query, from, of, heavy);
    return this.#at((spec, informer) => {
      const parsed = versionedQuery(query);
      if (!from) {
        const page = listFirstPage(informer.indexer, informer.log, parsed, informer.snapshotPosition());
        // The whole resource's count, kept by the cache: the list's size when the page is of the
        // cache as it is (not of a relist's snapshot), for `remainingItemCount`.
        const whole = query.namespace === undefined && query.labelSelector === undefined && query.fieldSelector === undefined;
        const total = whole && !page.expired && page.at === informer.log.bounds().tail ? informer.cacheProgress.objectCount() : undefined;
        return answerOf<ListPage>(informer, total === undefined ? page : { ...page, total });
      }
      const page: VersionedPage = of !== undefined && of !== spec.name ? { expired: true } : listAt(informer.indexer, informer.log, parsed, from);
      return answerOf(informer, page.expired ? { expired: true, resume: resumeAfter(informer.log, from.after) } : page);
    });
  }

  /**
   * Whether a list is an index read (cache/index-selector.ts): its cost is its hits', as a page of a
   * light list's is its limit's, so it takes no heavy-read slot and is never shed (review G6: 40
   * pods-by-node lists at once were 429s). Without one fixed index value it stays heavy.
   */
  #readsIndex(query: { fieldSelector?: string }): boolean {
    const text = query.fieldSelector;
    if (text === undefined) return false;
    // A malformed selector is no index read: the read's own path reports it (a 400).
    const served = this.#at((_, informer) => indexLookup(informer.indexer, parseSelectors({ fieldSelector: text }).fieldSelector) !== undefined);
    return served.ok && served.value;
  }

  /**
   * `listAt` for a heavy read (k8s/admission.ts): it waits for one of the object's few slots, or is
   * refused (TooManyRequests) when the queue is full and it is a read's first page; the page is
   * made in parts with other work between them (versioned-list.ts listInTurns).
   */
  async #heavyListAt(query: PageQuery, from: Position | undefined, of: string | undefined, { part, owner = ANONYMOUS_OWNER, hold }: HeavyReadPart): Promise<Result<QueryAnswer<VersionedPage>>> {
    // Held while more pages follow (an unsynced cache's answer is refused: no page follows it).
    const more = (answer: Result<QueryAnswer<VersionedPage>>) =>
      answer.ok && answer.value.synced && !answer.value.value.expired && answer.value.value.next !== undefined;
    return this.#admitted(part, owner, async () => {
      const current = this.#at((spec, informer) => ({ spec, informer }));
      if (!current.ok) return current;
      const { spec, informer } = current.value;
      return attemptAsync(async () => {
        const expired = (): VersionedPage => ({ expired: true, resume: resumeAfter(informer.log, from?.after ?? "") });
        if (from && of !== undefined && of !== spec.name) return answerOf(informer, expired());
        const { page, view } = await this.#pageInTurns(informer, versionedQuery(query), from);
        return answerOf(informer, page.expired ? expired() : page, view);
      });
    }, hold === undefined ? undefined : { slots: this.#held, name: hold, more });
  }

  /** `work` in one of the object's heavy-read slots for `owner` (admission.ts), or TooManyRequests when it is shed. */
  async #admitted<T>(part: HeavyRead, owner: string, work: () => Promise<Result<T>>, hold?: HoldSlot<Result<T>>): Promise<Result<T>> {
    const answer = await inSlot(this.#admission, part, work, hold, owner);
    return answer === "shed" ? fail("TooManyRequests", HEAVY_READ_SHED_MESSAGE) : answer;
  }

  /**
   * A page made in parts (versioned-list.ts listInTurns), each reading at the first part's
   * position, and the cache's view taken in that first part's synchronous turn, before any yield
   * lets ingest move the cache on: its RV is the page's (review N1: read after the turns, it was
   * newer than the items).
   */
  async #pageInTurns(informer: Informer, query: VersionedQuery, at: Position | undefined): Promise<{ page: VersionedPage; view: QueryView | undefined }> {
    let view: QueryView | undefined;
    const read = (q: VersionedQuery, from?: Position) => {
      view ??= informer.queryView();
      return readAt(informer, q, from);
    };
    const page = await listInTurns(read, query, at, this.#pause);
    return { page, view };
  }

  /**
   * A page of a search across clusters (src/search): `listAt`, except that a position this cache can
   * no longer serve at its snapshot (expired, or from a log before the informer was recreated)
   * continues after the same key in the cache as it is now, instead of failing the whole search.
   * The page's `at` then differs from `from.at`: a new snapshot, at the answer's resourceVersion.
   */
  searchAt(query: PageQuery & { maxBytes?: number }, from?: Position, owner = ANONYMOUS_OWNER): Result<QueryAnswer<VersionedPage>> | Promise<Result<QueryAnswer<VersionedPage>>> {
    const parsed = { ...versionedQuery(query), ...(query.maxBytes === undefined ? {} : { maxBytes: query.maxBytes }) };
    // With selectors a page is a scan: a heavy read, admitted and made in turns as a `/k8s` selector
    // list is (review N2: unadmitted, a loop of searches held every informer's thread in 20,000-key
    // scans). A cluster that sheds it is named `partial` by the search, its cursor kept.
    if (query.labelSelector !== undefined || query.fieldSelector !== undefined) return this.#heavySearchAt(parsed, from, owner);
    return this.#at((_, informer) => {
      const page = readAt(informer, parsed, servable(informer, from));
      return answerOf(informer, page.expired ? readAt(informer, parsed, resumeAfter(informer.log, from?.after ?? "")) : page);
    });
  }

  async #heavySearchAt(parsed: VersionedQuery, from: Position | undefined, owner: string): Promise<Result<QueryAnswer<VersionedPage>>> {
    return this.#admitted("first", owner, async () => {
      const current = this.#at((_, informer) => informer);
      if (!current.ok) return current;
      const informer = current.value;
      return attemptAsync(async () => {
        const first = await this.#pageInTurns(informer, parsed, servable(informer, from));
        const { page, view } = first.page.expired ? await this.#pageInTurns(informer, parsed, resumeAfter(informer.log, from?.after ?? "")) : first;
        return answerOf(informer, page, view);
      });
    });
  }

  /**
   * A page of the query API. One with selectors is a scan, a heavy read (k8s/admission.ts): it waits
   * for one of the object's few slots or is refused (TooManyRequests), and scans in turns — unless
   * an index answers its field selector, which reads the index's hits only.
   */
  async listObjects(query: ObjectQuery, owner = ANONYMOUS_OWNER): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    const listQuery = (): ListQuery => ({
      ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
      ...namespacesOf(query),
      ...parseSelectors(query),
      ...(query.continue === undefined ? {} : { continue: query.continue }),
      limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
    });
    if (query.labelSelector === undefined && query.fieldSelector === undefined) {
      return this.#at((_, informer) => answerOf(informer, listObjects(informer.indexer, listQuery())));
    }
    // An index answers the field selector (cache/index-selector.ts): its hits are read, filtered by
    // the namespace and the rest of the selectors; light, as a `/k8s` list's (`#readsIndex`).
    if (this.#readsIndex(query)) {
      return this.#at((_, informer) => {
        const base = listQuery();
        const index = indexLookup(informer.indexer, base.fieldSelector);
        return answerOf(informer, listObjects(informer.indexer, index ? { ...base, index } : base));
      });
    }
    return this.#admitted("first", owner, async () => {
      const current = this.#at((_, informer) => informer);
      if (!current.ok) return current;
      const informer = current.value;
      // A scan in turns reads the live cache part by part: each item is at or after the RV the cache
      // was at when the first part was read (taken in that synchronous turn), so that RV is the one
      // a watch from X-Resource-Version misses nothing after (review N1); later RVs could skip changes.
      const view = informer.queryView();
      return attemptAsync(async () => answerOf(informer, await listObjectsInTurns(informer.indexer, listQuery(), this.#pause), view));
    });
  }

  /**
   * A page of an index's values. With `namespaces` (a caller who may list some namespaces only),
   * only the namespace index answers, with those of its values in the set: another index's values
   * come from every namespace's objects, and telling which of them the set's objects hold would read them.
   */
  indexValues(index: string, query: { limit?: number; continue?: string; namespaces?: string[] }): Result<QueryAnswer<{ values: string[]; continue?: string }>> {
    return this.#at((_, informer) => {
      if (!informer.indexer.indexNames().includes(index)) {
        throw new ApiError("NotFound", `index '${index}' does not exist (indexes: ${informer.indexer.indexNames().join(", ")})`);
      }
      const { namespaces } = namespacesOf(query);
      if (namespaces && index !== NAMESPACE_INDEX) throw new ApiError("Forbidden", `the values of index '${index}' span every namespace: listing them needs cluster-wide list`);
      return answerOf(
        informer,
        listIndexValues(
          informer.indexer,
          index,
          {
            ...(query.continue === undefined ? {} : { continue: query.continue }),
            limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
          },
          namespaces && ((value) => namespaces.has(value)),
        ),
      );
    });
  }

  byIndex(index: string, value: string, query: { limit?: number; continue?: string; namespaces?: string[] }): Result<QueryAnswer<{ items: string[]; continue?: string }>> {
    return this.#at((_, informer) =>
      answerOf(
        informer,
        listObjects(informer.indexer, {
          index: { name: index, value },
          ...namespacesOf(query),
          ...(query.continue === undefined ? {} : { continue: query.continue }),
          limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
        }),
      ),
    );
  }

  /**
   * The kind and scope of a cached object, or null while the cache is empty: what `/k8s` discovery
   * needs to know of a custom resource, which no built-in table describes.
   */
  sampleObject(): Result<{ kind: string; namespaced: boolean } | null> {
    return this.#at((_, informer) => {
      const [first] = informer.indexer.list({ limit: 1 });
      if (!first) return null;
      const kind = (JSON.parse(first.body) as { kind?: unknown }).kind;
      return typeof kind === "string" && kind !== "" ? { kind, namespaced: first.namespace !== "" } : null;
    });
  }
}

/** A list request's query for versioned-list.ts: selectors parsed, the limit capped. */
function versionedQuery(query: PageQuery): VersionedQuery {
  return {
    ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
    ...namespacesOf(query),
    ...parseSelectors(query),
    limit: Math.min(query.limit, MAX_LIST_LIMIT),
  };
}

/** A query's set of namespaces as the cache reads it, when it names one. */
function namespacesOf(query: { namespaces?: string[] }): { namespaces?: NamespaceSet } {
  return query.namespaces === undefined ? {} : { namespaces: new NamespaceSet(query.namespaces) };
}

/** A page at `at`, or the cache's first page as it is now. */
function readAt(informer: Informer, query: VersionedQuery, at?: Position): VersionedPage {
  return at ? listAt(informer.indexer, informer.log, query, at) : listFirstPage(informer.indexer, informer.log, query, informer.snapshotPosition());
}

/** A search's position as this log can serve it: one past the log's tail (a newer incarnation's) reads at the tail. */
function servable(informer: Informer, from: Position | undefined): Position | undefined {
  if (!from) return undefined;
  const tail = informer.log.bounds().tail;
  return from.at > tail ? { at: tail, after: from.after } : from;
}

