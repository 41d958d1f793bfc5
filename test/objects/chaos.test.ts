/**
 * Chaos (issue 7, "Done when"): kill the runtime at seeded points of (a) a first list, (b) a relist
 * and (c) a watch under churn with deletes, for several seeds. Afterwards the cache must equal the
 * fake server's state exactly (keys and resourceVersions: nothing deleted left behind, nothing
 * missing) and the event log, replayed from its head, must rebuild the cache.
 *
 * Kill points are placed by progress, not by the clock. A list response is held by the fake
 * server's `stallList` fault right after item X (X from the seed); the test waits until the informer
 * has staged what it was sent (the 100-item batches before X: indexer rows for the initial list,
 * `fifo_staging` rows for a relist), checks that the informer reports it is listing, deletes some of
 * the objects it has already staged (plus a seeded churn round), and then crashes every Durable
 * Object (`abortAllDurableObjects`) or reconfigures the informer (which aborts its running slice).
 * The resumed list sees a newer snapshot without the deleted objects: a correct informer must not
 * keep them. Mid-watch kills land once the log has grown by a seeded number of events of a churn
 * round still being applied. Evictions are graceful (they wait for the running alarm, which holds
 * a stalled list or a watch session), so they are used where no list is streaming: during the
 * backoff before a relist, and once per seed mid-watch (the eviction waits for the 2 s session).
 *
 * The cluster changes only through the test's own seeded operations, so for a seed the cluster's
 * history, the stall points and the deletes are the same on every run; only the informer's timing
 * varies.
 */
import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseInformerSpec, type InformerSpecInput } from "../../src/config/informer-spec.ts";
import { unwrap } from "../../src/errors.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { Prng } from "../fake-apiserver/prng.ts";
import {
  type InformerStub,
  cacheVersions,
  clusterVersions,
  compareRv,
  replayLog,
  newCluster,
  readWholeLog,
  startInformer,
  status,
  waitFor,
} from "../helpers/informer.ts";

const SEEDS = [1, 2, 3, 4, 5, 6];
/** How long a stalled list response is held if nothing interrupts the reader. */
const STALL_MS = 15_000;
/** The client hands listed items to the informer in batches of this many (kube/client.ts). */
const ITEM_BATCH = 100;

/** Always a fresh stub: a crash breaks the stubs that existed before it. */
const informer = (name: string): InformerStub => env.INFORMER.getByName(name);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Kill = "crash" | "reconfigure";

/**
 * Crashes every Durable Object at once, then does what the cron does (re-arm a missing alarm) and
 * runs the pending alarm now instead of waiting for the runtime's retry of the crashed one (2 s,
 * doubling with each consecutive failure): the retry's timing is not what this test is about. The
 * alarm runs in the background; the next crash ends it like any other.
 */
async function crash(name: string): Promise<void> {
  await abortAllDurableObjects().catch(() => {}); // the abort also rejects into this call
  await informer(name).ensureRunning();
  void runDurableObjectAlarm(informer(name)).catch(() => {});
}

/** Graceful eviction (waits for a running alarm), then the cron's re-arm. */
async function evict(name: string): Promise<void> {
  await evictDurableObject(informer(name)).catch(() => {}); // not running at this instant: nothing to evict
  await informer(name).ensureRunning();
}

/**
 * A configuration change the loop does not list differently for (the log's age limit): configure()
 * stops the running slice mid-step and wakes the loop, which resumes from its persisted state.
 */
async function reconfigure(name: string, cluster: FakeCluster, spec: Partial<InformerSpecInput>, generation: number) {
  const changed = { ...spec, retention: { ...spec.retention, maxAgeSeconds: 2 * 24 * 3600 + 1 + generation } };
  unwrap(await informer(name).configure(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3, ...changed }, name), { server: cluster.url }));
}

async function kill(kind: Kill, name: string, cluster: FakeCluster, spec: Partial<InformerSpecInput>, generation: number) {
  if (kind === "crash") await crash(name);
  else await reconfigure(name, cluster, spec, generation);
}

/** Keys of the staging table, in key order: what a relist has staged so far. */
async function stagedKeys(name: string): Promise<string[]> {
  return runInDurableObject(informer(name), (_, state) =>
    state.storage.sql
      .exec<{ key: string }>("SELECT key FROM fifo_staging ORDER BY key")
      .toArray()
      .map((row) => row.key),
  );
}

