/**
 * InformerObject: one Durable Object per informer, a thin shell over cache/informer.ts. It wires
 * storage, the clock and the Kubernetes client, runs one slice per alarm, and routes its RPCs to
 * the modules that answer them: the cache's reads (k8s/cache-reads.ts), its `/k8s` watchers and
 * relays (k8s/informer-watchers.ts), its resource's description (k8s/resource-describer.ts), its
 * subscriptions' feed and nudges (delivery/feed-host.ts), its status and metrics
 * (informer-status.ts), and the slice itself (informer-loop.ts). Whether it is configured, its spec
 * row and its Informer are config/configured-informer.ts; what a new spec restarts,
 * config/spec-change.ts.
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
import type { Informer } from "../cache/informer.ts";
import { LogReaders } from "../cache/log-readers.ts";
import type { Position, VersionedPage } from "../cache/versioned-list.ts";
import { systemClock, systemRandom } from "../clock.ts";
import type { ClusterConnection } from "../clusters/cluster.ts";
import { ownPlacement } from "../clusters/placement.ts";
import { sameConnection } from "../clusters/sealed-connection.ts";
import { subscriptionStub } from "../clusters/stubs.ts";
import { ConfiguredInformer } from "../config/configured-informer.ts";
import type { InformerSpec } from "../config/informer-spec.ts";
import { specChange } from "../config/spec-change.ts";
import { FeedHost } from "../delivery/feed-host.ts";
import type { SnapshotPage } from "../delivery/feed.ts";
import type { SubscriberCursor } from "../delivery/subscriber-list.ts";
import type { Env } from "../env.ts";
import { ok, type Result } from "../errors.ts";
import { type HeavyReadPart, ReadAdmission } from "../k8s/admission.ts";
import type { CacheReadiness } from "../k8s/cache-readiness.ts";
import { CacheReads, type ListPage, type ObjectQuery, type PageQuery, type QueryAnswer } from "../k8s/cache-reads.ts";
import { CONSISTENT_READ_TIMEOUT_MS, type Consistency, UpstreamRevision } from "../k8s/consistent-reads.ts";
import { InformerWatchers } from "../k8s/informer-watchers.ts";
import { watcherLimitsOf } from "../k8s/watcher-caps.ts";
import type { Freshness } from "../k8s/list-consistency.ts";
import { ResourceDescriber } from "../k8s/resource-describer.ts";
import type { WatchOpening, WatchParams } from "../k8s/watch-params.ts";
import type { PlaceReport } from "../k8s/relay-places.ts";
import type { RelayAnswer, RelayCall, RelayOpenAsk, RelayOpening, RelaySnapshot } from "../k8s/watch-relay.ts";
import type { ResourceDescription } from "../kube/resource-description.ts";
import { logger, setLogLevel } from "../log.ts";
import { informerIdentity } from "../log-identity.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { SubrequestBudget, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { Db } from "../sql.ts";
import type { RowTally } from "../sql-rows.ts";
import { clusterConnection, InformerLoop, kubeClient, retransformOutdated, wireInformer } from "./informer-loop.ts";
import { informerObjectMetrics, type InformerObjectMetrics, informerStatus, type InformerStatus } from "./informer-status.ts";

export type { InformerObjectMetrics, InformerStatus, ObjectQuery, QueryAnswer };
export { SLICE_MS } from "./informer-loop.ts";

export class InformerObject extends DurableObject<Env> {
  readonly #db = new Db(this.ctx.storage);
  /** Whether it is configured, its spec row, subscriptions and Informer (config/configured-informer.ts). */
  readonly #state = new ConfiguredInformer(this.#db, this.ctx.id.name, (spec) => this.#informer(spec));
  /** Heavy reads of this object's cache (k8s/admission.ts): initial listings of watches, unpaged and selector lists. */
  readonly #heavyReads = new ReadAdmission();
  readonly #reads = new CacheReads((fn) => this.#state.withInformer(fn), this.#heavyReads);
  readonly #watchers = new InformerWatchers((fn) => this.#state.withInformer(fn), this.#heavyReads, () => this.ctx.storage.setAlarm(Date.now() + 1), watcherLimitsOf(this.env));
  /** Who still reads the log (subscriptions, `/k8s` watchers): a shrink past the storage ceiling holds for them. */
  readonly #logReaders = new LogReaders(() => this.#state.subscribers.oldestReader());
  /** The log's tail as last told to the subscriptions (#informer's `grew`). */
  #nudgedTail: number | undefined;
  readonly #feed: FeedHost = new FeedHost({
    subscribers: () => this.#state.subscribers,
    send: (id, tail) => subscriptionStub(this.env, id, ownPlacement(this.ctx.id)).nudge(tail),
    budget: () => this.#loop.budget(),
    who: () => this.#state.current && informerIdentity(this.#state.current),
    clock: systemClock,
  });
  /** One slice per alarm, the next derived from durable state, the cron's healing (informer-loop.ts). */
  readonly #loop = new InformerLoop({
    state: this.#state,
    informerOf: (spec) => this.#informer(spec),
    feed: this.#feed,
    watchers: this.#watchers,
    storage: this.ctx.storage,
    env: this.env,
    clock: systemClock,
  });
  readonly #describer = new ResourceDescriber({
    db: this.#db,
    clock: systemClock,
    at: (fn) => this.#state.withInformer(fn),
    reads: this.#reads,
    connection: (cluster) => clusterConnection(cluster, this.#state.stored()?.connection ?? null, this.env),
    env: this.env,
  });

  /** The upstream's current resourceVersion, one `limit=1` list shared by a burst of consistent reads. */
  readonly #upstreamRevision = new UpstreamRevision(async () => {
    const stored = this.#state.stored();
    if (!stored) return undefined;
    const connection = await clusterConnection(stored.spec.cluster, stored.connection, this.env);
    // The read's own invocation's request, not the slice's: it must not shorten a running slice.
    const client = kubeClient(stored.spec, connection, this.env, new SubrequestBudget(subrequestLimitOf(this.env)));
    return (await client.listPage({ limit: 1 }, () => {}, AbortSignal.timeout(CONSISTENT_READ_TIMEOUT_MS))).resourceVersion;
  });

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    setLogLevel(env.LOG_LEVEL);
    // Tables appear with the first configure(): an object reached through an unknown name (a query,
    // a probe) answers NotFound and stores nothing (#7.17).
    ctx.blockConcurrencyWhile(async () => {
      this.#state.migrate(false);
      await retransformOutdated(this.#state.stored(), this.#state.specs, (spec) => this.#informer(spec), () => this.ctx.storage.setAlarm(Date.now()));
    });
  }

  /**
   * Creates or updates this informer. `connection` is how to reach its cluster's API server; none
   * for the default cluster, whose connection the environment gives at each watch. What a change
   * restarts, and what it leaves alone, is config/spec-change.ts's rule.
   */
  async configure(spec: InformerSpec, connection?: ClusterConnection): Promise<Result<{ created: boolean; status: InformerStatus }>> {
    if (!this.#state.configured) this.#state.migrate(true);
    const previous = this.#state.specs.get();
    const stored = connection ?? null;
    const change = await specChange(previous, spec, stored, (a, b) => sameConnection(sealerFor(this.env), spec.cluster, a, b));
    if (change.kind === "unchanged") {
      if (change.store) this.#state.put(spec, stored, Date.now());
      return ok({ created: false, status: this.#status(spec, this.#informer(spec)) });
    }
    await this.#loop.stop();
    this.#state.put(spec, stored, Date.now());
    this.#watchers.closeAll();
    const informer = this.#informer(spec);
    if (change.restart) informer.restart(change.restart);
    else informer.wakeNow();
    if (change.rebuildIndexes) informer.rebuildIndexes();
    await this.ctx.storage.setAlarm(Date.now());
    return ok({ created: change.created, status: this.#status(spec, informer) });
  }

  async status(): Promise<Result<InformerStatus>> {
    return this.#state.withInformer((spec, informer) => this.#status(spec, informer));
  }

  /** What /metrics and the status page read (src/metrics). */
  async metrics(): Promise<Result<InformerObjectMetrics>> {
    return this.#state.withInformer((spec, informer) =>
      informerObjectMetrics(spec, informer, {
        subscriptions: this.#state.subscribers.ids(),
        storageBytes: this.ctx.storage.sql.databaseSize,
        sqlRows: this.#db.rows.totals(),
        kills: this.#loop.kills.counts().kills,
      }),
    );
  }

  /** The rows this object's statements read and wrote (what /metrics reports; the cost tests read it in place). */
  get sqlRows(): RowTally {
    return this.#db.rows;
  }

  /** When each of the log's events `seqs` was appended (a subscription's lag in seconds); absent ones are left out. */
  async eventTimes(seqs: number[]): Promise<Result<Record<number, number>>> {
    return this.#state.withInformer((_, informer) => Object.fromEntries(informer.log.timesOf(seqs)));
  }

  // The cache's reads (k8s/cache-reads.ts says what each answers).
  async getObject(key: string): Promise<Result<QueryAnswer<string>>> {
    return this.#reads.getObject(key);
  }

  async findObject(key: string): Promise<Result<QueryAnswer<string | null>>> {
    return this.#reads.findObject(key);
  }

  async listAt(query: PageQuery, from?: Position, of?: string, heavy?: HeavyReadPart): Promise<Result<QueryAnswer<ListPage>>> {
    return this.#reads.listAt(query, from, of, heavy);
  }

  /** `owner`: the credential whose heavy reads (a search with selectors) it counts among (admission.ts). */
  async searchAt(query: PageQuery & { maxBytes?: number }, from?: Position, owner?: string): Promise<Result<QueryAnswer<VersionedPage>>> {
    return this.#reads.searchAt(query, from, owner);
  }

  async listObjects(query: ObjectQuery, owner?: string): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
    return this.#reads.listObjects(query, owner);
  }

  async indexValues(index: string, query: { limit?: number; continue?: string; namespaces?: string[] } = {}): Promise<Result<QueryAnswer<{ values: string[]; continue?: string }>>> {
    return this.#reads.indexValues(index, query);
  }

  async byIndex(index: string, value: string, query: { limit?: number; continue?: string; namespaces?: string[] }): Promise<Result<QueryAnswer<{ items: string[]; continue?: string }>>> {
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

  /** A read with no resourceVersion: the cache brought up to the upstream's current one (k8s/consistent-reads.ts). */
  async awaitConsistency(): Promise<Result<Consistency>> {
    return this.#watchers.awaitConsistency(this.#upstreamRevision);
  }

  async watch(request: WatchParams): Promise<Result<WatchOpening>> {
    return this.#watchers.watch(request);
  }

  async relayOpen(ask: RelayOpenAsk): Promise<Result<RelayOpening>> {
    return this.#watchers.relayOpen(ask);
  }

  async relayPoll(known: RelaySnapshot | undefined, waitMs: number, report?: PlaceReport): Promise<RelaySnapshot | undefined> {
    return this.#watchers.relayPoll(known, waitMs, report);
  }

  async relayCall(incarnation: string, call: RelayCall): Promise<RelayAnswer> {
    return this.#watchers.relayCall(incarnation, call);
  }

  // The subscriptions' feed (delivery/feed-host.ts says what each answers).
  async readLog(after: number, limit: number, subscriber?: string): Promise<Result<ReadResult>> {
    return this.#state.withInformer((_, informer) => this.#feed.readLog(informer.log, after, limit, subscriber));
  }

  async snapshot(at: number, after: string | null, limit: number, namespace?: string): Promise<Result<SnapshotPage>> {
    return this.#state.withInformer((_, informer) => this.#feed.snapshot(informer.indexer, at, after, limit, namespace));
  }

  /** Registers a subscription; answers the log position it starts from and the informer's resync default. */
  async addSubscriber(id: string): Promise<Result<{ tail: number; resyncPeriodSeconds: number }>> {
    return this.#state.withInformer((spec, informer) => ({ tail: this.#feed.addSubscriber(informer.log, id), resyncPeriodSeconds: spec.resyncPeriodSeconds }));
  }

  async removeSubscriber(id: string): Promise<boolean> {
    return this.#state.configured && this.#state.subscribers.remove(id);
  }

  async subscriberIds(): Promise<Result<string[]>> {
    return this.#state.withInformer(() => this.#state.subscribers.ids());
  }

  async subscriberPage(after: SubscriberCursor | null, limit: number): Promise<Result<{ items: SubscriberCursor[]; more: boolean; tail: number }>> {
    return this.#state.withInformer((_, informer) => this.#feed.subscriberPage(informer.log, after, limit));
  }

  /** Self-healing (invariant 7): re-arms a missing alarm and nudges the subscriptions (informer-loop.ts). */
  async ensureRunning(): Promise<boolean> {
    return this.#loop.ensureRunning();
  }

  /**
   * The cron's minute (InformerFactory.reconcile): `ensureRunning`, and whether this informer holds
   * another connection than `connection`, the registry's for its cluster (a change that missed it).
   * It does not reconfigure itself: the factory does, under its change queue, so that a change or
   * deletion made since the factory asked is not undone (review B6(a)). Compared only when there
   * is a connection: the default cluster's minute reads no more rows.
   */
  async reconcile(connection?: ClusterConnection): Promise<{ rearmed: boolean; connectionDiffers: boolean }> {
    const stored = connection === undefined ? undefined : this.#state.stored();
    const connectionDiffers = stored !== undefined && JSON.stringify(stored.connection) !== JSON.stringify(connection);
    return { rearmed: await this.#loop.ensureRunning(), connectionDiffers };
  }

  override async alarm(): Promise<void> {
    return this.#loop.alarm();
  }

  /** Stops the loop and deletes every trace of this informer; answers the subscriptions it had. */
  async destroy(): Promise<string[]> {
    await this.#loop.stop();
    const subscribers = this.#state.configured ? this.#state.subscribers.ids() : [];
    // Gone from here on: watchers, relays' polls and calls woken meanwhile find no informer, not
    // tables being deleted under them.
    this.#state.forget();
    this.#watchers.closeAll();
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#state.migrate(false);
    return subscribers;
  }

  #informer(spec: InformerSpec): Informer {
    return wireInformer(this.#db, spec, {
      clock: systemClock,
      random: systemRandom,
      // An open `/k8s` watch keeps the informer awake; killed slices in a row list in pages from then on.
      watched: () => this.#watchers.watched(),
      listInPages: this.#loop.kills.counts().shrunk,
      databaseBytes: () => this.ctx.storage.sql.databaseSize,
      readers: this.#logReaders,
      ...(this.env.STORAGE_CEILING_MB === undefined ? {} : { storageCeilingMb: this.env.STORAGE_CEILING_MB }),
      grew: (tail) => {
        // Also told when only a mark or the cache's RV moved (an upstream bookmark): `/k8s` watchers
        // and relays care, subscriptions read events only and are nudged for a new tail alone.
        if (tail !== this.#nudgedTail) this.#feed.nudge(tail);
        this.#nudgedTail = tail;
        this.#watchers.notify();
      },
    });
  }

  #status(spec: InformerSpec, informer: Informer): InformerStatus {
    return informerStatus(spec, informer, { subscriptions: () => this.#state.subscribers.count(), kills: () => this.#loop.kills.counts() });
  }
}
