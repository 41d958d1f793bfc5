/**
 * InformerObject: one Durable Object per informer, a thin shell over cache/informer.ts. It wires
 * storage, the clock and the Kubernetes client, runs one slice per alarm, and answers queries.
 *
 * Invariant 7: `alarm()` re-arms in `finally` from durable state whatever happened, so an error
 * or a crash cannot stop the loop (and the factory's cron re-arms a missing alarm).
 *
 * Each slice has a subrequest budget (net/subrequest-budget.ts): the API server's lists and
 * watches and the nudges to subscriptions spend it; at its margin nudging stops, the slice ends and
 * re-arms at once, and the next invocation nudges the rest (docs/architecture.md "Platform limits").
 */
import { ownPlacement } from "../clusters/placement.ts";
import { subscriptionStub } from "../clusters/stubs.ts";
import { DurableObject } from "cloudflare:workers";
import { Informer, migrateInformer } from "../cache/informer.ts";
import { type ListQuery, listIndexValues, listObjects, listObjectsInTurns, MAX_LIST_LIMIT } from "../cache/lister.ts";
import type { ReadResult } from "../cache/event-log.ts";
import { listAt, listFirstPage, listInTurns, type Position, resumeAfter, type VersionedPage, type VersionedQuery } from "../cache/versioned-list.ts";
import { FRESHNESS_WAIT_MS, WatchHub, type WatchSource } from "../k8s/watch-hub.ts";
import { type RelayAnswer, type RelayCall, RelayHost, type RelaySnapshot } from "../k8s/watch-relay.ts";
import { parseSelectors, type WatchOpening, type WatchParams, watchRequestOf } from "../k8s/watch-params.ts";
import { HEAVY_READ_SHED_MESSAGE, type HeavyRead, inSlot, ReadAdmission } from "../k8s/admission.ts";
import { isRefusal } from "../k8s/watcher-caps.ts";
import type { Freshness } from "../k8s/list-consistency.ts";
import { type CacheReadiness, readinessOf } from "../k8s/cache-readiness.ts";
import { watchSourceOf } from "./informer-watch-source.ts";
import { Nudger, withinBudget } from "../delivery/nudger.ts";
import { isSubrequestLimit, SubrequestBudget, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { AlarmSlice } from "./alarm-slice.ts";
import { type SliceKillCounts, SliceKills } from "./slice-kills.ts";
import { type SubscriberCursor, SubscriberList } from "../delivery/subscriber-list.ts";
import type { SnapshotPage } from "../delivery/feed.ts";
import { SpecStore } from "../config/spec-store.ts";
import { migrateResourceDescriptions, storeDescription, storedDescription } from "../cache/resource-description-store.ts";
import { readCrdDescription } from "../clusters/upstream-crd.ts";
import { describeFromObject, type ResourceDescription } from "../kube/resource-description.ts";
import { type ClusterConnection, defaultConnection, resolveConnection } from "../clusters/cluster.ts";
import { openConnection, sameConnection } from "../clusters/sealed-connection.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { systemClock, systemRandom } from "../clock.ts";
import { TRANSFORM_VERSION } from "../cache/transform.ts";
import { type StorageStatus, storageStatus } from "../cache/storage-ceiling.ts";
import { indexersChanged, informerSettings, type InformerSpec, listingChanged, sameSpec, transformChanged } from "../config/informer-spec.ts";
import type { Env } from "../env.ts";
import { ApiError, attempt, attemptAsync, fail, ok, type Result } from "../errors.ts";
import { KubeClient } from "../kube/client.ts";
import { resolveResource } from "../kube/resources.ts";
import { Db, hasSchema } from "../sql.ts";
import type { RowCounts, RowTally } from "../sql-rows.ts";
import { errorText, logger, setLogLevel } from "../log.ts";
import type { InformerMetrics } from "../cache/log-counters.ts";
import { informerIdentity } from "../log-identity.ts";

/** An informer's metrics with what only its object knows: its name, subscriptions and storage size. */
export interface InformerObjectMetrics extends InformerMetrics {
  name: string;
  resource: string;
  subscriptions: string[];
  /** The object's whole SQLite database (log, cache, queue), as the platform bills it. */
  storageBytes: number;
  /** Rows its statements read and wrote since it was loaded (sql-rows.ts: in memory, reset by an eviction). */
  sqlRows: RowCounts;
  /** Alarm slices killed before their end (objects/slice-kills.ts). */
  sliceKills: number;
}

/** One alarm's slice: room for a full watch session (≤ 600 s + margin) under the 15 min alarm limit. */
export const SLICE_MS = 12 * 60_000;
/** Re-arm delay when even reading durable state failed. */
const FALLBACK_REARM_MS = 30_000;
/** How long a CRD that could not be read is not asked for again: discovery asks about once a second. */
const CRD_RETRY_MS = 60_000;
/** Most log events or objects one feed read returns, and roughly how many bytes of bodies. */
const MAX_FEED_ITEMS = 1_000;
const MAX_FEED_BYTES = 4 * 1024 * 1024;

export interface InformerStatus {
  name: string;
  cluster: string;
  resource: string;
  synced: boolean;
  lastSyncResourceVersion: string;
  cacheResourceVersion: string;
  objects: number;
  queueDepth: number;
  skippedObjects: number;
  lastSkipped: string | null;
  /** `wakesAt`: while `state` is "sleeping", when the next watch window opens (cache/watch-windows.ts). */
  watch: { state: string; since: string | null; restarts: number; wakesAt?: string };
  relists: number;
  lastError: string | null;
  eventLog: { head: number; tail: number };
  storage: StorageStatus;
  subscriptions: number;
  /** Alarm slices killed before their end, the last one's start, and whether lists now go in pages (objects/slice-kills.ts). */
  sliceKills: { count: number; lastAt: string | null; listsInPages: boolean };
}

export interface ObjectQuery {
  namespace?: string;
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

export class InformerObject extends DurableObject<Env> {
  readonly #db: Db;
  #specs!: SpecStore;
  #subscribers!: SubscriberList;
  /** When the CRD may be asked for again after it could not be read (memory only: a restart may ask at once). */
  #crdRetryAt = 0;
  /** Whether this object has its tables: set by the first configure(), cleared by destroy(). */
  #configured = false;
  /** Tells subscriptions that the log grew, one round at a time. */
  readonly #nudger = new Nudger((tail) => this.#nudgeSubscribers(tail));
  /**
   * Subscriptions that read up to the log's tail and wait for a nudge; only they are nudged (a busy
   * one reads on anyway, a failing one waits for its retry). Memory only: `undefined` — after a
   * start, or on the cron's tick — means every subscription.
   */
  #waiting: Set<string> | undefined;
  /** The stored spec and an Informer over it, for queries and feed reads. */
  #current: { spec: InformerSpec; informer: Informer } | undefined;
  /** Heavy reads of this object's cache (k8s/admission.ts): initial listings of watches, unpaged and selector lists. */
  readonly #heavyReads = new ReadAdmission();
  /** Open `/k8s` watches, served from the log (k8s/watch-hub.ts). */
  readonly #watches = new WatchHub(() => this.#watchSource(), { admission: this.#heavyReads });
  /** Watch relays serving `/k8s` watchers off this object's thread read through this (k8s/watch-relay.ts). */
  readonly #relays = new RelayHost(() => this.#watchSource(), (ms) => this.#watches.changed(ms), this.#heavyReads);
  /** The running slice, so configuration changes and deletion can stop it and wait. */
  readonly #slice = new AlarmSlice();
  /** The running slice's subrequest budget; none between slices. */
  #budget: SubrequestBudget | undefined;
  /** The tail of a nudge round the budget cut short: the next slice sends it to those left (memory only: they poll). */
  #owedNudge: number | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = new Db(ctx.storage);
    setLogLevel(env.LOG_LEVEL);
    // Tables appear with the first configure(): an object reached through an unknown name (a query,
    // a probe) answers NotFound and stores nothing (#7.17).
    ctx.blockConcurrencyWhile(async () => {
      this.#migrate(false);
      await this.#retransformOutdated();
    });
  }

  /**
   * Creates or updates this informer. `connection` is how to reach its cluster's API server; none
   * for the default cluster, whose connection the environment gives at each watch.
   */
  async configure(spec: InformerSpec, connection?: ClusterConnection): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    if (!this.#configured) this.#migrate(true);
    const previous = this.#specs.get();
    const stored = connection ?? null;
    if (previous && sameListing(previous.spec, spec) && (await sameConnection(this.#sealer(), spec.cluster, previous.connection, stored))) {
      // Nothing the loop uses changed: leave a live watch alone (an idempotent PUT must not restart
      // it); declared subscriptions are the factory's business. A token sealed anew (a key rotation)
      // is stored in its new form.
      if (!sameSpec(previous.spec, spec) || JSON.stringify(previous.connection) !== JSON.stringify(stored)) this.#putSpec(spec, stored);
      return ok({ created: false, status: this.#status(spec, this.#informer(spec)) });
    }
    await this.#slice.stop();
    this.#putSpec(spec, stored);
    // What the watchers were promised no longer holds: their clients re-watch (and relist on a 410).
    this.#closeWatches();
    const informer = this.#informer(spec);
    const retransform = previous !== undefined && transformChanged(previous.spec, spec);
    // Another API server URL may be another cluster, whose resource versions mean nothing here: relist.
    // (A new token for the same server only reconnects.)
    const moved = previous !== undefined && (previous.connection?.server ?? null) !== (stored?.server ?? null);
    // A transform change relists too: a field the old transform dropped can only come from the server.
    if (previous && (listingChanged(previous.spec, spec) || retransform || moved)) informer.restart({ transformChanged: retransform, serverMoved: moved });
    else informer.wakeNow();
    if (previous && indexersChanged(previous.spec, spec)) informer.rebuildIndexes();
    await this.ctx.storage.setAlarm(Date.now());
    return ok({ created: previous === undefined, status: this.#status(spec, informer) });
  }

  async status(): Promise<Result<InformerStatus>> {
    return this.#withInformer((spec, informer) => this.#status(spec, informer));
  }

  /** What /metrics and the status page read (src/metrics). */
  async metrics(): Promise<Result<InformerObjectMetrics>> {
    return this.#withInformer((spec, informer) => ({
      ...informer.metrics(),
      name: spec.name,
      resource: spec.resource,
      subscriptions: this.#subscribers.ids(),
      storageBytes: this.ctx.storage.sql.databaseSize,
      sqlRows: this.#db.rows.totals(),
      sliceKills: this.#kills.counts().kills,
    }));
  }

  /** The rows this object's statements read and wrote (what /metrics reports; the cost tests read it in place). */
  get sqlRows(): RowTally {
    return this.#db.rows;
  }

  /** When each of the log's events `seqs` was appended (a subscription's lag in seconds); absent ones are left out. */
  async eventTimes(seqs: number[]): Promise<Result<Record<number, number>>> {
    return this.#withInformer((_, informer) => Object.fromEntries(informer.log.timesOf(seqs)));
  }

  async getObject(key: string): Promise<Result<QueryAnswer<string>>> {
    return this.#withInformer((_, informer) => {
      const object = informer.indexer.get(key);
      if (!object) throw new ApiError("NotFound", `object '${key}' is not in the cache`);
      return this.#answer(informer, object.body);
    });
  }

  /** One object or null, with the cache's readiness: `/k8s` tells "not synced" before "not found" (review F4). */
  async findObject(key: string): Promise<Result<QueryAnswer<string | null>>> {
    return this.#withInformer((_, informer) => this.#answer(informer, informer.indexer.get(key)?.body ?? null));
  }

  /**
   * A page of the cache as it was at a log position (versioned-list.ts): page 1 as it is now, later
   * pages at the first page's position, so that one list is one snapshot (the `/k8s` API). `from`
   * is a position in the log of informer `of` (when the token named one): another informer's, or
   * one expired, is answered expired with where the list may go on inconsistently (`resume`).
   */
  async listAt(
    query: Omit<ObjectQuery, "continue"> & { limit: number },
    from?: Position,
    of?: string,
    heavy?: HeavyRead,
  ): Promise<Result<QueryAnswer<VersionedPage>>> {
    if (heavy !== undefined) return this.#heavyListAt(query, from, of, heavy);
    return this.#withInformer((spec, informer) => {
      const parsed = versionedQuery(query);
      if (!from) return this.#answer(informer, listFirstPage(informer.indexer, informer.log, parsed, informer.snapshotPosition()));
      const page: VersionedPage = of !== undefined && of !== spec.name ? { expired: true } : listAt(informer.indexer, informer.log, parsed, from);
      return this.#answer(informer, page.expired ? { expired: true, resume: resumeAfter(informer.log, from.after) } : page);
    });
  }

  /**
   * `listAt` for a heavy read (k8s/admission.ts): it waits for one of the object's few slots, or is
   * refused (TooManyRequests) when the queue is full and it is a read's first page; the page is
   * made in parts with other work between them (versioned-list.ts listInTurns).
   */
  async #heavyListAt(query: Omit<ObjectQuery, "continue"> & { limit: number }, from: Position | undefined, of: string | undefined, heavy: HeavyRead): Promise<Result<QueryAnswer<VersionedPage>>> {
    const answer = await inSlot(this.#heavyReads, heavy, async () => {
      const current = this.#withInformer((spec, informer) => ({ spec, informer }));
      if (!current.ok) return current;
      const { spec, informer } = current.value;
      return attemptAsync(async () => {
        const expired = (): VersionedPage => ({ expired: true, resume: resumeAfter(informer.log, from?.after ?? "") });
        if (from && of !== undefined && of !== spec.name) return this.#answer(informer, expired());
        const read = (q: VersionedQuery, at?: Position) => (at ? listAt(informer.indexer, informer.log, q, at) : listFirstPage(informer.indexer, informer.log, q, informer.snapshotPosition()));
        const page = await listInTurns(read, versionedQuery(query), from);
        return this.#answer(informer, page.expired ? expired() : page);
      });
    });
    return answer === "shed" ? fail("TooManyRequests", HEAVY_READ_SHED_MESSAGE) : answer;
  }

  /**
   * The cache's resourceVersion once it reaches `resourceVersion`, or after `waitMs` (at most the
   * watch cache's FRESHNESS_WAIT_MS): a `/k8s` list ahead of the cache (k8s/list-consistency.ts)
   * waits here on the watch hub's wake-up, as a watch-list's start does. Awaiting it keeps no input
   * gate shut: the object serves other requests and ingests meanwhile. An RV the cluster's earlier
   * API server handed out is told at once (Informer.fromEarlierServer): no wait makes it comparable.
   * An informer sleeping between watch windows opens the next one now: its cache may only be behind.
   */
  async awaitResourceVersion(resourceVersion: string, waitMs: number): Promise<Result<Freshness>> {
    const earlier = this.#withInformer((_, informer) => informer.fromEarlierServer(resourceVersion));
    if (!earlier.ok) return earlier;
    if (earlier.value) return ok("earlierServer");
    if (this.#wakeIfSleeping()) await this.ctx.storage.setAlarm(Date.now() + 1);
    await this.#watches.reaches(resourceVersion, Math.min(Math.max(waitMs, 0), FRESHNESS_WAIT_MS));
    return this.#withInformer((_, informer) => ({ current: informer.queryView().resourceVersion }));
  }

  /**
   * A page of a search across clusters (src/search): `listAt`, except that a position this cache can
   * no longer serve at its snapshot (expired, or from a log before the informer was recreated)
   * continues after the same key in the cache as it is now, instead of failing the whole search.
   * The page's `at` then differs from `from.at`: a new snapshot, at the answer's resourceVersion.
   */
  async searchAt(
    query: Omit<ObjectQuery, "continue"> & { limit: number; maxBytes?: number },
    from?: Position,
  ): Promise<Result<QueryAnswer<VersionedPage>>> {
    return this.#withInformer((_, informer) => {
      const parsed = { ...versionedQuery(query), ...(query.maxBytes === undefined ? {} : { maxBytes: query.maxBytes }) };
      const tail = informer.log.bounds().tail;
      let page = from
        ? listAt(informer.indexer, informer.log, parsed, from.at > tail ? { at: tail, after: from.after } : from)
        : listFirstPage(informer.indexer, informer.log, parsed, informer.snapshotPosition());
      if (page.expired) page = listAt(informer.indexer, informer.log, parsed, resumeAfter(informer.log, from?.after ?? ""));
      return this.#answer(informer, page);
    });
  }

  /**
   * Opens a `/k8s` watch (k8s/watch-hub.ts): a stream of NDJSON watch events. Bad selectors are a
   * BadRequest; a start the log no longer covers is an ERROR event in the stream, as the server's.
   * An unsynced cache opens nothing (review F5): its partial or stale objects are no initial state.
   */
  async watch(request: WatchParams): Promise<Result<WatchOpening>> {
    const opened = this.#withInformer((_, informer): WatchOpening => {
      const readiness = this.#readiness(informer);
      if (!readiness.synced) return { notReady: readiness };
      const opened = this.#watches.tryOpen(watchRequestOf(request));
      return isRefusal(opened) ? { tooMany: { message: opened.message, retryAfterSeconds: opened.retryAfterSeconds } } : opened;
    });
    if (opened.ok && "stream" in opened.value && this.#wakeForWatchers()) await this.ctx.storage.setAlarm(Date.now() + 1);
    return opened;
  }

  /**
   * Wakes an informer sleeping between watch windows (cache/watch-windows.ts) while a `/k8s` watch
   * is open: its client expects live events. Asked when a watch opens and when the alarm re-arms
   * (a watch may open just as a window ends). Answers whether it woke it; the caller sets the alarm.
   */
  #wakeForWatchers(): boolean {
    return this.#watched() && this.#wakeIfSleeping();
  }

  /** Whether `/k8s` watchers want live events: its own, or a relay's that polls. */
  #watched(): boolean {
    return this.#watches.watchers > 0 || this.#relays.active;
  }

  /** What the watchers were promised no longer holds: their clients re-watch (and relist on a 410). */
  #closeWatches(): void {
    this.#relays.closeAll();
    this.#watches.closeAll();
  }

  /**
   * A watch relay opening a watch (k8s/watch-relay.ts): whether the cache may be watched (an
   * unsynced one opens nothing, as `watch` does) and the state to start from. Wakes an informer
   * sleeping between watch windows, as a watch opening here does.
   */
  async relayOpen(): Promise<Result<{ readiness: CacheReadiness; snapshot?: RelaySnapshot }>> {
    const opened = this.#withInformer((_, informer) => {
      const readiness = this.#readiness(informer);
      const snapshot = readiness.synced ? this.#relays.snapshot() : undefined;
      return snapshot ? { readiness, snapshot } : { readiness };
    });
    if (opened.ok && opened.value.readiness.synced && this.#wakeIfSleeping()) await this.ctx.storage.setAlarm(Date.now() + 1);
    return opened;
  }

  /** A relay's poll (RelayHost.poll); undefined once the informer is gone. */
  async relayPoll(known: RelaySnapshot | undefined, waitMs: number): Promise<RelaySnapshot | undefined> {
    if (this.#wakeForWatchers()) await this.ctx.storage.setAlarm(Date.now() + 1);
    return this.#relays.poll(known, waitMs);
  }

  /** A relay's read of the log or the cache (RelayHost.call). */
  async relayCall(incarnation: string, call: RelayCall): Promise<RelayAnswer> {
    return this.#relays.call(incarnation, call);
  }

  /** Opens the next watch window now if the informer sleeps between them; answers whether it did. */
  #wakeIfSleeping(): boolean {
    const woke = this.#withInformer((spec, informer) => {
      if ((spec.maxLagSeconds ?? 0) === 0 || informer.progress().watch.state !== "sleeping") return false;
      informer.wakeNow();
      return true;
    });
    return woke.ok && woke.value;
  }

  /**
   * What `/k8s` says about this informer's custom resource (kube/resource-description.ts): its CRD,
   * read from the API server once and kept durably, so discovery lists it with no object cached;
   * while the CRD cannot be read (tried again at most every CRD_RETRY_MS), what a cached object
   * shows. Null for a built-in resource (the catalog describes it) or while nothing tells.
   */
  async resourceDescription(): Promise<Result<ResourceDescription | null>> {
    const current = this.#withInformer((spec) => spec);
    if (!current.ok) return current;
    const spec = current.value;
    const ref = resolveResource(spec.resource, spec.apiVersion);
    if (ref.namespaced !== undefined) return ok(null);
    const key = `${ref.resource}.${ref.group}/${ref.version}`;
    const known = storedDescription(this.#db, key);
    if (known) return ok(known);
    if (Date.now() >= this.#crdRetryAt) {
      this.#crdRetryAt = Date.now() + CRD_RETRY_MS;
      const stored = this.#stored();
      const connection = stored?.connection ? await openConnection(this.#sealer(), spec.cluster, stored.connection) : defaultConnection(this.env);
      const fromCrd = await readCrdDescription(spec.cluster, connection, this.env, ref);
      if (fromCrd) {
        storeDescription(this.#db, key, fromCrd, Date.now());
        return ok(fromCrd);
      }
    }
    const sample = await this.sampleObject();
    return sample.ok ? ok(sample.value && describeFromObject(sample.value)) : sample;
  }

  /**
   * The kind and scope of a cached object, or null while the cache is empty: what `/k8s` discovery
   * needs to know of a custom resource, which no built-in table describes.
   */
  async sampleObject(): Promise<Result<{ kind: string; namespaced: boolean } | null>> {
    return this.#withInformer((_, informer) => {
      const [first] = informer.indexer.list({ limit: 1 });
      if (!first) return null;
      const kind = (JSON.parse(first.body) as { kind?: unknown }).kind;
      return typeof kind === "string" && kind !== "" ? { kind, namespaced: first.namespace !== "" } : null;
    });
  }

  #watchSource(): WatchSource | undefined {
    const current = this.#withInformer((_, informer) => informer);
    if (!current.ok) return undefined;
    return watchSourceOf(current.value);
  }

  /**
   * A page of the query API. One with selectors is a scan, a heavy read (k8s/admission.ts): it waits
   * for one of the object's few slots or is refused (TooManyRequests), and scans in turns.
   */
  async listObjects(query: ObjectQuery): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    const listQuery = (): ListQuery => ({
      ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
      ...parseSelectors(query),
      ...(query.continue === undefined ? {} : { continue: query.continue }),
      limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
    });
    if (query.labelSelector === undefined && query.fieldSelector === undefined) {
      return this.#withInformer((_, informer) => this.#answer(informer, listObjects(informer.indexer, listQuery())));
    }
    const answer = await inSlot(this.#heavyReads, "first", async () => {
      const current = this.#withInformer((_, informer) => informer);
      if (!current.ok) return current;
      const informer = current.value;
      return attemptAsync(async () => this.#answer(informer, await listObjectsInTurns(informer.indexer, listQuery())));
    });
    return answer === "shed" ? fail("TooManyRequests", HEAVY_READ_SHED_MESSAGE) : answer;
  }

  async indexValues(
    index: string,
    query: { limit?: number; continue?: string } = {},
  ): Promise<Result<QueryAnswer<{ values: string[]; continue?: string }>>> {
    return this.#withInformer((_, informer) => {
      if (!informer.indexer.indexNames().includes(index)) {
        throw new ApiError("NotFound", `index '${index}' does not exist (indexes: ${informer.indexer.indexNames().join(", ")})`);
      }
      return this.#answer(
        informer,
        listIndexValues(informer.indexer, index, {
          ...(query.continue === undefined ? {} : { continue: query.continue }),
          limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
        }),
      );
    });
  }

  async byIndex(
    index: string,
    value: string,
    query: { limit?: number; continue?: string },
  ): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    return this.#withInformer((_, informer) =>
      this.#answer(
        informer,
        listObjects(informer.indexer, {
          index: { name: index, value },
          ...(query.continue === undefined ? {} : { continue: query.continue }),
          limit: Math.min(query.limit ?? MAX_LIST_LIMIT, MAX_LIST_LIMIT),
        }),
      ),
    );
  }

  /**
   * Events after `after` (the feed subscriptions read), at most `limit` and about MAX_FEED_BYTES.
   * A `subscriber` that got everything up to the tail is nudged when more arrives.
   */
  async readLog(after: number, limit: number, subscriber?: string): Promise<Result<ReadResult>> {
    return this.#withInformer((_, informer) => {
      // Read no more than the answer may hold: the log stops decoding there (then trimmed exactly).
      const read = informer.log.read(after, clampLimit(limit), MAX_FEED_BYTES);
      const events = withinBytes(read.events, (e) => (e.object?.length ?? 0) + (e.oldObject?.length ?? 0));
      const caughtUp = (events.at(-1)?.seq ?? after) >= read.bounds.tail;
      if (subscriber !== undefined && caughtUp) this.#waiting?.add(subscriber);
      return { ...read, events };
    });
  }

  /** A page of the cache in key order, split at log position `at` (a marker's expansion, SnapshotPage). */
  async snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<Result<SnapshotPage>> {
    return this.#withInformer((_, informer) => {
      const max = clampLimit(limit);
      const rows = informer.indexer.list({ after: after ?? "", limit: max, ...(namespace === undefined ? {} : { namespace }) });
      const page = withinBytes(rows, (o) => (o.seq <= at ? o.body.length : 0));
      return {
        objects: page.filter((o) => o.seq <= at).map((o) => ({ key: o.key, uid: o.uid, resourceVersion: o.resourceVersion, body: o.body })),
        skipped: page.filter((o) => o.seq > at).map((o) => o.key),
        last: page.at(-1)?.key ?? after,
        done: rows.length < max && page.length === rows.length,
      };
    });
  }

  /** Registers a subscription; answers the log position it starts from and the informer's resync default. */
  async addSubscriber(id: string): Promise<Result<{ tail: number; resyncPeriodSeconds: number }>> {
    return this.#withInformer((spec, informer) => {
      this.#subscribers.add(id, Date.now());
      return { tail: informer.log.bounds().tail, resyncPeriodSeconds: spec.resyncPeriodSeconds };
    });
  }

  async removeSubscriber(id: string): Promise<boolean> {
    return this.#configured && this.#subscribers.remove(id);
  }

  async subscriberIds(): Promise<Result<string[]>> {
    return this.#withInformer(() => this.#subscribers.ids());
  }

  /**
   * A page of subscriptions in creation order after `after`, with the log's tail, so a list of
   * subscriptions reads the tail once and pages by count (src/http/subscriptions.ts, #7.18).
   */
  async subscriberPage(
    after: SubscriberCursor | null,
    limit: number,
  ): Promise<Result<{ items: SubscriberCursor[]; more: boolean; tail: number }>> {
    return this.#withInformer((_, informer) => ({ ...this.#subscribers.page(after, limit), tail: informer.log.bounds().tail }));
  }

  /** Stops the loop and deletes every trace of this informer; answers the subscriptions it had. */
  async destroy(): Promise<string[]> {
    await this.#slice.stop();
    const subscribers = this.#configured ? this.#subscribers.ids() : [];
    // Gone from here on: watchers, relays' polls and calls woken meanwhile find no informer, not
    // tables being deleted under them.
    this.#current = undefined;
    this.#configured = false;
    this.#closeWatches();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#migrate(false);
    return subscribers;
  }

  /**
   * Self-healing (invariant 7): re-arms the alarm of a configured informer whose alarm is missing,
   * and nudges its subscriptions, which re-arms theirs.
   */
  async ensureRunning(): Promise<boolean> {
    const stored = this.#stored();
    if (!stored) return false;
    // Subscriptions heal the same way: a nudge re-arms a subscription whose alarm is missing.
    this.#waiting = undefined;
    this.#nudger.nudge(this.#informer(stored.spec).log.bounds().tail);
    if (this.#slice.running) return false;
    if ((await this.ctx.storage.getAlarm()) !== null) return false;
    const wakeAt = this.#informer(stored.spec).progress().wakeAt;
    await this.ctx.storage.setAlarm(Math.max(wakeAt, Date.now()));
    return true;
  }

  override async alarm(): Promise<void> {
    await this.#slice.run(
      "informer",
      // Marked only once configured: an unconfigured object stores nothing.
      (signal) => (this.#configured ? this.#kills.during(Date.now(), () => this.#tick(signal), (counts) => this.#killed(counts)) : this.#tick(signal)),
      (wakeAt) => this.#rearm(wakeAt),
      () => {
        const stored = this.#stored();
        return stored && informerIdentity(stored.spec);
      },
    );
  }

  /** The slices killed so far (review B9): marked durably around each slice. */
  get #kills(): SliceKills {
    return new SliceKills(this.ctx.storage.kv);
  }

  #killed(counts: SliceKillCounts): void {
    const stored = this.#stored();
    logger.warn("alarm slice killed", { ...(stored && informerIdentity(stored.spec)), kills: counts.kills, listsInPages: counts.shrunk });
  }

  /** One slice of the loop; answers when the next is due (undefined: deleted, or ask durable state). */
  async #tick(signal: AbortSignal): Promise<number | undefined> {
    const stored = this.#stored();
    if (!stored) return undefined; // deleted: #rearm finds no spec and the loop ends here on purpose
    const informer = this.#informer(stored.spec);
    const budget = (this.#budget = new SubrequestBudget(subrequestLimitOf(this.env)));
    if (this.#owedNudge !== undefined) this.#nudger.nudge(this.#owedNudge);
    this.#owedNudge = undefined;
    let client: KubeClient;
    try {
      const connection = stored.connection && (await openConnection(this.#sealer(), stored.spec.cluster, stored.connection));
      client = this.#client(stored.spec, connection, budget);
    } catch (error) {
      // A configuration problem: say so in the status and retry later, never in a tight loop.
      const retryAt = Date.now() + FALLBACK_REARM_MS;
      informer.recordFailure(error instanceof Error ? error.message : String(error), retryAt);
      return retryAt;
    }
    try {
      // A spent budget stops the slice at its next step, as a reconfiguration does, keeping the stored position.
      const next = await informer.tick(client, Date.now() + SLICE_MS, AbortSignal.any([signal, budget.signal]));
      return budget.ended || this.#owedNudge !== undefined ? Date.now() : next;
    } catch (error) {
      if (budget.ended && !signal.aborted) return Date.now();
      throw error;
    } finally {
      this.#budget = undefined;
    }
  }

  async #rearm(wakeAt: number | undefined): Promise<void> {
    let next = wakeAt;
    try {
      const stored = this.#stored();
      if (!stored) return;
      next ??= this.#informer(stored.spec).progress().wakeAt;
      if (this.#wakeForWatchers()) next = Date.now();
    } catch {
      next = Date.now() + FALLBACK_REARM_MS;
    }
    // setAlarm(now) from inside alarm() can be dropped (workerd #6866): always at least now + 1 ms.
    await this.ctx.storage.setAlarm(Math.max(next, Date.now() + 1));
  }

  /**
   * Brings the schema up to date; creates it only when `create` (configure), so an unconfigured
   * object keeps no storage. Storage that has tables (configured, or from before lazy creation) is
   * migrated as it wakes.
   */
  #migrate(create: boolean): void {
    this.#current = undefined;
    this.#configured = create || hasSchema(this.#db);
    if (!this.#configured) return;
    migrateInformer(this.#db);
    this.#specs = new SpecStore(this.#db);
    this.#subscribers = new SubscriberList(this.#db);
    migrateResourceDescriptions(this.#db);
  }

  /**
   * A cache of Secrets made by an older transform (one that kept their data, before issue 17, or
   * dropped it without counting its keys, before issue 18 F19) is made again: the relist of a
   * transform change, which rewrites every body. Once per object and upgrade; an informer whose
   * transform drops no secret data only records the version.
   */
  async #retransformOutdated(): Promise<void> {
    const stored = this.#stored();
    if (!stored || stored.transformVersion >= TRANSFORM_VERSION) return;
    if (informerSettings(stored.spec).transform.dropSecretData) {
      this.#informer(stored.spec).restart({ transformChanged: true });
      await this.ctx.storage.setAlarm(Date.now());
      logger.info("relist", { ...informerIdentity(stored.spec), cause: "retransform", reason: `the cache's Secrets were made by transform version ${stored.transformVersion}, not ${TRANSFORM_VERSION}` });
    }
    this.#specs.markTransformCurrent();
  }

  #informer(spec: InformerSpec): Informer {
    const settings = informerSettings(spec);
    return new Informer(
      this.#db,
      // An open `/k8s` watch keeps the informer awake (cache/watch-windows.ts); the database's size bounds retention (cache/storage-ceiling.ts).
      // Killed slices in a row list in pages from then on (slice-kills.ts, reflector.ts listInPages).
      {
        ...settings,
        reflector: { ...settings.reflector, keepAwake: () => this.#watched(), listInPages: this.#kills.counts().shrunk },
        storage: { bytes: () => this.ctx.storage.sql.databaseSize },
      },
      systemClock,
      systemRandom,
      (tail) => {
        this.#nudger.nudge(tail);
        this.#watches.notify();
      },
      informerIdentity(spec),
    );
  }

  async #nudgeSubscribers(tail: number): Promise<void> {
    const waiting = this.#waiting;
    this.#waiting = new Set();
    const ids = this.#subscribers.ids().filter((id) => waiting === undefined || waiting.has(id));
    // Outside a slice (the cron's ensureRunning) the round spends its own invocation's budget.
    const budget = this.#budget ?? new SubrequestBudget(subrequestLimitOf(this.env));
    const owe = (id: string) => {
      this.#waiting?.add(id);
      this.#owedNudge = Math.max(this.#owedNudge ?? 0, tail);
    };
    const { now, later } = withinBudget(ids, budget);
    later.forEach(owe);
    await Promise.all(
      now.map((id) =>
        subscriptionStub(this.env, id, ownPlacement(this.ctx.id))
          .nudge(tail)
          .catch((error: unknown) => {
            // The platform's limit, not the subscription's failure: owed to the next slice, not logged.
            if (isSubrequestLimit(error)) {
              budget.end();
              owe(id);
              return;
            }
            logger.warn("nudging a subscription failed", { ...(this.#current && informerIdentity(this.#current.spec)), subscription: id, error: errorText(error) });
          }),
      ),
    );
  }

  /** Opens the cluster token the factory stored sealed (clusters/sealed-connection.ts). */
  #sealer() {
    return sealerFor(this.env);
  }

  #client(spec: InformerSpec, connection: ClusterConnection | null, budget: SubrequestBudget): KubeClient {
    const { apiUrl, token, headers } = resolveConnection(spec.cluster, connection ?? defaultConnection(this.env), this.env);
    return new KubeClient({
      apiUrl,
      fetch: budget.fetch((input, init) => fetch(input, init)),
      ...(token === undefined ? {} : { token }),
      headers,
      resource: resolveResource(spec.resource, spec.apiVersion),
      ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
      ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
      ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
    });
  }

  #withInformer<T>(fn: (spec: InformerSpec, informer: Informer) => T): Result<T> {
    // Subscriptions read the log once per delivery each: keep the spec and its Informer in memory
    // (only this object changes them, through #putSpec and #migrate).
    if (!this.#current) {
      const stored = this.#stored();
      // Named on every route (#10): the isolate's registry may still hold a name deleted since.
      if (!stored) return fail("NotFound", this.ctx.id.name === undefined ? "informer not found" : `informer '${this.ctx.id.name}' not found`);
      this.#current = { spec: stored.spec, informer: this.#informer(stored.spec) };
    }
    const { spec, informer } = this.#current;
    return attempt(() => fn(spec, informer));
  }

  /** The stored spec; none while unconfigured (no tables to read). */
  #stored() {
    return this.#configured ? this.#specs.get() : undefined;
  }

  #putSpec(spec: InformerSpec, connection: ClusterConnection | null): void {
    this.#specs.put(spec, connection, Date.now());
    this.#current = undefined;
  }

  #answer<T>(informer: Informer, value: T): QueryAnswer<T> {
    const { resourceVersion, synced } = informer.queryView();
    return { value, resourceVersion, ...this.#readiness(informer, synced) };
  }

  /** Synced, or why not: the reflector's state is read only while the cache is not synced. */
  #readiness(informer: Informer, synced = informer.queryView().synced): CacheReadiness {
    return readinessOf(synced, synced ? null : informer.lastFailure());
  }

  #status(spec: InformerSpec, informer: Informer): InformerStatus {
    const progress = informer.progress();
    return {
      name: spec.name,
      cluster: spec.cluster,
      resource: spec.resource,
      synced: progress.synced,
      lastSyncResourceVersion: progress.lastSyncResourceVersion,
      cacheResourceVersion: progress.cacheResourceVersion,
      objects: progress.objects,
      queueDepth: progress.queueDepth,
      skippedObjects: progress.skippedObjects,
      lastSkipped: progress.lastSkipped,
      watch: progress.watch.state === "sleeping" ? { ...progress.watch, wakesAt: new Date(progress.wakeAt).toISOString() } : progress.watch,
      relists: progress.relists,
      lastError: progress.lastError,
      eventLog: progress.eventLog,
      storage: storageStatus(informer.storage()),
      subscriptions: this.#subscribers.count(),
      sliceKills: sliceKillStatus(this.#kills.counts()),
    };
  }
}