async function stagedCount(name: string): Promise<number> {
  return runInDurableObject(informer(name), (_, state) =>
    state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM fifo_staging").one().n,
  );
}

async function stallsReached(cluster: FakeCluster): Promise<number> {
  return (await cluster.requests()).filter((r) => r.verb === "list" && r.faults?.includes("stallList")).length;
}

/** Waits until `count()` is at least `atLeast` and has stopped moving (the reader consumed what was sent). */
async function waitSettled(what: string, count: () => Promise<number>, atLeast: number): Promise<number> {
  let last = -1;
  const { n } = await waitFor(what, async () => {
    const now = await count();
    const settled = now >= atLeast && now === last;
    last = now;
    return settled && { n: now };
  });
  return n;
}

/** Deletes `n` seeded picks of `candidates` that still exist in the cluster; answers the deleted keys. */
async function deleteSome(cluster: FakeCluster, candidates: string[], n: number, rng: Prng): Promise<string[]> {
  const live = await clusterVersions(cluster);
  const pool = candidates.filter((key) => live.has(key));
  const deleted: string[] = [];
  while (deleted.length < n && pool.length > 0) {
    const [key] = pool.splice(rng.int(pool.length), 1);
    const [namespace, name] = key!.split("/");
    await cluster.delete("pods", { metadata: { namespace: namespace!, name: name! } });
    deleted.push(key!);
  }
  return deleted;
}

interface Diff {
  /** In the cache but deleted from the cluster. */
  stale: string[];
  /** In the cluster but not in the cache. */
  missing: string[];
  /** In both with different resourceVersions: key cache-rv → cluster-rv. */
  differentRv: string[];
}

function diff(actual: Map<string, string>, expected: Map<string, string>): Diff {
  const result: Diff = { stale: [], missing: [], differentRv: [] };
  for (const [key, rv] of actual) {
    const want = expected.get(key);
    if (want === undefined) result.stale.push(key);
    else if (want !== rv) result.differentRv.push(`${key} ${rv} → ${want}`);
  }
  for (const key of expected.keys()) if (!actual.has(key)) result.missing.push(key);
  return result;
}

/**
 * Waits until the informer has applied everything up to the cluster's revision with nothing
 * queued, then compares. A deleted object left in the cache stays there forever, so this does not
 * wait for equality: it waits for the informer to be caught up, and then the cache must be exact.
 */
async function expectCacheEqualsCluster(name: string, cluster: FakeCluster, context: string): Promise<Map<string, string>> {
  const revision = await cluster.revision();
  await waitFor(
    `${context}: the informer to catch up to revision ${revision}`,
    async () => {
      const s = await status(informer(name));
      return s.synced && s.queueDepth === 0 && s.watch.state === "watching" && compareRv(s.lastSyncResourceVersion, revision) >= 0;
    },
    30_000,
  );
  const cache = await cacheVersions(informer(name));
  const truth = await clusterVersions(cluster);
  const d = diff(cache, truth);
  expect.soft(d, `${context}: cache vs cluster (${cache.size} cached, ${truth.size} in the cluster): ${JSON.stringify(d)}`).toEqual({
    stale: [],
    missing: [],
    differentRv: [],
  });
  return cache;
}

/**
 * Replays the whole log from its head (retention is set far above what a test writes) and checks
 * it rebuilds `cache`, and that it tells a consistent story per key (DESIGN invariants 1, 2, 5).
 */
async function expectLogReplaysToCache(name: string, cache: Map<string, string>, context: string): Promise<void> {
  const events = await readWholeLog(informer(name));
  expect(events[0]?.seq, `${context}: the log starts at its first event`).toBe(1);
  const { state, problems } = replayLog(events);
  expect.soft(problems.slice(0, 20), `${context}: log story`).toEqual([]);
  const d = diff(state, cache);
  expect(d, `${context}: log replay vs cache (${events.length} events): ${JSON.stringify(d)}`).toEqual({ stale: [], missing: [], differentRv: [] });
}

/** A seeded churn round of creates (25%), updates (50%) and deletes (25%). */
function churnRound(cluster: FakeCluster, seed: number, round: number, operations: number) {
  return cluster.churn({ seed: seed * 10_000 + round, operations });
}

