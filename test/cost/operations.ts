/**
 * What each operation costs in SQLite rows today (issue 19), measured the same way for the budget
 * tests (test/cost/budgets.test.ts) and `npm run bench -- --only cost` (bench/cost.mjs): one pods
 * informer with one custom indexer (`byNode`) over 2,000 pods, and one subscription at
 * `maxBatchSize` 1.
 *
 * The per-event paths run the informer and subscription modules on one Durable Object's SQLite, on
 * a fake clock, from a scripted ListerWatcher (`measureModules`): rows per event do not depend on
 * time or the network. What only the Durable Objects do (status, metrics, the cron's minute, `/k8s`
 * lists and watches) runs in real objects synced from the fake API server, and is measured inside
 * them while their cluster is quiet (`measureObjects`), from the tally every object keeps.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Informer } from "../../src/cache/informer.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { Feed } from "../../src/delivery/feed.ts";
import { WINDOW_DELIVERIES, WINDOW_MS } from "../../src/delivery/outbox-window.ts";
import { type StepResult, Subscription } from "../../src/delivery/subscription.ts";
import { HELD_CHANGES_MAX } from "../../src/delivery/held-keys.ts";
import { DELIVERY_LOG_SIZE } from "../../src/delivery/delivery-log.ts";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { type InformerObject, SLICE_MS } from "../../src/objects/informer-object.ts";
import type { SubscriptionObject } from "../../src/objects/subscription-object.ts";
import { chunks, type Db, stmt } from "../../src/sql.ts";
import type { RowTally } from "../../src/sql-rows.ts";
import type { Position } from "../../src/cache/versioned-list.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher, type WatchChunk } from "../helpers/fake-lister-watcher.ts";
import { newCluster, startInformer, status, waitFor, waitSynced } from "../helpers/informer.ts";
import { subscribe } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { Meter, type Rows, sum } from "./meter.ts";

export const PODS = 2_000;
const NAMESPACES = 10;
const NODES = 50;
/** The one custom indexer: a pod's node. An update here never changes it, nor the namespace. */
export const INDEXERS = { byNode: "spec.nodeName" };
const PAGE = 500;
/** Events per measured run; multiples of the delivery window (32) and of the delivery log's trim (20). */
const EVENTS = 320;
/** The pods deliveries are about: each sent before the measured deliveries (delivered keys are updated, not added). */
const DELIVERED_KEYS = 200;
/** The watch timeout an informer draws by default ([300, 600) s) at random 0.5, and its bookmarks:
 * kube-apiserver sends one a minute while nothing else is sent, and one 2 s before the timeout. */
const SESSION_MINUTES = 7.5;
const BOOKMARKS_PER_SESSION = 8;
const IDLE_SESSIONS = 4;
/** Events of the watch session measured through the informer's loop (30 ms apart: kept short). */
const LOOP_EVENTS = 64;
/** Events the log stores (segments hold runs of them). */
const LOG_ROWS = stmt("cost.logEvents", "SELECT coalesce(sum(last_seq - first_seq + 1), 0) AS n FROM event_segments");
const SECRET = `whsec_${btoa("a cost test secret, 32 bytes long")}`;

export type CostObject = "informer" | "subscription";

export interface Cost extends Rows {
  /** A stable id the budgets and the bench key on. */
  id: string;
  /** What one unit is. */
  operation: string;
  /** Whose SQLite pays (a subscription's reads of the informer's log are the informer's rows). */
  object: CostObject;
  /** Units measured. */
  units: number;
}

const cost = (id: string, object: CostObject, operation: string, units: number, rows: Rows): Cost => ({ id, object, operation, units, ...rows });

const podAt = (i: number, rv: number): KubeObject =>
  pod({ name: `p-${String(i).padStart(4, "0")}`, namespace: `ns-${i % NAMESPACES}`, nodeName: `node-${i % NODES}`, rv: String(rv) });

