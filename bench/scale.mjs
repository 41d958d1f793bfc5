// Scale (`npm run bench -- --only scale --pods N`, BENCHMARKS.md "Scale: one informer with
// 1,000,000 pods"): one informer (with a `spec.nodeName` indexer) lists N ~3 KB pods; then
//   1. the initial list: time to synced, runtime RSS and isolate heap, the object's storage;
//   2. query latency at N, each kind a bounded number of sequential loopback requests:
//      get, list pages (/informers/{name}/objects?limit=500 walked with continue, and
//      /k8s/api/v1/pods?limit=500 likewise), a namespace list, label-selector lists (selective and
//      not), ByIndex on the node index, the index's values;
//   3. (unless --scale-no-relist) a second, staged relist: the server starts a new snapshot with
//      every pod at a new resourceVersion, the watch is cut and expires (410), and the informer
//      relists over its populated cache: time, memory, and the storage peak while the list is staged;
//   4. a breakdown of the object's SQLite file by table (dbstat, on a copy read by node:sqlite).
// Everything listens on and talks to 127.0.0.1; every wait is bounded.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { HeapSampler, Inspector, MB, RssSampler, cpuDelta, now, prng, procCpu, round } from "./lib.mjs";
import { WORK, api, log, pollStatus, runtimeInspectorUrl, startWorker } from "./harness.mjs";

export const SCALE_OPTIONS = {
  "scale-requests": { type: "string", default: "300" },
  "scale-query-seconds": { type: "string", default: "60" },
  "scale-timeout": { type: "string", default: "600" },
  "scale-no-relist": { type: "boolean", default: false },
};

/** The run's hard deadline: two lists, ten query kinds, and slack. */
export function scaleDeadlineMs(opts) {
  return (2 * Number(opts["scale-timeout"]) + 10 * Number(opts["scale-query-seconds"]) + 180) * 1000;
}

const NAMESPACES = 50; // the stream server's default
const NODES = 500; // node-(i % 500)
const APPS = 97; // svc-(i % 97)
const hex = (n, width) => n.toString(16).padStart(width, "0").slice(-width);
/** The stream server's pod i (bench/stream-server.mjs podValues). */
const podOf = (i) => ({ namespace: `ns-${i % NAMESPACES}`, name: `svc-${i % APPS}-7d9f8c6b5-${hex(i, 6)}` });

function percentiles(values) {
  const s = [...values].sort((a, b) => a - b);
  const at = (q) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : null);
  return { n: s.length, p50: round(at(0.5), 1), p90: round(at(0.9), 1), p99: round(at(0.99), 1), max: round(s[s.length - 1] ?? null, 1) };
}

// ---------------------------------------------------------------------------------------------
// Storage of the worker's persisted state

function persistDir() {
  const dirs = fs.readdirSync(WORK).filter((n) => n.startsWith("state-scale-"));
  return dirs.length === 1 ? path.join(WORK, dirs[0]) : undefined;
}

function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        try {
          out.push({ path: p, bytes: fs.statSync(p).size });
        } catch {
          // gone
        }
      }
    }
  };
  walk(dir);
  return out;
}

/** Total bytes under the persist dir, and the largest SQLite database with its WAL. */
function storageNow() {
  const dir = persistDir();
  if (!dir) return null;
  const files = filesUnder(dir);
  const dbs = files.filter((f) => f.path.endsWith(".sqlite")).sort((a, b) => b.bytes - a.bytes);
  const db = dbs[0];
  const wal = db && files.find((f) => f.path === `${db.path}-wal`);
  return {
    totalBytes: files.reduce((a, f) => a + f.bytes, 0),
    dbPath: db?.path ?? null,
    dbBytes: db?.bytes ?? 0,
    walBytes: wal?.bytes ?? 0,
  };
}

class StorageSampler {
  constructor(intervalMs = 1_000) {
    this.samples = [];
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.sample();
  }
  sample() {
    const s = storageNow();
    if (s) this.samples.push({ t: now(), ...s });
  }
  stop() {
    clearInterval(this.timer);
    this.sample();
  }
  peak(from = 0) {
    return this.samples.filter((s) => s.t >= from).reduce((a, s) => (a && a.totalBytes >= s.totalBytes ? a : s), null);
  }
}