const spread = (rng: Prng, from: number, to: number) => from + rng.int(to - from + 1);

/** What happened when, for the failure message (and the console with VERBOSE). */
const VERBOSE = false;
function tracer(label: string) {
  const start = Date.now();
  const lines: string[] = [];
  return {
    lines,
    note(line: string) {
      const entry = `+${Date.now() - start}ms ${line}`;
      lines.push(entry);
      if (VERBOSE) console.log(`${label} ${entry}`);
    },
  };
}

type Status = Awaited<ReturnType<typeof status>>;

/** One interruption of a list: where the response stalls, how the informer is stopped, how many of its objects are deleted. */
interface Interrupt {
  page: "first" | "continue";
  afterItems: number;
  kill: Kill;
  deletes: number;
}

/**
 * Seeded interruptions of one list. The first lands anywhere in page 1 (`firstPage` items: the
 * whole resource for a single-response list), the window of issue 7 item 1. A later one lands within
 * the first `pageSize` items of a page, so it is reached whether the resumed list is one response or
 * paginated (a fixed informer may resume at RV "" with a limit). With a paginated list a later one
 * may land on page 2 (`secondPage` items at least), which is resumed with its continue token; after
 * that no page 1 comes again, so the rest land on page 2 too.
 */
function planInterrupts(rng: Prng, firstPage: number, pageSize: number, secondPage: number): Interrupt[] {
  let continued = false;
  return Array.from({ length: spread(rng, 1, 3) }, (_, i) => {
    continued ||= secondPage > ITEM_BATCH + 1 && i > 0 && rng.next() < 0.5;
    const length = i === 0 ? firstPage : continued ? secondPage : Math.min(firstPage, pageSize);
    return {
      page: continued ? "continue" : "first",
      afterItems: spread(rng, ITEM_BATCH + 1, length - 1),
      kill: rng.next() < 0.75 ? "crash" : "reconfigure",
      deletes: spread(rng, 3, 8),
    };
  });
}

interface ListChaos {
  cluster: FakeCluster;
  name: () => string;
  spec: Partial<InformerSpecInput>;
  seed: number;
  rng: Prng;
  plan: Interrupt[];
  pageSize: number;
  trace: ReturnType<typeof tracer>;
  /** How far the informer got with this list: indexer rows (initial list) or staging rows (relist). */
  progress: (name: string) => Promise<number>;
  /** The keys it holds from this list so far. */
  held: (name: string) => Promise<string[]>;
  /** Whether its status shows it in the middle of this list. */
  inList: (s: Status) => boolean;
  /** Adds the first stall fault's list request: starts the informer or forces the relist. */
  start: () => Promise<void>;
}

/**
 * Runs the plan: each response stalls at its point; once the informer has taken in what it was
 * sent, some of the objects it holds are deleted, the next stall is armed, and the informer is
 * stopped while a churn round runs. Answers where the kills landed and what was deleted.
 */
async function interruptList(c: ListChaos): Promise<{ landed: string[]; deleted: string[] }> {
  const landed: string[] = [];
  const deleted: string[] = [];
  await c.cluster.fault({ kind: "stallList", afterItems: c.plan[0]!.afterItems, page: c.plan[0]!.page, ms: STALL_MS });
  await c.start();
  const name = c.name();
  for (let i = 0; i < c.plan.length; i++) {
    const step = c.plan[i]!;
    await waitFor(`stall ${i + 1}`, async () => (await stallsReached(c.cluster)) > i);
    c.trace.note(`stall ${i + 1} reached (after item ${step.afterItems} of a ${step.page} page)`);
    // The client hands items over in batches of ITEM_BATCH: those before the stall point are in.
    const expected = Math.floor(step.afterItems / ITEM_BATCH) * ITEM_BATCH + (step.page === "continue" ? c.pageSize : 0);
    const got = await waitSettled("the informer to take in the list so far", () => c.progress(name), i === 0 ? expected : 0);
    if (i === 0) expect(got, "objects taken in before the first stall").toBe(expected);
    const s = await status(informer(name));
    if (c.inList(s)) landed.push(`${step.kill} with ${got} taken in (${JSON.stringify(step)})`);
    const gone = await deleteSome(c.cluster, await c.held(name), step.deletes, c.rng);
    deleted.push(...gone);
    c.trace.note(`${got} taken in, status ${s.watch.state} synced=${s.synced}; deleted ${gone.join(" ")}; ${step.kill}`);
    const next = c.plan[i + 1];
    if (next) await c.cluster.fault({ kind: "stallList", afterItems: next.afterItems, page: next.page, ms: STALL_MS });
    const churn = churnRound(c.cluster, c.seed, 1 + i, 40);
    await kill(step.kill, name, c.cluster, c.spec, i);
    await churn;
    c.trace.note(`killed (${step.kill}), churn round done`);
  }
  await c.cluster.clearFaults();
  for (let round = 0; round < 3; round++) {
    await churnRound(c.cluster, c.seed, 100 + round, 30);
    await sleep(20);
  }
  c.trace.note("churn stopped");
  return { landed, deleted };
}