/** A new resourceVersion and nothing else: the pod's namespace and node (its index values) stay. */
const modified = (i: number, rv: number): WatchEvent => ({ type: "MODIFIED", object: podAt(i % PODS, rv) });

const bookmark = (rv: number): WatchEvent => ({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: String(rv) } } });

/** Steps until the subscription waits or idles. */
async function drain(subscription: Subscription): Promise<StepResult> {
  for (let i = 0; i < 100_000; i++) {
    const result = await subscription.step();
    if (result.kind !== "progress") return result;
  }
  throw new Error("the subscription never settled");
}

/** The per-event paths, on one object's SQLite (see the file's comment). */
export function measureModules(): Promise<Cost[]> {
  return withDb(async (db, sameStorage) => {
    const clock = new FakeClock();
    const spec = parseInformerSpec({ resource: "pods", indexers: INDEXERS, retention: { maxEvents: 1_000 } }, "cost");
    // As the informer object builds it: announcing appends reads the last mark after each batch.
    const informer = new Informer(db, informerSettings(spec), clock, () => 0.5, () => {});
    const costs: Cost[] = [];
    let rv = 10_000;

    // The initial list: the reflector's pages through to the committed, applied Replace.
    const listed = Array.from({ length: PODS }, (_, i) => podAt(i, ++rv));
    const pages = chunks(listed, PAGE).map((items, i, all) => ({ items, resourceVersion: String(rv), ...(i < all.length - 1 ? { continue: `page-${i + 1}` } : {}) }));
    const list = new Meter(db.rows);
    await list.during(() => informer.tick(new FakeListerWatcher({ lists: pages }), clock.now() + SLICE_MS));
    expectState(informer.progress().synced && informer.progress().objects === PODS, "the list is not applied");
    costs.push(cost("list.object", "informer", `an object of the initial list (${PODS} pods, pages of ${PAGE})`, PODS, list.per(PODS)));

    // Updates whose index values did not change, as the reflector applies a watch batch: one event
    // a batch while events come more than its 20 ms window apart, more on a busy resource.
    for (const { batch, events, operation } of [
      { batch: 1, events: EVENTS, operation: "an update event whose index values did not change, one event per watch batch (a resource changing up to ~50 times a second)" },
      { batch: 100, events: 5 * EVENTS, operation: "the same, 100 events per watch batch (a busy resource)" },
    ]) {
      const updates = new Meter(db.rows);
      await updates.during(() => {
        for (let i = 0; i < events; i += batch) {
          informer.applyWatch(Array.from({ length: batch }, (_, j) => modified(i + j, ++rv)), String(rv));
        }
      });
      costs.push(cost(`update.batch${batch}`, "informer", operation, events, updates.per(events)));
    }

    // Retention, at a watch session's end: what /metrics has not counted yet is counted first (a
    // scrape counted the rest), then events before the new head that nothing pins are deleted.
    informer.metrics();
    const counter = sameStorage(); // counts the log's rows outside the measured tally
    const logRows = () => counter.first<{ n: number }>(LOG_ROWS)!.n;
    const rowsBefore = logRows();
    const retention = new Meter(db.rows);
    await retention.during(() => informer.compactLog());
    const removed = rowsBefore - logRows();
    expectState(removed > 0, "retention removed nothing");
    costs.push(cost("retention.event", "informer", "an event removed by retention (rows read: the scan past the events it keeps)", removed, retention.per(removed)));

    // An update as the informer's loop applies it in production (after retention caught up above): a watch session of one-event
    // batches (pauses past the 20 ms batching window), each step also checking the queue and
    // retention, which the batches above leave out.
    const loopChunks = Array.from({ length: LOOP_EVENTS }, (_, i) => [modified(i, ++rv)] as WatchChunk).flatMap((chunk, i) => (i === 0 ? [chunk] : [30, chunk]));
    const loop = new Meter(db.rows);
    await loop.during(() => informer.tick(new FakeListerWatcher({ watches: [{ batches: loopChunks }] }), clock.now() + SLICE_MS));
    expectState(informer.lastSyncResourceVersion() === String(rv), "the watch session was not applied");
    const loopOperation = "an update event as the informer's loop applies it: one event a watch batch, each step checking the queue and retention";
    costs.push(cost("update.loop", "informer", loopOperation, LOOP_EVENTS, loop.per(LOOP_EVENTS)));

    costs.push(...(await measureDeliveries(informer, db, sameStorage(), clock, () => ++rv)));
    costs.push(await measureIdleWatch(informer, db, clock, () => ++rv));
    return costs;
  });
}