/** Table sizes of the informer's database: a copy (db + WAL) opened with node:sqlite, dbstat. */
async function breakdown(dbPath) {
  let DatabaseSync;
  try {
    ({ DatabaseSync } = await import("node:sqlite"));
  } catch {
    return { unavailable: `node:sqlite is not available in ${process.version}` };
  }
  const copyDir = fs.mkdtempSync(path.join(WORK, "dbcopy-"));
  try {
    const copy = path.join(copyDir, "informer.sqlite");
    fs.copyFileSync(dbPath, copy);
    if (fs.existsSync(`${dbPath}-wal`)) fs.copyFileSync(`${dbPath}-wal`, `${copy}-wal`);
    const db = new DatabaseSync(copy);
    try {
      const one = (sql) => db.prepare(sql).get();
      const pageSize = one("PRAGMA page_size").page_size;
      const pageCount = one("PRAGMA page_count").page_count;
      const freelist = one("PRAGMA freelist_count").freelist_count;
      let tables;
      try {
        tables = db
          .prepare("SELECT name, SUM(pgsize) AS bytes, COUNT(*) AS pages FROM dbstat GROUP BY name ORDER BY bytes DESC")
          .all()
          .map((r) => ({ name: r.name, MB: round(Number(r.bytes) / MB, 1), pages: Number(r.pages) }));
      } catch (error) {
        tables = { unavailable: error.message };
      }
      const safe = (sql) => {
        try {
          return one(sql);
        } catch (error) {
          return { error: error.message };
        }
      };
      return {
        pageSize,
        pageCount,
        freelistPages: freelist,
        databaseMB: round((pageSize * pageCount) / MB, 1),
        tables,
        rows: {
          objects: safe("SELECT COUNT(*) AS n FROM objects").n,
          indexEntries: safe("SELECT COUNT(*) AS n FROM index_entries").n,
          eventLog: safe("SELECT COUNT(*) AS n, SUM(LENGTH(body)) AS bodyBytes, MAX(LENGTH(body)) AS maxBody FROM event_log"),
          staging: safe("SELECT COUNT(*) AS n, SUM(LENGTH(body)) AS bodyBytes FROM fifo_staging"),
          deltas: safe("SELECT COUNT(*) AS n FROM fifo_deltas"),
        },
      };
    } finally {
      db.close();
    }
  } catch (error) {
    return { error: error.message };
  } finally {
    fs.rmSync(copyDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

/**
 * `count` sequential requests (or until `budgetMs`); `next(i, previous)` gives the path of request
 * i from the previous answer (for continue walks). Latency: request sent → body read.
 */
async function measure(worker, name, { count, budgetMs, next, itemsOf }) {
  const latencies = [];
  const itemCounts = [];
  const bytes = [];
  const failures = [];
  const started = now();
  let previous;
  for (let i = 0; i < count && now() - started < budgetMs; i++) {
    const pathname = next(i, previous);
    const t0 = now();
    try {
      const response = await fetch(`${worker.base}${pathname}`, { signal: AbortSignal.timeout(30_000) });
      const text = await response.text();
      const t1 = now();
      if (!response.ok) {
        failures.push(`${response.status} ${pathname}: ${text.slice(0, 200)}`);
        previous = undefined;
        continue;
      }
      const body = JSON.parse(text);
      latencies.push(t1 - t0);
      bytes.push(text.length);
      itemCounts.push(itemsOf(body).length);
      previous = body;
    } catch (error) {
      failures.push(`${pathname}: ${error.message}`);
      previous = undefined;
    }
  }
  const seconds = (now() - started) / 1000;
  const result = {
    name,
    requests: latencies.length + failures.length,
    ms: percentiles(latencies),
    itemsPerAnswer: percentiles(itemCounts),
    kBPerAnswer: round(bytes.reduce((a, b) => a + b, 0) / Math.max(1, bytes.length) / 1024, 1),
    seconds: round(seconds, 1),
    failures: failures.length,
    ...(failures.length ? { firstFailure: failures[0] } : {}),
  };
  log(`scale: ${name}: ${result.requests} requests, p50 ${result.ms.p50} ms, p99 ${result.ms.p99} ms, ${result.itemsPerAnswer.p50} items/answer${failures.length ? `, ${failures.length} FAILED (${failures[0]})` : ""}`);
  return result;
}

/** Walks a paged list with its continue tokens, starting over at the end; also times whole walks. */
function walker(first, tokenOf, withToken) {
  const walks = [];
  let walkStart;
  let pages = 0;
  return {
    walks,
    next: (i, previous) => {
      const token = previous && tokenOf(previous);
      if (!token) {
        if (previous && walkStart !== undefined) walks.push({ pages, seconds: round((now() - walkStart) / 1000, 2) });
        walkStart = now();
        pages = 1;
        return first;
      }
      pages++;
      return withToken(token);
    },
  };
}

async function queries(worker, informer, N, opts) {
  const count = Number(opts["scale-requests"]);
  const budgetMs = Number(opts["scale-query-seconds"]) * 1000;
  const random = prng(9);
  const pick = (n) => Math.floor(random() * n);
  const items = (b) => b.items ?? [];
  const out = [];

  out.push(
    await measure(worker, "get one object (by key)", {
      count,
      budgetMs,
      itemsOf: (b) => [b],
      next: () => {
        const p = podOf(pick(N));
        return `/informers/${informer}/objects/${p.namespace}/${p.name}`;
      },
    }),
  );

  const objectsWalk = walker(`/informers/${informer}/objects?limit=500`, (b) => b.continue, (t) => `/informers/${informer}/objects?limit=500&continue=${encodeURIComponent(t)}`);
  out.push({
    ...(await measure(worker, "list page, /informers/{name}/objects?limit=500 (walked with continue)", { count, budgetMs, itemsOf: items, next: objectsWalk.next })),
    fullWalks: objectsWalk.walks,
  });

  const k8sWalk = walker("/k8s/api/v1/pods?limit=500", (b) => b.metadata?.continue, (t) => `/k8s/api/v1/pods?limit=500&continue=${encodeURIComponent(t)}`);
  out.push({
    ...(await measure(worker, "list page, /k8s/api/v1/pods?limit=500 (walked with continue)", { count, budgetMs, itemsOf: items, next: k8sWalk.next })),
    fullWalks: k8sWalk.walks,
  });

  out.push(
    await measure(worker, `namespace list, first page (/objects?namespace=ns-K&limit=500; ${round(N / NAMESPACES, 0)} pods per namespace)`, {
      count,
      budgetMs,
      itemsOf: items,
      next: () => `/informers/${informer}/objects?namespace=ns-${pick(NAMESPACES)}&limit=500`,
    }),
  );
  out.push(
    await measure(worker, "namespace list, first page (/k8s/api/v1/namespaces/ns-K/pods?limit=500)", {
      count,
      budgetMs,
      itemsOf: items,
      next: () => `/k8s/api/v1/namespaces/ns-${pick(NAMESPACES)}/pods?limit=500`,
    }),
  );
  out.push(
    await measure(worker, `ByIndex node, first page (/indexes/node/node-K?limit=500; ${round(N / NODES, 0)} pods per node)`, {
      count,
      budgetMs,
      itemsOf: items,
      next: () => `/informers/${informer}/indexes/node/node-${pick(NODES)}?limit=500`,
    }),
  );
  out.push(
    await measure(worker, "label selector, unselective (tier=backend: every pod), first page, limit=500", {
      count,
      budgetMs,
      itemsOf: items,
      next: () => `/informers/${informer}/objects?labelSelector=${encodeURIComponent("tier=backend")}&limit=500`,
    }),
  );
  out.push(
    await measure(worker, "label selector, selective (app=svc-K: 1/97 of pods), first page, limit=500", {
      count: Math.min(count, 100),
      budgetMs,
      itemsOf: items,
      next: () => `/informers/${informer}/objects?labelSelector=${encodeURIComponent(`app=svc-${pick(APPS)}`)}&limit=500`,
    }),
  );
  out.push(
    await measure(worker, "informer status (GET /informers/{name}: counts the cached objects)", {
      count: Math.min(count, 100),
      budgetMs,
      itemsOf: () => [],
      next: () => `/informers/${informer}`,
    }),
  );
  out.push(
    await measure(worker, "index values (/indexes/node?limit=500)", {
      count: Math.min(count, 100),
      budgetMs,
      itemsOf: (b) => b.values ?? b.items ?? [],
      next: () => `/informers/${informer}/indexes/node?limit=500`,
    }),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------

async function heapSampler(worker) {
  const url = await runtimeInspectorUrl(worker.runtimePid);
  if (!url) throw new Error("the runtime's inspector was not found");
  for (let attempt = 0; attempt < 4; attempt++) {
    const inspector = await Inspector.connect(url);
    try {
      await inspector.call("Runtime.getHeapUsage", {}, 3_000);
      return { inspector, heap: new HeapSampler(inspector, 200) };
    } catch {
      inspector.close();
    }
  }
  throw new Error("the inspector session did not answer");
}

/** Runs one list of the informer until `done(status)`; memory, heap and storage sampled meanwhile. */
async function timedList(worker, server, name, done, timeoutMs, heap, start) {
  const rss = new RssSampler(worker.runtimePid, 50);
  await sleep(1_000);
  const baseline = rss.medianBetween(0, now());
  const heapBaseline = heap?.samples.at(-1)?.used ?? null;
  const storage = new StorageSampler(1_000);
  const storageBefore = storageNow();
  const cpu0 = procCpu(worker.runtimePid);
  const t0 = now();
  await start();
  const polled = await pollStatus(worker, name, done, { timeoutMs, server, intervalMs: 200 });
  const cpu1 = procCpu(worker.runtimePid);
  const seconds = (polled.at - t0) / 1000;
  await sleep(2_000);
  rss.stop();
  storage.stop();
  const peak = rss.peakBetween(t0);
  const heapPeak = heap?.samples.filter((s) => s.t >= t0).reduce((a, s) => Math.max(a, s.used), 0) ?? null;
  const storagePeak = storage.peak(t0);
  const after = storageNow();
  return {
    ok: polled.ok,
    stalled: polled.stalled ?? false,
    seconds: round(seconds, 2),
    objects: polled.status?.objects ?? null,
    runtimeCpuSeconds: cpuDelta(cpu0, cpu1),
    memory: {
      baselineMB: round(baseline / MB),
      peakMB: round(peak.rss / MB),
      growthMB: round((peak.rss - baseline) / MB),
      afterMB: round(rss.last().rss / MB),
      everyTwoSeconds: rss.series(t0, 2_000),
      isolateHeap: heap ? { baselineMB: round(heapBaseline / MB), peakUsedMB: round(heapPeak / MB), samples: heap.samples.length, maxCallLatencyMs: round(heap.maxLatencyMs, 0) } : null,
    },
    storage: {
      beforeMB: storageBefore ? round(storageBefore.totalBytes / MB) : null,
      peakMB: storagePeak ? round(storagePeak.totalBytes / MB) : null,
      peakDbMB: storagePeak ? round(storagePeak.dbBytes / MB) : null,
      peakWalMB: storagePeak ? round(storagePeak.walBytes / MB) : null,
      peakAtSeconds: storagePeak ? round((storagePeak.t - t0) / 1000, 1) : null,
      afterMB: after ? round(after.totalBytes / MB) : null,
      afterDbMB: after ? round(after.dbBytes / MB) : null,
      afterWalMB: after ? round(after.walBytes / MB) : null,
      everyFiveSeconds: storage.samples.filter((s, i) => i % 5 === 0 && s.t >= t0).map((s) => ({ t: round((s.t - t0) / 1000, 0), MB: round(s.totalBytes / MB) })),
    },
    status: polled.status,
    polls: { count: polled.polls, errors: polled.pollErrors, lastError: polled.lastPollError, latencyMs: polled.pollLatencyMs },
    progress: polled.series.map((p) => ({ ...p, t: round((p.t - t0) / 1000, 1) })),
  };
}

export async function runScale({ opts, pods: N, server, bundle }) {
  const timeoutMs = Number(opts["scale-timeout"]) * 1000;
  const sc = await server.configure({ listSize: N, watchEvents: 0 });
  const worker = await startWorker(bundle, "scale", server.url);
  log(`scale: wrangler dev ready (runtime workerd pid ${worker.runtimePid}), ${N} pods`);
  const result = { parameters: { pods: N, namespaces: NAMESPACES, nodes: NODES, indexers: { node: "spec.nodeName" } }, scenario: sc };
  let sampler;
  try {
    await api(worker, "PUT", "/informers/warmup", { resource: "pods", namespace: "bench-warmup", watchTimeoutSeconds: 600 });
    const warm = await pollStatus(worker, "warmup", (s) => s.synced && s.watch.state === "watching", { timeoutMs: 30_000, intervalMs: 200 });
    if (!warm.ok) throw new Error(`the warm-up informer did not sync in 30 s: ${JSON.stringify(warm.status)}`);
    try {
      sampler = await heapSampler(worker);
    } catch (error) {
      result.heapError = error.message;
    }
    const informer = "scale";
    // 1. the initial list
    result.initialList = await timedList(
      worker,
      server,
      informer,
      (s) => s.synced && s.objects === N && s.queueDepth === 0,
      timeoutMs,
      sampler?.heap,
      () => api(worker, "PUT", `/informers/${informer}`, { resource: "pods", watchTimeoutSeconds: 600, indexers: { node: "spec.nodeName" } }),
    );
    const il = result.initialList;
    log(`scale: initial list of ${N}: ${il.ok ? `${il.seconds} s` : "NOT SYNCED"}, RSS +${il.memory.growthMB} MB, heap peak ${il.memory.isolateHeap?.peakUsedMB ?? "-"} MB, storage ${il.storage.afterMB} MB (db ${il.storage.afterDbMB}, wal ${il.storage.afterWalMB})`);
    if (!il.ok) throw new Error(`the initial list did not sync: ${JSON.stringify(il.status)}`);
    const db = storageNow()?.dbPath;
    if (db) result.afterInitialList = await breakdown(db);
    // 2. queries
    result.queries = await queries(worker, informer, N, opts);
    // 3. a staged relist: a new snapshot, every pod at a new RV
    if (!opts["scale-no-relist"]) {
      let next;
      result.stagedRelist = await timedList(
        worker,
        server,
        informer,
        (s) => next && s.lastSyncResourceVersion === String(next.listRv) && s.cacheResourceVersion === String(next.listRv) && s.queueDepth === 0 && s.objects === N,
        timeoutMs,
        sampler?.heap,
        async () => {
          next = await server.configure({ listSize: N, watchEvents: 0 });
        },
      );
      const rl = result.stagedRelist;
      log(`scale: staged relist of ${N} (all changed): ${rl.ok ? `${rl.seconds} s` : "NOT DONE"}, RSS +${rl.memory.growthMB} MB, storage peak ${rl.storage.peakMB} MB at ${rl.storage.peakAtSeconds} s, after ${rl.storage.afterMB} MB`);
      const stats = await server.stats();
      result.stagedRelist.listRequests = stats.lists.filter((l) => !l.url.includes("bench-warmup")).map((l) => ({ url: l.url, items: l.items, MB: round(l.bytes / MB) }));
      if (db) result.afterStagedRelist = await breakdown(db);
    }
    result.ok = true;
  } catch (error) {
    result.ok = false;
    result.error = error.message;
    log(`scale failed: ${error.message}`);
  } finally {
    sampler?.heap.stop();
    sampler?.inspector.close();
    await worker.stop();
  }
  return result;
}

export function scaleRows(r) {
  if (!r.parameters) return [["scale", `FAILED: ${r.error}`, "", "", "", ""]];
  const N = r.parameters.pods;
  const rows = [];
  const list = (label, l) => {
    if (!l) return;
    rows.push([`scale ${N}: ${label} (s)`, l.ok ? l.seconds : "DNF", "", "", "", ""]);
    rows.push(["  runtime RSS growth / isolate heap peak (MB)", `+${l.memory.growthMB} / ${l.memory.isolateHeap?.peakUsedMB ?? "-"}`, "", "", "", ""]);
    rows.push(["  storage peak / after (MB)", `${l.storage.peakMB} / ${l.storage.afterMB}`, "", "", "", ""]);
  };
  list("initial list, time to synced", r.initialList);
  for (const q of r.queries ?? []) rows.push([`  ${q.name}: p50 / p99 ms`, `${q.ms.p50} / ${q.ms.p99}`, "", "", "", q.failures ? `${q.failures} failed` : ""]);
  list("staged relist, every pod changed", r.stagedRelist);
  if (r.error) rows.push(["scale", `FAILED: ${r.error}`, "", "", "", ""]);
  return rows;
}