/**
 * A cluster seeded for a list phase. Mostly with a watch cache: the RV "0" list is then one response
 * for the whole resource (the widest window); otherwise the list is paginated and a kill can land on
 * page 1 or a later page.
 */
async function seededCluster(seed: number, phase: number) {
  const rng = new Prng(seed * 7_919 + phase);
  const watchCache = rng.next() < 0.67;
  const pageSize = watchCache ? 500 : spread(rng, 250, 400);
  const cluster = await newCluster({ watchCache });
  const seeded = await cluster.seed({ namespaces: spread(rng, 4, 8), podsPerNamespace: spread(rng, 150, 250), podBytes: 800, seed });
  const spec: Partial<InformerSpecInput> = { pageSize, retention: { maxEvents: 1_000_000 } };
  return { rng, watchCache, pageSize, cluster, pods: seeded.created.pods, spec };
}

describe("chaos", () => {
  it.each(SEEDS)("(a) kills during the first list leave no deleted object behind (seed %i)", async (seed) => {
    const trace = tracer(`[a${seed}]`);
    const { rng, watchCache, pageSize, cluster, pods, spec } = await seededCluster(seed, 1);
    const plan = planInterrupts(rng, watchCache ? pods : pageSize, pageSize, watchCache ? 0 : Math.min(pageSize, pods - pageSize - 100));
    trace.note(`${pods} pods, watchCache=${watchCache}, pageSize=${pageSize}, plan ${JSON.stringify(plan)}`);
    let name = "";
    const { landed, deleted } = await interruptList({
      cluster,
      name: () => name,
      spec,
      seed,
      rng,
      plan,
      pageSize,
      trace,
      // The initial list is applied as it arrives; a resumed one may be staged instead.
      progress: async (n) => (await status(informer(n))).objects + (await stagedCount(n)),
      held: async (n) => [...new Set([...(await cacheVersions(informer(n))).keys(), ...(await stagedKeys(n))])].sort(),
      inList: (s) => !s.synced && s.watch.state === "listing",
      start: async () => {
        name = (await startInformer(cluster, spec)).name;
      },
    });
    const context = `seed ${seed} first list; deleted while it was interrupted: ${deleted.join(" ")}\n${trace.lines.join("\n")}\n`;
    expect(landed, `kills inside the first list\n${context}`).toHaveLength(plan.length);
    const cache = await expectCacheEqualsCluster(name, cluster, context);
    await expectLogReplaysToCache(name, cache, context);
  });

  it.each(SEEDS)("(b) kills during a relist leave no deleted object behind (seed %i)", async (seed) => {
    const trace = tracer(`[b${seed}]`);
    const { rng, watchCache, pageSize, cluster, pods, spec } = await seededCluster(seed, 2);
    const { name } = await startInformer(cluster, spec);
    await waitFor("the first list and a watch", async () => {
      const s = await status(informer(name));
      return s.synced && s.watch.state === "watching";
    });
    await churnRound(cluster, seed, 0, 60);
    // A relist at a known RV is one response (no limit), unless RV "0" came back paginated (no watch cache).
    // `pods`: as seeded, give or take what churn adds and removes
    const plan = planInterrupts(rng, watchCache ? pods - 100 : pageSize, pageSize, watchCache ? 0 : Math.min(pageSize, pods - pageSize - 100));
    const how = rng.next() < 0.5 ? "410 on the watch" : "compaction";
    const evictInBackoff = rng.next() < 0.5;
    trace.note(`${pods} pods, watchCache=${watchCache}, pageSize=${pageSize}, relist by ${how}, evict=${evictInBackoff}, plan ${JSON.stringify(plan)}`);
    const before = await status(informer(name));
    const inBackoff = () =>
      waitFor("a backoff", async () => {
        const now = await status(informer(name));
        return now.relists > before.relists || now.watch.state === "backoff" ? now : false;
      });
    const { landed, deleted } = await interruptList({
      cluster,
      name: () => name,
      spec,
      seed,
      rng,
      plan,
      pageSize,
      trace,
      progress: stagedCount,
      held: stagedKeys,
      inList: (s) => s.watch.state === "listing" && s.relists > before.relists,
      start: async () => {
        if (how === "410 on the watch") {
          await cluster.fault({ kind: "errorEvent", code: 410 });
          await cluster.closeWatches();
        } else {
          // Hold the watch off (one refused re-watch, then its backoff), change what it has not
          // seen and compact past it: the next watch gets 410 Gone and the informer relists.
          await cluster.fault({ kind: "status", on: "watch", code: 503 });
          await cluster.closeWatches();
          await inBackoff();
          await churnRound(cluster, seed, 50, 20);
          await cluster.compact();
        }
        if (evictInBackoff) {
          // The relist waits for its backoff: no alarm is running, so the eviction lands at once.
          const s = await inBackoff();
          if (s.watch.state === "backoff") {
            await evict(name);
            trace.note("evicted during the backoff before the relist");
          }
        }
      },
    });
    const context = `seed ${seed} relist (${how}); deleted while it was interrupted: ${deleted.join(" ")}\n${trace.lines.join("\n")}\n`;
    expect(landed, `kills inside the relist\n${context}`).toHaveLength(plan.length);
    const cache = await expectCacheEqualsCluster(name, cluster, context);
    await expectLogReplaysToCache(name, cache, context);
  });

  it.each(SEEDS)("(c) kills during a watch under churn with deletes (seed %i)", async (seed) => {
    const trace = tracer(`[c${seed}]`);
    const rng = new Prng(seed * 7_919 + 3);
    const cluster = await newCluster();
    await cluster.seed({ namespaces: spread(rng, 3, 5), podsPerNamespace: spread(rng, 40, 80), podBytes: 800, seed });
    const spec: Partial<InformerSpecInput> = { watchTimeoutSeconds: 2, retention: { maxEvents: 1_000_000 } };
    const { name } = await startInformer(cluster, spec);
    await waitFor("the first list and a watch", async () => {
      const s = await status(informer(name));
      return s.synced && s.watch.state === "watching";
    });
    const rounds = spread(rng, 8, 12);
    const evictRound = rng.int(rounds);
    let landed = 0;
    for (let round = 0; round < rounds; round++) {
      const bursts = spread(rng, 2, 4);
      const operations = spread(rng, 20, 50);
      const killAfter = spread(rng, 1, operations);
      const base = (await status(informer(name))).eventLog.tail;
      // Churn keeps going while the informer is killed: several bursts; the kill lands once
      // `killAfter` events of this round are in the log.
      const churn = (async () => {
        for (let b = 0; b < bursts; b++) {
          await churnRound(cluster, seed, round * 10 + b, operations);
          await sleep(15);
        }
      })();
      await waitFor(`${killAfter} events of round ${round}`, async () => (await status(informer(name))).eventLog.tail >= base + killAfter);
      const s = await status(informer(name));
      if (s.watch.state === "watching") landed++;
      const how = round === evictRound ? "evict" : "crash";
      if (how === "evict") await evict(name);
      else await crash(name);
      await churn;
      trace.note(`round ${round}: ${bursts}×${operations} ops, ${how} after ${s.eventLog.tail - base} events (${s.watch.state})`);
    }
    const context = `seed ${seed} watch\n${trace.lines.join("\n")}\n`;
    expect(landed, `kills while watching\n${context}`).toBeGreaterThanOrEqual(rounds - 1);
    const cache = await expectCacheEqualsCluster(name, cluster, context);
    await expectLogReplaysToCache(name, cache, context);
  });
});
