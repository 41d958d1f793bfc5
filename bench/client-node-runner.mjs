#!/usr/bin/env node
// One @kubernetes/client-node informer in its own process (so its memory is its own), against the
// bench stream server. run.mjs starts it; it prints one JSON line of results on stdout and exits.
//
//   node bench/client-node-runner.mjs --server http://127.0.0.1:S --mode ingest --count 50000
//   node bench/client-node-runner.mjs --server http://127.0.0.1:S --mode relist --count 100000
//   node bench/client-node-runner.mjs --server http://127.0.0.1:S --mode updates --count 100000
//
// ingest: counts add + update callbacks until `count` (the list is empty, the watch brings them).
// relist: counts add callbacks until `count` (all from the list; the informer lists unpaginated).
// updates: counts update callbacks until `count` (the list brings the pods as adds, the watch
// replaces them with MODIFIED events: each one runs the update path with its old object).
// Memory: process.memoryUsage() sampled every 50 ms from a timer (it cannot fire while the event
// loop is busy in one long synchronous step; run.mjs also samples /proc/<pid>/status from outside).
import fs from "node:fs";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { CoreV1Api, KubeConfig, makeInformer } from "@kubernetes/client-node";

const { values: args } = parseArgs({
  options: {
    server: { type: "string" },
    mode: { type: "string" },
    count: { type: "string" },
    "timeout-seconds": { type: "string", default: "300" },
    "settle-ms": { type: "string", default: "1000" },
  },
});
const count = Number(args.count);
const now = () => performance.timeOrigin + performance.now();
const mb = (bytes) => Math.round((bytes / 1048576) * 10) / 10;

const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: "bench", server: args.server, skipTLSVerify: true }],
  users: [{ name: "bench" }],
  contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
  currentContext: "bench",
});
const api = kc.makeApiClient(CoreV1Api);

// Let the module graph settle, then take the baseline.
globalThis.gc?.();
await sleep(Number(args["settle-ms"]));
const samples = [];
const sample = () => {
  const m = process.memoryUsage();
  samples.push({ t: now(), rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers });
};
sample();
const baseline = samples[0];
const sampler = setInterval(sample, 50);

let adds = 0;
let updates = 0;
let listResolvedAt = null;
let listItems = null;
let connectAt = null;
const errors = [];
let reachedAt = null;
let resolveDone;
const done = new Promise((resolve) => (resolveDone = resolve));

const informer = makeInformer(kc, "/api/v1/pods", async () => {
  const list = await api.listPodForAllNamespaces();
  listResolvedAt = now();
  listItems = list.items.length;
  return list;
});
const check = () => {
  const n = args.mode === "ingest" ? adds + updates : args.mode === "updates" ? updates : adds;
  if (reachedAt === null && n >= count) {
    reachedAt = now();
    resolveDone();
  }
};
informer.on("add", () => {
  adds++;
  check();
});
informer.on("update", () => {
  updates++;
  check();
});
informer.on("connect", () => {
  connectAt ??= now();
});
informer.on("error", (error) => errors.push(String(error?.message ?? error)));

const startedAt = now();
const cpuAtStart = process.cpuUsage();
informer.start().catch((error) => errors.push(String(error?.message ?? error)));
const timeout = sleep(Number(args["timeout-seconds"]) * 1000, "timeout");
const outcome = await Promise.race([done.then(() => "done"), timeout]);
// This process's CPU (all its threads: the GC's too) from start to the count reached.
const cpu = process.cpuUsage(cpuAtStart);
sample();
clearInterval(sampler);
const peak = samples.reduce((a, s) => (s.rss > a.rss ? s : a), baseline);
const peakHeap = samples.reduce((a, s) => Math.max(a, s.heapUsed), 0);
const last = samples[samples.length - 1];
// VmHWM: the peak RSS of this process, including what 50 ms sampling cannot see while the loop is busy
const hwm = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync("/proc/self/status", "utf8"));
process.stdout.write(
  `${JSON.stringify({
    mode: args.mode,
    outcome,
    count,
    adds,
    updates,
    startedAt,
    connectAt,
    listResolvedAt,
    listItems,
    reachedAt,
    cpuSeconds: { user: Math.round(cpu.user / 1e5) / 10, system: Math.round(cpu.system / 1e5) / 10, total: Math.round((cpu.user + cpu.system) / 1e5) / 10 },
    cachedObjects: informer.list().length,
    errors: errors.slice(0, 5),
    memory: {
      samples: samples.length,
      baselineRssMB: mb(baseline.rss),
      peakRssMB: mb(peak.rss),
      growthMB: mb(peak.rss - baseline.rss),
      baselineHeapUsedMB: mb(baseline.heapUsed),
      peakHeapUsedMB: mb(peakHeap),
      finalRssMB: mb(last.rss),
      finalHeapUsedMB: mb(last.heapUsed),
      vmHwmMB: hwm ? mb(Number(hwm[1]) * 1024) : null,
    },
  })}\n`,
);
process.exit(0);