/**
 * Deliveries at maxBatchSize 1 to an endpoint that answers 204 at once: events arriving one at a
 * time (each delivered before the next arrives, within WINDOW_MS of each other), and a backlog
 * (windows of 32 deliveries); then a caught-up subscription's poll; then events one a second (a
 * window's bookkeeping shared by ~5), and a backlog of keys not delivered lately (the keys the
 * receiver holds go from the subscription row to their segments in bulk).
 */
async function measureDeliveries(informer: Informer, informerDb: Db, db: Db, clock: FakeClock, nextRv: () => number): Promise<Cost[]> {
  const feed: Feed = {
    // What InformerObject.readLog runs (its byte bound runs no statement).
    read: async (after, limit) => informer.log.read(after, limit),
    snapshot: async () => {
      throw new Error("no replay or resync here");
    },
  };
  const subscription = new Subscription(db, clock, () => 0.5, feed, async () => ({ status: 204, durationMs: 1 }));
  const parsed = subscriptionSpecSchema.parse({ url: "https://hooks.example/cost", replayExisting: false, maxBatchSize: 1 });
  subscription.create({ id: "sub_cost", cluster: "default", informer: "cost", secret: SECRET, tail: informer.log.bounds().tail, spec: { ...parsed, resyncPeriodSeconds: 0 } });
  let i = 0;
  const append = () => {
    const rv = nextRv();
    informer.applyWatch([modified(i++ % DELIVERED_KEYS, rv)], String(rv));
  };
  // As a subscription that has run for a while: every key sent before, its delivery log full.
  for (let n = 0; n < DELIVERY_LOG_SIZE + WINDOW_DELIVERIES; n++) append();
  await drain(subscription);
  const costs: Cost[] = [];
  /** Measures the subscription's rows, and apart from them its informer's: the log reads that feed it. */
  const measure = async (id: string, operation: string, units: number, runs: (during: (fn: () => Promise<unknown>) => Promise<unknown>) => Promise<void>) => {
    const own = new Meter(db.rows);
    const feed = new Meter(informerDb.rows);
    await runs((fn) => own.during(() => feed.during(fn)));
    costs.push(cost(id, "subscription", operation, units, own.per(units)), cost(`${id}.feed`, "informer", "  its read of the informer's log", units, feed.per(units)));
  };

  await measure("delivery.steady", "a webhook delivery at maxBatchSize 1, events arriving one at a time", EVENTS, async (during) => {
    for (let n = 0; n < EVENTS; n++) {
      append();
      await during(() => drain(subscription));
    }
  });
  await measure("delivery.burst", "a webhook delivery at maxBatchSize 1, from a backlog (windows of 32)", EVENTS, async (during) => {
    for (let n = 0; n < EVENTS; n++) append();
    await during(() => drain(subscription));
  });
  expectState(subscription.status()!.cursor === informer.log.bounds().tail, "the subscription did not catch up");
  await measure("poll.subscription", "a caught-up subscription's poll (once a minute)", 1, async (during) => {
    await during(() => subscription.step());
  });
  // Where windows are shorter or keys many, bookkeeping is shared less: what a delivery costs then.
  const paced = async (during: (fn: () => Promise<unknown>) => Promise<unknown>) => {
    for (let n = 0; n < EVENTS; n++) {
      append();
      clock.advance(1_000);
      await during(() => drain(subscription));
    }
  };
  await paced((fn) => fn()); // first, so that the log rows trimmed meanwhile are of this pace too
  await measure("delivery.paced", `the same, one event a second (acknowledgements are stored every ${WINDOW_MS / 1000} s)`, EVENTS, paced);
  const distinct = 2 * HELD_CHANGES_MAX;
  await measure("delivery.distinct", `the same from a backlog, each of a key not among the last ${HELD_CHANGES_MAX.toLocaleString("en")} delivered`, distinct, async (during) => {
    for (let n = 0; n < distinct; n++) {
      const rv = nextRv();
      informer.applyWatch([modified(DELIVERED_KEYS + n, rv)], String(rv));
    }
    await during(() => drain(subscription));
  });
  return costs;
}

