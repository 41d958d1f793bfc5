/**
 * InformerObject: one Durable Object per informer, a thin shell over cache/informer.ts. It wires
 * storage, the clock and the Kubernetes client, runs one slice per alarm, and routes its RPCs to
 * the modules that answer them: the cache's reads (k8s/cache-reads.ts), its `/k8s` watchers and
 * relays (k8s/informer-watchers.ts), its resource's description (k8s/resource-describer.ts), its
 * subscriptions' feed and nudges (delivery/feed-host.ts), its status and metrics
 * (informer-status.ts), and the slice itself (informer-loop.ts).
 *
 * Invariant 7: `alarm()` re-arms in `finally` from durable state whatever happened, so an error
 * or a crash cannot stop the loop (and the factory's cron re-arms a missing alarm).
 *
 * Each slice has a subrequest budget (net/subrequest-budget.ts): the API server's lists and
 * watches and the nudges to subscriptions spend it; at its margin nudging stops, the slice ends and
 * re-arms at once, and the next invocation nudges the rest (docs/architecture.md "Platform limits").
 */
import { DurableObject } from "cloudflare:workers";
import type { ReadResult } from "../cache/event-log.ts";
import { type Informer, migrateInformer } from "../cache/informer.ts";
import { migrateResourceDescriptions } from "../cache/resource-description-store.ts";
import { TRANSFORM_VERSION } from "../cache/transform.ts";
import type { Position, VersionedPage } from "../cache/versioned-list.ts";
import { systemClock, systemRandom } from "../clock.ts";
import { type ClusterConnection } from "../clusters/cluster.ts";
import { ownPlacement } from "../clusters/placement.ts";
import { sameConnection } from "../clusters/sealed-connection.ts";
import { subscriptionStub } from "../clusters/stubs.ts";
import { indexersChanged, informerSettings, type InformerSpec, listingChanged, sameSpec, transformChanged } from "../config/informer-spec.ts";
import { SpecStore } from "../config/spec-store.ts";
import { FeedHost } from "../delivery/feed-host.ts";
import type { SnapshotPage } from "../delivery/feed.ts";
import { type SubscriberCursor, SubscriberList } from "../delivery/subscriber-list.ts";
import type { Env } from "../env.ts";
import { attempt, fail, ok, type Result } from "../errors.ts";
import type { HeavyRead } from "../k8s/admission.ts";
import { ReadAdmission } from "../k8s/admission.ts";
import type { CacheReadiness } from "../k8s/cache-readiness.ts";
import { CacheReads, type ObjectQuery, type PageQuery, type QueryAnswer } from "../k8s/cache-reads.ts";
import { InformerWatchers } from "../k8s/informer-watchers.ts";
import type { Freshness } from "../k8s/list-consistency.ts";
import { ResourceDescriber } from "../k8s/resource-describer.ts";
import type { WatchOpening, WatchParams } from "../k8s/watch-params.ts";
import type { RelayAnswer, RelayCall, RelaySnapshot } from "../k8s/watch-relay.ts";
import type { ResourceDescription } from "../kube/resource-description.ts";
import { logger, setLogLevel } from "../log.ts";
import { informerIdentity } from "../log-identity.ts";
import { SubrequestBudget, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { Db, hasSchema } from "../sql.ts";
import type { RowTally } from "../sql-rows.ts";
import { AlarmSlice } from "./alarm-slice.ts";
import { clusterConnection, connectOrRetry, FALLBACK_REARM_MS, kubeClient, runSlice, wireInformer } from "./informer-loop.ts";
import { informerObjectMetrics, type InformerObjectMetrics, informerStatus, type InformerStatus } from "./informer-status.ts";
import { type SliceKillCounts, SliceKills } from "./slice-kills.ts";

export type { InformerObjectMetrics, InformerStatus, ObjectQuery, QueryAnswer };
export { SLICE_MS } from "./informer-loop.ts";

export class InformerObject extends DurableObject<Env> {
  readonly #db: Db;
  #specs!: SpecStore;
  #subscribers!: SubscriberList;
  /** Whether this object has its tables: set by the first configure(), cleared by destroy(). */
  #configured = false;
  /** The stored spec and an Informer over it, for queries and feed reads. */
  #current: { spec: InformerSpec; informer: Informer } | undefined;
  /** Heavy reads of this object's cache (k8s/admission.ts): initial listings of watches, unpaged and selector lists. */
  readonly #heavyReads = new ReadAdmission();
  readonly #reads = new CacheReads((fn) => this.#withInformer(fn), this.#heavyReads);
  readonly #watchers = new InformerWatchers((fn) => this.#withInformer(fn), this.#heavyReads, () => this.ctx.storage.setAlarm(Date.now() + 1));
  readonly #feed = new FeedHost({
    subscribers: () => this.#subscribers,
    send: (id, tail) => subscriptionStub(this.env, id, ownPlacement(this.ctx.id)).nudge(tail),
    // Outside a slice (the cron's ensureRunning) a round spends its own invocation's budget.
    budget: () => this.#budget ?? new SubrequestBudget(subrequestLimitOf(this.env)),
    who: () => this.#current && informerIdentity(this.#current.spec),
    clock: systemClock,
  });
  readonly #describer: ResourceDescriber;
  /** The running slice, so configuration changes and deletion can stop it and wait. */
  readonly #slice = new AlarmSlice();
  /** The running slice's subrequest budget; none between slices. */
  #budget: SubrequestBudget | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = new Db(ctx.storage);
    this.#describer = new ResourceDescriber({
      db: this.#db,
      clock: systemClock,
      at: (fn) => this.#withInformer(fn),
      reads: this.#reads,
      connection: (cluster) => clusterConnection(cluster, this.#stored()?.connection ?? null, this.env),
      env,
    });
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
    if (previous && sameListing(previous.spec, spec) && (await sameConnection(sealerFor(this.env), spec.cluster, previous.connection, stored))) {
      // Nothing the loop uses changed: leave a live watch alone (an idempotent PUT must not restart
      // it); declared subscriptions are the factory's business. A token sealed anew (a key rotation)
      // is stored in its new form.
      if (!sameSpec(previous.spec, spec) || JSON.stringify(previous.connection) !== JSON.stringify(stored)) this.#putSpec(spec, stored);
      return ok({ created: false, status: this.#status(spec, this.#informer(spec)) });
    }
    await this.#slice.stop();
    this.#putSpec(spec, stored);
    // What the watchers were promised no longer holds: their clients re-watch (and relist on a 410).
    this.#watchers.closeAll();
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
    return this.#withInformer((spec, informer) =>
      informerObjectMetrics(spec, informer, { subscriptions: this.#subscribers.ids(), storageBytes: this.ctx.storage.sql.databaseSize, sqlRows: this.#db.rows.totals(), kills: this.#kills.counts().kills }),
    );
  }

  /** The rows this object's statements read and wrote (what /metrics reports; the cost tests read it in place). */
  get sqlRows(): RowTally {
    return this.#db.rows;
  }

  /** When each of the log's events `seqs` was appended (a subscription's lag in seconds); absent ones are left out. */
  async eventTimes(seqs: number[]): Promise<Result<Record<number, number>>> {
    return this.#withInformer((_, informer) => Object.fromEntries(informer.log.timesOf(seqs)));
  }

  // The cache's reads (k8s/cache-reads.ts says what each answers).
  async getObject(key: string): Promise<Result<QueryAnswer<string>>> {
    return this.#reads.getObject(key);
  }

  async findObject(key: string): Promise<Result<QueryAnswer<string | null>>> {
    return this.#reads.findObject(key);
  }

  async listAt(query: PageQuery, from?: Position, of?: string, heavy?: HeavyRead): Promise<Result<QueryAnswer<VersionedPage>>> {
    return this.#reads.listAt(query, from, of, heavy);
  }

  async searchAt(query: PageQuery & { maxBytes?: number }, from?: Position): Promise<Result<QueryAnswer<VersionedPage>>> {
    return this.#reads.searchAt(query, from);
  }

  async listObjects(query: ObjectQuery): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    return this.#reads.listObjects(query);
  }

  async indexValues(index: string, query: { limit?: number; continue?: string } = {}): Promise<Result<QueryAnswer<{ values: string[]; continue?: string }>>> {
    return this.#reads.indexValues(index, query);
  }

  async byIndex(index: string, value: string, query: { limit?: number; continue?: string }): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    return this.#reads.byIndex(index, value, query);
  }

  async sampleObject(): Promise<Result<{ kind: string; namespaced: boolean } | null>> {
    return this.#reads.sampleObject();
  }

  /** What `/k8s` says about this informer's custom resource (k8s/resource-describer.ts). */
  async resourceDescription(): Promise<Result<ResourceDescription | null>> {
    return this.#describer.describe();
  }

  // `/k8s` watchers and the relays that serve them (k8s/informer-watchers.ts says what each answers).
  async awaitResourceVersion(resourceVersion: string, waitMs: number): Promise<Result<Freshness>> {
    return this.#watchers.awaitResourceVersion(resourceVersion, waitMs);
  }

  async watch(request: WatchParams): Promise<Result<WatchOpening>> {
    return this.#watchers.watch(request);
  }

  async relayOpen(): Promise<Result<{ readiness: CacheReadiness; snapshot?: RelaySnapshot }>> {
    return this.#watchers.relayOpen();
  }

  async relayPoll(known: RelaySnapshot | undefined, waitMs: number): Promise<RelaySnapshot | undefined> {
    return this.#watchers.relayPoll(known, waitMs);
  }

  async relayCall(incarnation: string, call: RelayCall): Promise<RelayAnswer> {
    return this.#watchers.relayCall(incarnation, call);
  }

  // The subscriptions' feed (delivery/feed-host.ts says what each answers).
  async readLog(after: number, limit: number, subscriber?: string): Promise<Result<ReadResult>> {
    return this.#withInformer((_, informer) => this.#feed.readLog(informer.log, after, limit, subscriber));
  }

  async snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<Result<SnapshotPage>> {
    return this.#withInformer((_, informer) => this.#feed.snapshot(informer.indexer, at, after, limit, namespace));
  }

  /** Registers a subscription; answers the log position it starts from and the informer's resync default. */
  async addSubscriber(id: string): Promise<Result<{ tail: number; resyncPeriodSeconds: number }>> {
    return this.#withInformer((spec, informer) => ({ tail: this.#feed.addSubscriber(informer.log, id), resyncPeriodSeconds: spec.resyncPeriodSeconds }));
  }

  async removeSubscriber(id: string): Promise<boolean> {
    return this.#configured && this.#subscribers.remove(id);
  }

  async subscriberIds(): Promise<Result<string[]>> {
    return this.#withInformer(() => this.#subscribers.ids());
  }

  async subscriberPage(after: SubscriberCursor | null, limit: number): Promise<Result<{ items: SubscriberCursor[]; more: boolean; tail: number }>> {
    return this.#withInformer((_, informer) => this.#feed.subscriberPage(informer.log, after, limit));
  }

  /** Stops the loop and deletes every trace of this informer; answers the subscriptions it had. */
  async destroy(): Promise<string[]> {
    await this.#slice.stop();
    const subscribers = this.#configured ? this.#subscribers.ids() : [];
    // Gone from here on: watchers, relays' polls and calls woken meanwhile find no informer, not
    // tables being deleted under them.
    this.#current = undefined;
    this.#configured = false;
    this.#watchers.closeAll();
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
    this.#feed.nudgeAll(this.#informer(stored.spec).log.bounds().tail);
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

  /** One slice of the loop (informer-loop.ts); answers when the next is due (undefined: deleted, or ask durable state). */
  async #tick(signal: AbortSignal): Promise<number | undefined> {
    const stored = this.#stored();
    if (!stored) return undefined; // deleted: #rearm finds no spec and the loop ends here on purpose
    const informer = this.#informer(stored.spec);
    const budget = (this.#budget = new SubrequestBudget(subrequestLimitOf(this.env)));
    this.#feed.sendOwed();
    const connect = async () => kubeClient(stored.spec, await clusterConnection(stored.spec.cluster, stored.connection, this.env), this.env, budget);
    const client = await connectOrRetry(informer, connect, systemClock);
    if ("retryAt" in client) return client.retryAt;
    try {
      return await runSlice(informer, client, budget, () => this.#feed.owes, signal, systemClock);
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
      if (this.#watchers.wakeForWatchers()) next = Date.now();
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
    return wireInformer(this.#db, spec, {
      clock: systemClock,
      random: systemRandom,
      // An open `/k8s` watch keeps the informer awake; killed slices in a row list in pages from then on.
      watched: () => this.#watchers.watched(),
      listInPages: this.#kills.counts().shrunk,
      databaseBytes: () => this.ctx.storage.sql.databaseSize,
      grew: (tail) => {
        this.#feed.nudge(tail);
        this.#watchers.notify();
      },
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

  #status(spec: InformerSpec, informer: Informer): InformerStatus {
    return informerStatus(spec, informer, { subscriptions: () => this.#subscribers.count(), kills: () => this.#kills.counts() });
  }
}

/** Equal but for the declared subscriptions, which the informer's loop does not use. */
function sameListing(a: InformerSpec, b: InformerSpec): boolean {
  return sameSpec({ ...a, subscriptions: [] }, { ...b, subscriptions: [] });
}