function sliceKillStatus(counts: SliceKillCounts): InformerStatus["sliceKills"] {
  return { count: counts.kills, lastAt: counts.lastKillAt === null ? null : new Date(counts.lastKillAt).toISOString(), listsInPages: counts.shrunk };
}

/** A list request's query for versioned-list.ts: selectors parsed, the limit capped. */
function versionedQuery(query: Omit<ObjectQuery, "continue"> & { limit: number }): VersionedQuery {
  return {
    ...(query.namespace === undefined ? {} : { namespace: query.namespace }),
    ...parseSelectors(query),
    limit: Math.min(query.limit, MAX_LIST_LIMIT),
  };
}

/** Equal but for the declared subscriptions, which the informer's loop does not use. */
function sameListing(a: InformerSpec, b: InformerSpec): boolean {
  return sameSpec({ ...a, subscriptions: [] }, { ...b, subscriptions: [] });
}

const clampLimit = (limit: number) => Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_FEED_ITEMS);

/** The longest prefix of `items` within MAX_FEED_BYTES (at least one item), so an RPC answer stays small. */
function withinBytes<T>(items: T[], size: (item: T) => number): T[] {
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += size(items[i]!);
    if (total > MAX_FEED_BYTES && i > 0) return items.slice(0, i);
  }
  return items;
}