/**
 * Watch sessions of an informer whose resource does not change: the default timeout, and a
 * bookmark a minute whose resourceVersion moved (the watch cache follows etcd's revision, which
 * other resources move). A pause longer than the reflector's batching window (20 ms) sends each
 * bookmark as its own batch, as minutes apart they are.
 */
async function measureIdleWatch(informer: Informer, db: Db, clock: FakeClock, nextRv: () => number): Promise<Cost> {
  const session = (): { batches: WatchChunk[] } => ({ batches: Array.from({ length: BOOKMARKS_PER_SESSION }, () => [bookmark(nextRv())] as WatchChunk).flatMap((chunk, i) => (i === 0 ? [chunk] : [30, chunk])) });
  const tick = async (lw: FakeListerWatcher) => {
    await informer.tick(lw, clock.now() + SLICE_MS);
    clock.advance(SESSION_MINUTES * 60_000);
  };
  // The first session after the updates counts them for /metrics: not idle yet.
  await tick(new FakeListerWatcher({ watches: [session()] }));
  const lw = new FakeListerWatcher({ watches: Array.from({ length: IDLE_SESSIONS }, session) });
  const idle = new Meter(db.rows);
  for (let i = 0; i < IDLE_SESSIONS; i++) await idle.during(() => tick(lw));
  expectState(lw.watches.length === IDLE_SESSIONS, "the watch sessions did not all run");
  const minutes = IDLE_SESSIONS * SESSION_MINUTES;
  const operation = `an idle informer's minute of watching: bookmarks (${BOOKMARKS_PER_SESSION} a ${SESSION_MINUTES}-minute session), the session's end and restart (its log past retention)`;
  return cost("idle.informer.watch", "informer", operation, minutes, idle.per(minutes));
}

/**
 * Status, metrics, the cron's minute and `/k8s` reads, in real Durable Objects (see the file's
 * comment). The informer is measured before it has a subscription: a nudged subscription polls the
 * informer's log from its alarm, at a time of its own (that poll is `poll.subscription.feed`).
 */
