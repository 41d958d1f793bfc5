#!/usr/bin/env node
// `npm run bench`: edge-informer (wrangler dev, local workerd) against @kubernetes/client-node, on
// the same local stream server (bench/stream-server.mjs) and the same streams. See BENCHMARKS.md.
//
//   a. watch ingest, two scenarios (--ingest-mode adds|updates|both, default both):
//      adds:    M watch events after an empty list (10,000 pods ADDED, then MODIFIED); events/s.
//      updates: a list of U pods, then E MODIFIED events over those cached pods (the update path,
//               with its old object, runs for every event); events/s from the watch's arrival.
//      Ours vs client-node on the same stream in the same run, ratio reported for each.
//      With --clusters 1,4 (bench/clusters.mjs) the ingest is instead M adds on each of N clusters at
//      once in one Worker, for each N: per-cluster and aggregate events/s (no client-node side).
//   b. relist: a list of N ~3 KB pods; time to synced and peak memory growth, ours vs client-node.
//   c. fan-out (only with --only fanout; bench/fanout.mjs): S webhook subscriptions on one informer,
//      E events at a fixed rate, one subscriber down; deliveries/s and lag, ours vs client-node.
//   d. /k8s read API (only with --only k8s; bench/k8s.mjs): a list of N pods and a watch fan-out to W
//      watchers during churn, ours (/k8s) vs the fake API server (test/fake-apiserver) serving the same.
//   f. floor (only with --only floor; bench/floor/ingest.floor.ts): the pieces of durable ingest
//      (decode, transform, a SQLite write alone, applyWatch by batch size) measured inside workerd.
//   g. search (only with --only search; bench/search.mjs): GET /search/pods over C clusters × N pods,
//      p50/p99 of a page of L, next to the same query on one cluster (BENCHMARKS.md "Search across clusters").
//   e. scale (only with --only scale; bench/scale.mjs): one informer with N pods and a node index:
//      initial list, query latency at N (pages, namespace, selectors, ByIndex, get), a staged relist,
//      and the object's storage by table (BENCHMARKS.md "Scale: one informer with 1,000,000 pods").
//   i. isolation (only with --only isolation; bench/isolation.mjs): default's event latency while another
//      cluster of the same Worker is healthy, refuses connections, and relists through a 410 storm:
//      p50/p99 per phase and their ratio to the healthy phase (BENCHMARKS.md "Cluster isolation").
//   j. RBAC (only with --only rbac; bench/rbac.mjs): the RBAC authorizer's CPU per authorize and
//      listScope at a realistic cluster's size (500 ClusterRoles, 2,000 Roles, 5,000 RoleBindings over
//      1,000 namespaces, 50 ClusterRoleBindings), and a rebuild's (the lists' JSON.parse and the
//      index), in this Node process (BENCHMARKS.md "RBAC: CPU per request").
//   h. cost (only with --only cost; bench/cost.mjs): rows written and read per operation (an event, a
//      listed object, a delivery, an idle minute, a status call, a /k8s watch start and list page), as
//      test/cost/budgets.test.ts measures them, and their price (BENCHMARKS.md "Cost").
//
// Options: --events M (50000) --pods N (100000) --only ingest|relist|fanout|k8s --no-profile --no-heap
//          --ingest-mode adds|updates|both (both) --update-pods U (10000) --update-events E (100000)
//          --clusters N[,N…] (ingest with N clusters at once, e.g. 1,4)
//          --watch-framing buffered|event (buffered: ~64 KB HTTP chunks; event: one chunk per event,
//          as kube-apiserver writes a watch)
//          --profile-relist --ingest-timeout S (240) --relist-timeout S (420)
//          --relist-mode initial|both (initial; both: also a staged relist of the same, unchanged pods)
//          fan-out: --subscribers S (100) --events E (500 with --only fanout) --rate R (100 events/s)
//          --batch B (maxBatchSize, 1) --signing hmac|ed25519 (hmac) --down refused|503 --watch-pool P (1000) --fanout-timeout S (600)
//          --profile-fanout --skip-baseline
//          /k8s: --k8s-pods N (10000) --k8s-pod-bytes B (3000) --k8s-watchers W (100) --k8s-rate R (200)
//          --k8s-seconds T (25) --k8s-burst B (500) --k8s-list-runs (5) --k8s-page-runs (3) --k8s-timeout S (300)
//          --k8s-profile --k8s-relays N (WATCH_RELAYS; unset: wrangler.toml's)
//          scale: --pods N --scale-requests R (300) --scale-query-seconds S (60, per query kind)
//          --scale-timeout S (600, per list) --scale-no-relist
//          search: --search-clusters C (4) --search-pods N (10000) --search-limit L (100) --search-runs R (200)
//          rbac: --rbac-cluster-roles (500) --rbac-roles (2000) --rbac-role-bindings (5000)
//          --rbac-cluster-role-bindings (50) --rbac-namespaces (1000) --rbac-batches (15) --rbac-builds (15)
//          isolation: --isolation-samples S (60 a phase) --isolation-storm K (1: K 410 statuses and K ERROR events)
//          before/after: --compare REV [--rounds N (3)] runs the benchmarks the other options choose on commit
//          REV (a temporary worktree) and on the working tree, alternating, N rounds each; medians and
//          new/old to bench/results/compare.{md,json} (bench/compare.mjs; BENCHMARKS.md "Method")
// Everything listens on and talks to 127.0.0.1 only; every wait is bounded.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import {
  HeapSampler,
  Inspector,
  MB,
  RssSampler,
  cpuDelta,
  now,
  procCpu,
  procMemory,
  round,
  summarizeProfile,
} from "./lib.mjs";
import {
  NODE,
  RESULTS,
  ROOT,
  api,
  bundleWorker,
  children,
  log,
  machineInfo,
  pollStatus,
  profileRuntime,
  ratio,
  runtimeInspectorUrl,
  scanLog,
  setHardDeadline,
  startServer,
  startWorker,
  table,
} from "./harness.mjs";
import { FANOUT_OPTIONS, fanoutDeadlineMs, fanoutRows, runFanout } from "./fanout.mjs";
import { K8S_OPTIONS, k8sDeadlineMs, k8sRows, runK8s } from "./k8s.mjs";
import { SCALE_OPTIONS, runScale, scaleDeadlineMs, scaleRows } from "./scale.mjs";
import { SEARCH_OPTIONS, runSearch, searchDeadlineMs, searchRows } from "./search.mjs";
import { CLUSTERS_OPTIONS, clustersRows, parseClusterCounts, runClustersIngest } from "./clusters.mjs";
import { costDeadlineMs, costRows, runCost } from "./cost.mjs";
import { ISOLATION_OPTIONS, isolationDeadlineMs, isolationRows, runIsolation } from "./isolation.mjs";
import { RBAC_OPTIONS, rbacDeadlineMs, rbacRows, runRbac } from "./rbac.mjs";