export async function measureObjects(): Promise<Cost[]> {
  // No bookmarks, a long watch and no churn: nothing runs in the objects but what is measured.
  const cluster = await newCluster({ bookmarkIntervalMs: 0 });
  await cluster.seed({ namespaces: NAMESPACES, podsPerNamespace: PODS / NAMESPACES });
  const { name, stub } = await startInformer(cluster, { indexers: INDEXERS, watchTimeoutSeconds: 1_800 });
  await waitSynced(stub);
  // The list's alarm is over when the watch has opened (and stored when): the object is quiet then.
  await waitFor("the watch to open", async () => (await status(stub)).watch.since !== null);
  const informerCosts = await runInDurableObject(stub, async (instance: InformerObject) => {
    const measure = measurer("informer", instance.sqlRows);
    const scrape = async () => unwrap(await instance.metrics());
    const costs = [
      // The log's bytes are summed at most once a minute, by the first scrape in it.
      await measure("metrics.informer.minute", "the first /metrics scrape of the informer in a minute (it sums the log's bytes)", scrape, 1),
      await measure("metrics.informer", "a /metrics scrape of the informer (another in the same minute)", scrape),
      await measure("status.informer", "a status call (GET /informers/{name})", async () => unwrap(await instance.status())),
      // The informer's alarm is running its watch: the check stops at the slice (as every minute).
      await measure("cron.informer", "the cron's minute: the informer checked (each subscription adds its nudge and poll)", () => instance.ensureRunning()),
    ];
    let next: Position | undefined;
    const page = async (from?: Position) => {
      const answer = unwrap(await instance.listAt({ limit: PAGE }, from)).value;
      expectState(!answer.expired, "the list expired");
      if (!answer.expired) next = answer.next;
    };
    costs.push(
      await measure("k8s.listFirstPage", `a /k8s list's first page (limit ${PAGE})`, () => page()),
      await measure("k8s.listNextPage", `a /k8s list's next page (limit ${PAGE}, continued)`, () => page(next), PODS / PAGE - 1),
    );
    const resourceVersion = unwrap(await instance.status()).cacheResourceVersion;
    costs.push(
      await measure("k8s.watchStart", "a /k8s watch from the list's resourceVersion (kubectl get -w)", async () => {
        const opened = unwrap(await instance.watch({ info: describeResource("pods", undefined)!, format: { kind: "json" }, includeObject: "Object", bookmarks: true, initialEvents: false, resourceVersion }));
        if (!("stream" in opened)) throw new Error("the watch did not open");
        await new Promise((resolve) => setTimeout(resolve, 50)); // it finds its start and waits at the tail
        await opened.stream.cancel();
      }),
    );
    return costs;
  });

  const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 200 } });
  const subscription = await subscribe(name, hook, { replayExisting: false, maxBatchSize: 1 });
  await waitFor("the subscription to idle", async () => unwrap(await subscription.stub().status()).lag === 0);
  const { tail } = (await status(stub)).eventLog;
  const subscriptionCosts = await runInDurableObject(subscription.stub(), async (instance: SubscriptionObject) => {
    const measure = measurer("subscription", instance.sqlRows);
    return [
      await measure("status.subscription", "a status call (GET /subscriptions/{id}; it asks for the informer's status too)", async () => unwrap(await instance.status())),
      await measure("metrics.subscription", "a /metrics scrape of the subscription", async () => unwrap(await instance.metrics())),
      // Once, and last: the nudge arms the alarm, whose poll must not run inside a measurement.
      await measure("cron.subscription", "the cron's nudge (the poll it brings forward is the poll above)", () => instance.nudge(tail), 1),
    ];
  });
  return [...informerCosts, ...subscriptionCosts];
}

/** Measures an object's operations: each run `units` times, one after another. */
function measurer(object: CostObject, tally: RowTally) {
  return async (id: string, operation: string, run: () => Promise<unknown>, units = 5): Promise<Cost> => {
    const meter = new Meter(tally);
    for (let i = 0; i < units; i++) await meter.during(run);
    return cost(id, object, operation, units, meter.per(units));
  };
}

/** Every figure, with the idle minutes composed from their parts: what the budgets and the bench report. */
export async function measureCosts(): Promise<Cost[]> {
  const costs = [...(await measureModules()), ...(await measureObjects())];
  const of = (id: string) => costs.find((c) => c.id === id)!;
  costs.push(
    cost("idle.informer", "informer", "an idle informer's minute: watching (above) and the cron's check", 1, sum(of("idle.informer.watch"), of("cron.informer"))),
    cost("idle.subscription", "subscription", "an idle subscription's minute: its poll and the cron's nudge", 1, sum(of("poll.subscription"), of("cron.subscription"))),
  );
  return costs;
}

function expectState(ok: boolean, problem: string): void {
  if (!ok) throw new Error(`cost measurement: ${problem}`);
}