const { values: opts } = parseArgs({
  options: {
    events: { type: "string" },
    pods: { type: "string", default: "100000" },
    only: { type: "string" },
    "no-profile": { type: "boolean", default: false },
    "no-heap": { type: "boolean", default: false },
    "profile-relist": { type: "boolean", default: false },
    "ingest-timeout": { type: "string", default: "240" },
    "ingest-mode": { type: "string", default: "both" },
    "update-pods": { type: "string", default: "10000" },
    "update-events": { type: "string", default: "100000" },
    "watch-framing": { type: "string", default: "buffered" },
    "relist-timeout": { type: "string", default: "420" },
    "relist-mode": { type: "string", default: "initial" },
    ...FANOUT_OPTIONS,
    ...K8S_OPTIONS,
    ...SCALE_OPTIONS,
    ...SEARCH_OPTIONS,
    ...CLUSTERS_OPTIONS,
    ...ISOLATION_OPTIONS,
    ...RBAC_OPTIONS,
    compare: { type: "string" },
    rounds: { type: "string" },
  },
});
if (opts.compare !== undefined) {
  const { runCompare } = await import("./compare.mjs");
  process.exit(await runCompare(process.argv.slice(2), opts));
}
let CLUSTER_COUNTS;
try {
  CLUSTER_COUNTS = parseClusterCounts(opts.clusters);
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
if (opts.only && !["ingest", "relist", "fanout", "k8s", "scale", "floor", "search", "cost", "isolation", "rbac"].includes(opts.only)) {
  process.stderr.write(`--only must be ingest, relist, fanout, k8s, scale, search, cost, isolation, rbac or floor (got '${opts.only}')\n`);
  process.exit(1);
}
if (opts.only === "floor") {
  // The pieces of durable ingest, measured inside workerd (bench/floor/ingest.floor.ts): a vitest run.
  const vitest = path.join(ROOT, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(process.execPath, [vitest, "run", "--config", "bench/floor/vitest.config.ts"], { stdio: "inherit" });
  child.on("exit", (code) => process.exit(code ?? 1));
}
if (!["adds", "updates", "both"].includes(opts["ingest-mode"])) {
  process.stderr.write(`--ingest-mode must be adds, updates or both (got '${opts["ingest-mode"]}')\n`);
  process.exit(1);
}
const RUN_FANOUT = opts.only === "fanout";
const RUN_K8S = opts.only === "k8s";
const RUN_SCALE = opts.only === "scale";
const RUN_SEARCH = opts.only === "search";
const RUN_COST = opts.only === "cost";
const RUN_ISOLATION = opts.only === "isolation";
const RUN_RBAC = opts.only === "rbac";
const M = Number(opts.events ?? (RUN_FANOUT ? 500 : 50_000));
const N = Number(opts.pods);
const RUN_INGEST = !opts.only || opts.only === "ingest";
const RUN_RELIST = !opts.only || opts.only === "relist";
const UPDATE_PODS = Number(opts["update-pods"]);
const UPDATE_EVENTS = Number(opts["update-events"]);
const RUN_ADDS = opts["ingest-mode"] !== "updates";
const RUN_UPDATES = opts["ingest-mode"] !== "adds";
const TARGETS = { ingestRatioMin: 0.5, ingestRatioGoal: 1.0, relistGrowthMaxMB: 64 };

/**
 * The ingest scenarios. `events`: how many watch events are timed; `done(status, scenario)`: our
 * informer has applied them all; `clientMode`: what client-node's runner counts.
 */
const INGEST = {
  adds: {
    name: "adds",
    label: `watch ingest, ${M} events`,
    events: M,
    config: { listSize: 0, watchEvents: M, watchFraming: opts["watch-framing"] },
    clientMode: "ingest",
    done: (s) => s.eventLog.tail >= M && s.queueDepth === 0,
    profileFile: "ingest.cpuprofile",
    logLabel: "ingest",
  },
  updates: {
    name: "updates",
    label: `watch ingest, update-heavy: ${UPDATE_PODS} listed, ${UPDATE_EVENTS} MODIFIED`,
    events: UPDATE_EVENTS,
    // every event replaces a listed (cached) pod: watchFirstPod 0, a pool the size of the list
    config: { listSize: UPDATE_PODS, watchEvents: UPDATE_EVENTS, watchPool: UPDATE_PODS, watchFirstPod: 0, watchFraming: opts["watch-framing"] },
    clientMode: "updates",
    done: (s, sc) => s.synced && Number(s.cacheResourceVersion) >= sc.listRv + UPDATE_EVENTS && s.queueDepth === 0,
    profileFile: "ingest-updates.cpuprofile",
    logLabel: "ingest-updates",
  },
};
// the whole run; past it, everything is stopped (a fan-out run sets its own, from its timeouts)
const HARD_DEADLINE_MS = RUN_FANOUT ? fanoutDeadlineMs(opts) : RUN_K8S ? k8sDeadlineMs(opts) : RUN_SCALE ? scaleDeadlineMs(opts) : RUN_SEARCH ? searchDeadlineMs() : RUN_COST ? costDeadlineMs() : RUN_ISOLATION ? isolationDeadlineMs() : RUN_RBAC ? rbacDeadlineMs() : 15 * 60_000;
setHardDeadline(HARD_DEADLINE_MS);

// ---------------------------------------------------------------------------------------------
// client-node, in its own process

async function runClientNode(serverUrl, mode, count, timeoutSeconds) {
  const child = spawn(
    NODE,
    [path.join(ROOT, "bench", "client-node-runner.mjs"), "--server", serverUrl, "--mode", mode, "--count", String(count), "--timeout-seconds", String(timeoutSeconds)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const handle = { pid: child.pid };
  children.add(handle);
  const sampler = new RssSampler(child.pid, 50);
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const code = await new Promise((resolve) => child.on("exit", resolve));
  sampler.stop();
  children.delete(handle);
  const line = out.trim().split("\n").pop();
  let result;
  try {
    result = JSON.parse(line);
  } catch {
    throw new Error(`client-node runner (${mode}) exited with ${code} and no result:\n${(out + err).slice(-3000)}`);
  }
  result.stderr = err.slice(-2000) || undefined;
  result.procSamples = sampler.samples.length;
  result.procPeakRss = sampler.peakBetween(0)?.rss ?? null;
  return result;
}

// ---------------------------------------------------------------------------------------------
// a. Watch ingest

/** Our ingest, RUNS times on fresh wrangler instances (twice if the first takes over 30 s); the median is reported. */
const OURS_INGEST_RUNS = 3;

async function ingestOursRepeated(server, bundle, ing) {
  const runs = [];
  for (let i = 0; i < OURS_INGEST_RUNS; i++) {
    const last = i === OURS_INGEST_RUNS - 1 || (runs.length > 0 && (runs[0].seconds ?? Infinity) > 30);
    const r = await ingestOurs(server, bundle, ing, { profile: last && !opts["no-profile"] });
    runs.push(r);
    if (!r.ok || last) break;
  }
  const ok = runs.filter((r) => r.ok);
  const sorted = [...ok].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond);
  const median = sorted.length ? sorted[Math.floor(sorted.length / 2)] : runs[runs.length - 1];
  const profile = runs.find((r) => r.profile)?.profile;
  return {
    ...median,
    ok: ok.length === runs.length,
    ...(profile ? { profile } : {}),
    runs: runs.map((r) => ({
      ok: r.ok,
      seconds: r.seconds,
      eventsPerSecond: r.eventsPerSecond,
      logProblems: r.log?.problemCount ?? null,
      ...(r.error ? { error: r.error } : {}),
    })),
    log: { ...median.log, problemsInAllRuns: runs.reduce((a, r) => a + (r.log?.problemCount ?? 0), 0) },
  };
}

async function ingestOurs(server, bundle, ing, { profile: withProfile }) {
  const M = ing.events;
  const sc = await server.configure(ing.config);
  const worker = await startWorker(bundle, ing.logLabel, server.url);
  log(`ours: wrangler dev ready in ${round(worker.readyMs / 1000)} s (runtime workerd pid ${worker.runtimePid})`);
  const rss = new RssSampler(worker.runtimePid, 50);
  const cpu0 = procCpu(worker.runtimePid);
  const result = { scenario: sc };
  try {
    const putAt = now();
    await api(worker, "PUT", "/informers/bench", { resource: "pods", watchTimeoutSeconds: 600 });
    const polled = await pollStatus(worker, "bench", (s) => ing.done(s, sc), {
      timeoutMs: Number(opts["ingest-timeout"]) * 1000,
      server,
    });
    const cpu1 = procCpu(worker.runtimePid);
    rss.stop();
    const stats = await server.stats();
    const watch = stats.watches.find((w) => w.events > 0) ?? stats.watches[0];
    const start = watch?.arrivedAt ?? putAt;
    const seconds = (polled.at - start) / 1000;
    Object.assign(result, {
      ok: polled.ok,
      stalled: polled.stalled ?? false,
      eventsApplied: ing.name === "adds" ? (polled.status?.eventLog.tail ?? 0) : Math.max(0, Number(polled.status?.cacheResourceVersion ?? 0) - sc.listRv),
      seconds: round(seconds, 2),
      eventsPerSecond: polled.ok ? round(M / seconds, 0) : null,
      // the server cannot write faster than ours reads (backpressure): this is when ours had read everything
      serverLastEventWrittenSeconds: watch?.lastEventWrittenAt ? round((watch.lastEventWrittenAt - start) / 1000, 2) : null,
      putToWatchSeconds: round((start - putAt) / 1000, 2),
      watchRequests: stats.watches.length,
      listRequests: stats.lists.length,
      listToWatchSeconds: stats.lists[0] && watch ? round((watch.arrivedAt - stats.lists[0].arrivedAt) / 1000, 2) : null,
      runtimeCpuSeconds: cpuDelta(cpu0, cpu1),
      runtimeRss: {
        baselineMB: round(rss.samples[0].rss / MB),
        peakMB: round(rss.peakBetween(0).rss / MB),
        hwmMB: round(rss.last().hwm / MB),
        everyTenSeconds: rss.series(start, 10_000),
      },
      status: polled.status,
      polls: { count: polled.polls, errors: polled.pollErrors, lastError: polled.lastPollError, latencyMs: polled.pollLatencyMs },
      progress: polled.series.map((p) => ({ ...p, t: round((p.t - start) / 1000, 1) })),
    });
    log(
      polled.ok
        ? `ours: ${M} events in ${result.seconds} s = ${result.eventsPerSecond} events/s`
        : `ours: NOT DONE (${polled.stalled ? "stalled: no progress for 60 s" : `timeout ${opts["ingest-timeout"]} s`}): ${result.eventsApplied}/${M} events applied, status ${JSON.stringify(polled.status)}`,
    );
    if (withProfile) {
      // A second informer replays the same stream; its first 10 s are profiled (the figures above are unprofiled).
      try {
        const profile = await profileRuntime(worker.runtimePid, 10_000, async () => {
          await api(worker, "PUT", "/informers/profiled", { resource: "pods", watchTimeoutSeconds: 600 });
        });
        fs.writeFileSync(path.join(RESULTS, ing.profileFile), JSON.stringify(profile));
        const status = await api(worker, "GET", "/informers/profiled");
        result.profile = { ...summarizeProfile(profile), eventsDuringProfile: status.eventLog.tail, file: `bench/results/${ing.profileFile}` };
        log(`ours: CPU profile of 10 s of ingest written to bench/results/${ing.profileFile}`);
      } catch (error) {
        result.profile = { error: error.message };
      }
    }
  } catch (error) {
    Object.assign(result, { ok: false, error: error.message });
    log(`ours: ingest failed: ${error.message}`);
  } finally {
    rss.stop();
    await worker.stop();
    result.log = scanLog(worker.logPath);
  }
  return result;
}

/** The server's own ceiling: a consumer that only counts lines (how fast the stream can be produced here). */
async function ingestCeiling(server) {
  await server.configure({ listSize: 0, watchEvents: M });
  const abort = new AbortController();
  const t0 = now();
  const response = await fetch(`${server.url}/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=60`, { signal: abort.signal });
  const reader = response.body.getReader();
  let lines = 0;
  while (lines < M) {
    const { done, value } = await reader.read();
    if (done) break;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines++;
  }
  const seconds = (now() - t0) / 1000;
  abort.abort();
  return { events: lines, seconds: round(seconds, 2), eventsPerSecond: round(lines / seconds, 0) };
}

/** client-node's ingest is short and noisy: RUNS fresh processes, the median is reported. */
const CLIENT_NODE_INGEST_RUNS = 5;

async function ingestClientNode(server, ing) {
  const M = ing.events;
  const runs = [];
  for (let i = 0; i < CLIENT_NODE_INGEST_RUNS; i++) {
    const sc = await server.configure(ing.config);
    const r = await runClientNode(server.url, ing.clientMode, M, Number(opts["ingest-timeout"]));
    const stats = await server.stats();
    const watch = stats.watches.find((w) => w.events > 0) ?? stats.watches[0];
    const ok = r.outcome === "done";
    const seconds = ok ? (r.reachedAt - watch.arrivedAt) / 1000 : null;
    runs.push({
      scenario: sc,
      ok,
      callbacks: r.adds + r.updates,
      adds: r.adds,
      updates: r.updates,
      seconds: round(seconds, 2),
      eventsPerSecond: ok ? round(M / seconds, 0) : null,
      serverLastEventWrittenSeconds: watch?.lastEventWrittenAt ? round((watch.lastEventWrittenAt - watch.arrivedAt) / 1000, 2) : null,
      watchRequests: stats.watches.length,
      errors: r.errors,
      memory: r.memory,
    });
    log(ok ? `client-node run ${i + 1}: ${M} events in ${round(seconds, 2)} s = ${round(M / seconds, 0)} events/s` : `client-node run ${i + 1}: ${r.outcome}`);
  }
  const sorted = [...runs].sort((a, b) => (a.eventsPerSecond ?? 0) - (b.eventsPerSecond ?? 0));
  const median = sorted[Math.floor(sorted.length / 2)];
  return { ...median, runs: runs.map((r) => ({ seconds: r.seconds, eventsPerSecond: r.eventsPerSecond })) };
}

// ---------------------------------------------------------------------------------------------
// b. Relist

async function relistOurs(server, bundle) {
  const sc = await server.configure({ listSize: N, watchEvents: 0 });
  const worker = await startWorker(bundle, "relist", server.url);
  log(`ours: wrangler dev ready in ${round(worker.readyMs / 1000)} s (runtime workerd pid ${worker.runtimePid})`);
  const result = { scenario: sc };
  let rss;
  let heap;
  let inspector;
  try {
    // Warm-up: load the informer code and SQL once (an empty namespace), so the baseline includes it.
    await api(worker, "PUT", "/informers/warmup", { resource: "pods", namespace: "bench-warmup", watchTimeoutSeconds: 600 });
    const warm = await pollStatus(worker, "warmup", (s) => s.synced && s.watch.state === "watching", { timeoutMs: 30_000, intervalMs: 200 });
    if (!warm.ok) {
      throw new Error(
        `the warm-up informer (an empty namespace) did not sync in 30 s: status ${JSON.stringify(warm.status)}, ` +
          `last poll error ${warm.lastPollError}; see ${path.relative(ROOT, worker.logPath)}`,
      );
    }
    if (!opts["no-heap"]) {
      try {
        const url = await runtimeInspectorUrl(worker.runtimePid);
        if (!url) throw new Error("the runtime's inspector was not found");
        // workerd's inspector sometimes accepts a session that then never answers: check it does (idle now).
        for (let attempt = 0; attempt < 4 && !heap; attempt++) {
          inspector?.close();
          inspector = await Inspector.connect(url);
          try {
            await inspector.call("Runtime.getHeapUsage", {}, 3_000);
            heap = new HeapSampler(inspector, 200);
          } catch (error) {
            result.heapError = `inspector session did not answer: ${error.message}`;
          }
        }
        if (heap) delete result.heapError;
      } catch (error) {
        result.heapError = error.message;
      }
    }
    rss = new RssSampler(worker.runtimePid, 50);
    await sleep(2_000);
    const baselineEnd = now();
    const baseline = rss.medianBetween(0, baselineEnd);
    const hwmBefore = rss.last().hwm;
    const heapBaseline = heap?.samples.length ? heap.samples[heap.samples.length - 1].used : null;
    const cpu0 = procCpu(worker.runtimePid);
    const putAt = now();
    await api(worker, "PUT", "/informers/relist", { resource: "pods", watchTimeoutSeconds: 600 });
    const polled = await pollStatus(worker, "relist", (s) => s.synced && s.objects === N && s.queueDepth === 0, {
      timeoutMs: Number(opts["relist-timeout"]) * 1000,
      server,
    });
    const cpu1 = procCpu(worker.runtimePid);
    await sleep(3_000); // is memory given back after the sync?
    rss.stop();
    heap?.stop();
    const hwmAfter = procMemory(worker.runtimePid)?.hwm ?? rss.last().hwm;
    const peak = rss.peakBetween(putAt);
    const stats = await server.stats();
    const lists = stats.lists.filter((l) => !l.url.includes("/namespaces/bench-warmup/"));
    const first = lists[0];
    const seconds = (polled.at - putAt) / 1000;
    const heapPeak = heap?.samples.filter((s) => s.t >= putAt).reduce((a, s) => Math.max(a, s.used), 0) ?? null;
    // The true peak: VmHWM if it rose during the relist (it catches what 50 ms sampling misses).
    const truePeak = Math.max(peak.rss, hwmAfter > hwmBefore ? hwmAfter : 0);
    Object.assign(result, {
      ok: polled.ok,
      stalled: polled.stalled ?? false,
      objects: polled.status?.objects ?? 0,
      seconds: round(seconds, 2),
      listRequests: lists.map((l) => ({
        url: l.url,
        items: l.items,
        MB: round(l.bytes / MB),
        arrivedSeconds: round((l.arrivedAt - putAt) / 1000, 2),
        lastByteSeconds: l.lastByteAt ? round((l.lastByteAt - putAt) / 1000, 2) : null,
        error: l.error,
      })),
      watchRequests: stats.watches.filter((w) => !w.url.includes("/namespaces/bench-warmup/")).length,
      phases: first
        ? {
            putToListSeconds: round((first.arrivedAt - putAt) / 1000, 2),
            // ours reads the body at its own pace (backpressure): the last byte left the server when ours had read it all
            listBodyReadSeconds: first.lastByteAt ? round((first.lastByteAt - first.arrivedAt) / 1000, 2) : null,
            afterListToSyncedSeconds: first.lastByteAt ? round((polled.at - first.lastByteAt) / 1000, 2) : null,
          }
        : null,
      runtimeCpuSeconds: cpuDelta(cpu0, cpu1),
      memory: {
        samples: rss.samples.length,
        baselineMB: round(baseline / MB),
        peakSampledMB: round(peak.rss / MB),
        peakSampledAtSeconds: round((peak.t - putAt) / 1000, 1),
        vmHwmBeforeMB: round(hwmBefore / MB),
        vmHwmAfterMB: round(hwmAfter / MB),
        atListBodyEndMB: first?.lastByteAt ? round(rss.at(first.lastByteAt).rss / MB) : null,
        threeSecondsAfterSyncMB: round(rss.last().rss / MB),
        everySecond: rss.series(putAt, 1_000),
        growthMB: round((truePeak - baseline) / MB),
        isolateHeap: heap?.samples.length
          ? {
              source: "Runtime.getHeapUsage over the runtime's inspector",
              samples: heap.samples.length,
              errors: heap.errors,
              maxCallLatencyMs: round(heap.maxLatencyMs, 0),
              baselineMB: round(heapBaseline / MB),
              peakUsedMB: round(heapPeak / MB),
              growthMB: heapBaseline !== null ? round((heapPeak - heapBaseline) / MB) : null,
              // What V8 holds from the system for the heap (used + free space it keeps): its share of the RSS.
              peakTotalMB: round(Math.max(...heap.samples.map((s) => s.total)) / MB),
              baselineTotalMB: round(heap.samples[0].total / MB),
            }
          : {
              unavailable: heap
                ? `the inspector session stopped answering (${heap.errors} failed calls, none answered)`
                : (result.heapError ?? "disabled (--no-heap)"),
            },
      },
      status: polled.status,
      polls: { count: polled.polls, errors: polled.pollErrors, lastError: polled.lastPollError, latencyMs: polled.pollLatencyMs },
      progress: polled.series.map((p) => ({ ...p, t: round((p.t - putAt) / 1000, 1) })),
    });
    log(
      polled.ok
        ? `ours: relist of ${N} in ${result.seconds} s, runtime RSS ${result.memory.baselineMB} → peak ${round(truePeak / MB)} MB (+${result.memory.growthMB} MB)`
        : `ours: NOT SYNCED (${polled.stalled ? "stalled: no progress for 60 s" : `timeout ${opts["relist-timeout"]} s`}): ${result.objects}/${N} objects, status ${JSON.stringify(polled.status)}`,
    );
    if (polled.ok && opts["relist-mode"] === "both") result.stagedUnchanged = await stagedRelistUnchanged(worker, server);
    if (opts["profile-relist"]) {
      // A second informer relists the same pods; its first 20 s are profiled (the figures above are unprofiled).
      try {
        inspector?.close();
        inspector = undefined;
        const profile = await profileRuntime(worker.runtimePid, 20_000, async () => {
          await api(worker, "PUT", "/informers/profiled", { resource: "pods", watchTimeoutSeconds: 600 });
        });
        fs.writeFileSync(path.join(RESULTS, "relist.cpuprofile"), JSON.stringify(profile));
        result.profile = { ...summarizeProfile(profile), file: "bench/results/relist.cpuprofile" };
        log("ours: CPU profile of 20 s of a second relist written to bench/results/relist.cpuprofile");
      } catch (error) {
        result.profile = { error: error.message };
      }
    }
  } catch (error) {
    Object.assign(result, { ok: false, error: error.message });
    log(`ours: relist failed: ${error.message}`);
  } finally {
    rss?.stop();
    heap?.stop();
    inspector?.close();
    await worker.stop();
    result.log = scanLog(worker.logPath);
  }
  return result;
}

/**
 * `--relist-mode both`: after the initial list, a later relist of the same snapshot, staged over
 * the populated cache (src/cache/delta-fifo-replace.ts): the spec's label selector changes to one
 * the stream server ignores ("app", every pod has it), so the informer restarts and lists again at
 * RV "" and every pod comes back unchanged. Time = PUT to synced with an empty queue after the
 * second list's last byte.
 */
async function stagedRelistUnchanged(worker, server) {
  const listsBefore = (await server.stats()).lists.length;
  const cpu0 = procCpu(worker.runtimePid);
  const putAt = now();
  await api(worker, "PUT", "/informers/relist", { resource: "pods", labelSelector: "app", watchTimeoutSeconds: 600 });
  const deadline = putAt + Number(opts["relist-timeout"]) * 1000;
  for (;;) {
    const status = await api(worker, "GET", "/informers/relist");
    const list = (await server.stats()).lists[listsBefore];
    if (list?.lastByteAt && status.synced && status.objects === N && status.queueDepth === 0) {
      const result = { ok: true, seconds: round((now() - putAt) / 1000, 2), runtimeCpuSeconds: cpuDelta(cpu0, procCpu(worker.runtimePid)) };
      log(`ours: staged relist of ${N} unchanged pods in ${result.seconds} s (runtime CPU ${result.runtimeCpuSeconds.total} s)`);
      return result;
    }
    if (now() > deadline) return { ok: false, status };
    await sleep(100);
  }
}

async function relistClientNode(server) {
  const sc = await server.configure({ listSize: N, watchEvents: 0 });
  const r = await runClientNode(server.url, "relist", N, Number(opts["relist-timeout"]));
  const stats = await server.stats();
  const list = stats.lists[0];
  const ok = r.outcome === "done";
  const baseline = r.memory.baselineRssMB;
  const peakMB = Math.max(r.memory.peakRssMB, round((r.procPeakRss ?? 0) / MB), r.memory.vmHwmMB ?? 0);
  const result = {
    scenario: sc,
    ok,
    objects: r.cachedObjects,
    seconds: ok ? round((r.reachedAt - r.startedAt) / 1000, 2) : null,
    // The process's CPU to the last callback: with the runtime's CPU, a ratio the machine's load moves less.
    cpuSeconds: r.cpuSeconds ?? null,
    listResolvedSeconds: r.listResolvedAt ? round((r.listResolvedAt - r.startedAt) / 1000, 2) : null,
    connectSeconds: r.connectAt ? round((r.connectAt - r.startedAt) / 1000, 3) : null,
    listRequest: list
      ? { url: list.url, MB: round(list.bytes / MB), lastByteSeconds: list.lastByteAt ? round((list.lastByteAt - r.startedAt) / 1000, 2) : null }
      : null,
    errors: r.errors,
    memory: {
      baselineMB: baseline,
      peakSampledInProcessMB: r.memory.peakRssMB,
      inProcessSamples: r.memory.samples,
      peakSampledFromProcMB: round((r.procPeakRss ?? 0) / MB),
      procSamples: r.procSamples,
      vmHwmMB: r.memory.vmHwmMB ?? null,
      growthMB: round(peakMB - baseline),
      heapUsedBaselineMB: r.memory.baselineHeapUsedMB,
      heapUsedAfterSyncMB: r.memory.finalHeapUsedMB,
    },
  };
  log(ok ? `client-node: relist of ${N} in ${result.seconds} s, RSS ${baseline} → peak ${round(peakMB)} MB (+${result.memory.growthMB} MB)` : `client-node: ${r.outcome}`);
  return result;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const t0 = now();
  fs.mkdirSync(RESULTS, { recursive: true });
  const machine = await machineInfo();
  log(`machine: ${machine.nproc} cores, ${machine.memoryGiB} GiB, node ${machine.node}, ${machine.workerd}, client-node ${machine.clientNode}`);
  const bundle = await bundleWorker();
  log(`worker bundled: ${bundle.bytes} bytes, sha256 ${bundle.sha256}`);
  // the /k8s benchmark brings its own upstream (the fake API server)
  const server = RUN_K8S || RUN_SEARCH || RUN_COST || RUN_ISOLATION || RUN_RBAC ? null : await startServer();
  if (server) log(`stream server on ${server.url}`);

  const results = { machine, bundle: { bytes: bundle.bytes, sha256: bundle.sha256 }, parameters: { watchEvents: M, listSize: N }, targets: TARGETS };
  // A phase that throws (wrangler does not start, the build is broken, …) is recorded, not fatal.
  const safe = async (what, fn) => {
    try {
      return await fn();
    } catch (error) {
      log(`${what} failed: ${error.message}`);
      return { ok: false, error: error.message };
    }
  };
  if (RUN_FANOUT) {
    results.parameters = { watchEvents: M };
    results.fanout = await safe("fan-out", () => runFanout({ opts, events: M, server, bundle, safe }));
  }
  if (RUN_K8S) {
    results.parameters = {};
    results.k8s = await safe("/k8s", () => runK8s({ opts, bundle }));
    fs.writeFileSync(path.join(RESULTS, "k8s.json"), `${JSON.stringify({ machine, bundle: results.bundle, ...results.k8s }, null, 2)}\n`);
  }
  if (RUN_SEARCH) {
    results.parameters = {};
    results.search = await safe("search", () => runSearch({ opts, bundle }));
    fs.writeFileSync(path.join(RESULTS, "search.json"), `${JSON.stringify({ machine, bundle: results.bundle, ...results.search }, null, 2)}\n`);
  }
  if (RUN_ISOLATION) {
    results.parameters = {};
    results.isolation = await safe("isolation", () => runIsolation({ opts, bundle }));
    fs.writeFileSync(path.join(RESULTS, "isolation.json"), `${JSON.stringify({ machine, bundle: results.bundle, ...results.isolation }, null, 2)}\n`);
  }
  if (RUN_COST) {
    results.parameters = {};
    results.cost = await safe("cost", () => runCost());
    fs.writeFileSync(path.join(RESULTS, "cost.json"), `${JSON.stringify({ machine, bundle: results.bundle, ...results.cost }, null, 2)}\n`);
  }
  if (RUN_RBAC) {
    results.parameters = {};
    results.rbac = await safe("rbac", () => runRbac({ opts }));
    fs.writeFileSync(path.join(RESULTS, "rbac.json"), `${JSON.stringify({ machine, ...results.rbac }, null, 2)}\n`);
  }
  if (RUN_SCALE) {
    results.parameters = { listSize: N };
    results.scale = await safe("scale", () => runScale({ opts, pods: N, server, bundle }));
    fs.writeFileSync(path.join(RESULTS, `scale-${N}.json`), `${JSON.stringify({ machine, bundle: results.bundle, ...results.scale }, null, 2)}\n`);
  }
  const ingestPart = async (ing) => {
    const ours = await safe(`ours (ingest ${ing.name})`, () => ingestOursRepeated(server, bundle, ing));
    const clientNode = await safe(`client-node (ingest ${ing.name})`, () => ingestClientNode(server, ing));
    const r = ratio(ours.eventsPerSecond, clientNode.eventsPerSecond);
    log(`${ing.label}: ours ${ours.eventsPerSecond ?? "DNF"} events/s, client-node ${clientNode.eventsPerSecond ?? "DNF"} events/s, ratio ${r ?? "-"}`);
    return {
      scenario: ing.config,
      ours,
      clientNode,
      ratio: r,
      target: `ours/client-node >= ${TARGETS.ingestRatioMin} (goal >= ${TARGETS.ingestRatioGoal})`,
      pass: r !== null && r >= TARGETS.ingestRatioMin,
      goalMet: r !== null && r >= TARGETS.ingestRatioGoal,
    };
  };
  if (RUN_INGEST && CLUSTER_COUNTS) {
    results.ingestClusters = await safe("ingest with several clusters", () =>
      runClustersIngest({ counts: CLUSTER_COUNTS, server, bundle, events: M, timeoutSeconds: Number(opts["ingest-timeout"]), watchFraming: opts["watch-framing"] }),
    );
    fs.writeFileSync(path.join(RESULTS, "ingest-clusters.json"), `${JSON.stringify({ machine, bundle: results.bundle, ...results.ingestClusters }, null, 2)}\n`);
  }
  if (RUN_INGEST && RUN_ADDS && !CLUSTER_COUNTS) {
    log(`a. watch ingest (adds): ${M} events`);
    results.ingest = await ingestPart(INGEST.adds);
    const ceiling = await safe("server ceiling", () => ingestCeiling(server));
    log(`stream server alone (line-counting consumer): ${ceiling.eventsPerSecond} events/s`);
    results.ingest.serverCeiling = ceiling;
  }
  if (RUN_INGEST && RUN_UPDATES && !CLUSTER_COUNTS) {
    log(`a'. watch ingest (updates): ${UPDATE_PODS} pods listed, then ${UPDATE_EVENTS} MODIFIED events`);
    results.ingestUpdates = await ingestPart(INGEST.updates);
    results.parameters.updatePods = UPDATE_PODS;
    results.parameters.updateEvents = UPDATE_EVENTS;
  }
  if (RUN_RELIST) {
    log(`b. relist: ${N} pods`);
    const ours = await safe("ours (relist)", () => relistOurs(server, bundle));
    const clientNode = await safe("client-node (relist)", () => relistClientNode(server));
    results.relist = {
      ours,
      clientNode,
      timeRatio: ratio(ours.ok ? ours.seconds : null, clientNode.seconds),
      memoryRatio: ratio(ours.ok ? ours.memory.growthMB : null, clientNode.memory?.growthMB),
      target: `ours: synced, peak memory growth < ${TARGETS.relistGrowthMaxMB} MB`,
      pass: Boolean(ours.ok && ours.memory.growthMB < TARGETS.relistGrowthMaxMB),
    };
  }
  results.totalSeconds = round((now() - t0) / 1000, 1);
  // Other work on the machine (tests of other sessions) competes for the 2 cores: say how busy it was.
  results.loadAverageAtEnd = os.loadavg().map((x) => round(x, 2));
  fs.writeFileSync(path.join(RESULTS, "latest.json"), `${JSON.stringify(results, null, 2)}\n`);

  const rows = [["benchmark", "edge-informer (ours)", "client-node", "ours/client-node", "target", "result"]];
  for (const [part, ing] of [[results.ingest, INGEST.adds], [results.ingestUpdates, INGEST.updates]]) {
    if (!part) continue;
    const { ours, clientNode, ratio: r } = part;
    rows.push([
      `${ing.label} (events/s)`,
      ours.ok ? ours.eventsPerSecond : `DNF (${ours.eventsApplied ?? 0}/${ing.events})`,
      clientNode.eventsPerSecond ?? "DNF",
      r ?? "-",
      `>= ${TARGETS.ingestRatioMin} (goal >= 1)`,
      part.pass ? (part.goalMet ? "PASS (goal met)" : "PASS") : "FAIL",
    ]);
    rows.push(["  time (s)", ours.seconds, clientNode.seconds, ratio(ours.seconds, clientNode.seconds) ?? "-", "", ""]);
  }
  if (results.relist) {
    const { ours, clientNode } = results.relist;
    rows.push([`relist, ${N} pods: time to synced (s)`, ours.ok ? ours.seconds : `DNF (${ours.objects ?? 0}/${N})`, clientNode.seconds ?? "DNF", results.relist.timeRatio ?? "-", "", ""]);
    rows.push(["  CPU to synced (s): runtime / process", ours.runtimeCpuSeconds?.total ?? "-", clientNode.cpuSeconds?.total ?? "-", ratio(ours.runtimeCpuSeconds?.total, clientNode.cpuSeconds?.total) ?? "-", "", ""]);
    if (ours.stagedUnchanged?.ok) rows.push(["  staged relist, unchanged (s)", ours.stagedUnchanged.seconds, "", "", "", ""]);
    rows.push([
      "  peak memory growth (MB)",
      ours.memory?.growthMB ?? "-",
      clientNode.memory?.growthMB ?? "-",
      results.relist.memoryRatio ?? "-",
      `< ${TARGETS.relistGrowthMaxMB} MB`,
      results.relist.pass ? "PASS" : "FAIL",
    ]);
    const range = (m) => (m ? `${m.baselineMB} → ${round(m.baselineMB + m.growthMB)}` : "-");
    rows.push(["  baseline → peak RSS (MB)", range(ours.memory), range(clientNode.memory), "", "", ""]);
    const ih = ours.memory?.isolateHeap;
    if (ih && ih.peakUsedMB !== undefined) {
      const cn = clientNode.memory ? `${clientNode.memory.heapUsedBaselineMB} → ${clientNode.memory.heapUsedAfterSyncMB} (after sync)` : "-";
      rows.push(["  isolate heap used, baseline → peak (MB)", `${ih.baselineMB} → ${ih.peakUsedMB}`, cn, "", "", ""]);
    }
  }
  if (results.fanout) {
    if (results.fanout.parameters) rows.push(...fanoutRows(results.fanout));
    else rows.push(["fan-out", `FAILED: ${results.fanout.error}`, "", "", "", "FAIL"]);
  }
  if (results.k8s) {
    if (RUN_K8S) rows.splice(0, 1); // its own header: ours vs the fake API server
    rows.push(...k8sRows(results.k8s));
  }
  if (results.scale) rows.push(...scaleRows(results.scale));
  if (results.search) {
    rows.splice(0, 1); // its own header: all clusters vs one
    rows.push(...searchRows(results.search));
  }
  if (results.ingestClusters?.runs) rows.push(...clustersRows(results.ingestClusters));
  if (results.isolation) {
    rows.splice(0, 1); // its own header: phases of beta against the quiet one
    rows.push(...isolationRows(results.isolation));
  }
  if (results.cost) {
    rows.splice(0, 1); // its own header: rows per operation
    rows.push(...costRows(results.cost));
  }
  if (results.rbac) {
    rows.splice(0, 1); // its own header: CPU per call
    rows.push(...rbacRows(results.rbac));
  }
  process.stdout.write(`\n${table(rows)}\n\nfull results: bench/results/latest.json (total ${results.totalSeconds} s)\n`);
  for (const [name, part] of [["ingest", results.ingest?.ours], ["ingest-updates", results.ingestUpdates?.ours], ["relist", results.relist?.ours], ["fanout", results.fanout?.ours]]) {
    if (part?.error) process.stdout.write(`ours (${name}) failed: ${part.error}\n`);
    if (part?.log?.problemCount) {
      process.stdout.write(`wrangler ${name} log (bench/results/wrangler-${name}.log): ${part.log.problemCount} suspicious lines, e.g. ${part.log.problems[0]}\n`);
    }
  }
  if (results.k8s && !results.k8s.ok) {
    const k = results.k8s;
    const problems = [k.error, ...(k.list?.problems ?? []), ...(k.ingestProblems ?? []), ...["fake", "ours"].flatMap((s) => [k.watch?.[s]?.error, ...(k.watch?.[s]?.problems ?? [])].map((x) => x && `${s}: ${x}`))].filter(Boolean);
    process.stdout.write(`\n/k8s BENCHMARK PROBLEMS:\n${problems.map((x) => `  - ${x}`).join("\n")}\n`);
    return 1;
  }
  if (results.cost && !results.cost.ok) {
    process.stdout.write(`\nCOST MEASUREMENT FAILED: ${results.cost.error}\n`);
    return 1;
  }
  if (results.rbac && !results.rbac.ok) {
    process.stdout.write(`\nRBAC BENCHMARK FAILED: ${results.rbac.error}\n`);
    return 1;
  }
  if (results.isolation && !results.isolation.ok) {
    process.stdout.write(`\nISOLATION BENCHMARK FAILED: ${results.isolation.error ?? "default's informers restarted or relisted, or beta's storm did not happen"}\n`);
    return 1;
  }
  if (results.search && !results.search.ok) {
    process.stdout.write(`\nSEARCH BENCHMARK FAILED: ${results.search.error}\n`);
    return 1;
  }
  if (results.fanout && !results.fanout.ok) {
    // Lost, duplicated or reordered deliveries make the figures meaningless: say so loudly.
    for (const [side, r] of [["ours", results.fanout.ours], ["client-node", results.fanout.clientNode]]) {
      if (!r || r.ok || r.skipped) continue;
      process.stdout.write(`\nFAN-OUT FAILED (${side}): ${r.error ?? ""}\n${(r.problems ?? []).map((x) => `  - ${x}`).join("\n")}\n`);
    }
    return 1;
  }
  return 0;
}

if (opts.only !== "floor") {
  main()
    .then((code) => process.exit(code ?? 0))
    .catch((error) => {
      process.stderr.write(`bench failed: ${error.stack ?? error}\n`);
      process.exit(1);
    });
}
