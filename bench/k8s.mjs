// d. The /k8s read API (`npm run bench -- --only k8s`): our Worker's Kubernetes-compatible API next
// to the fake API server (test/fake-apiserver, an in-process Node emulator of kube-apiserver) serving
// the same cluster, in the same run. See BENCHMARKS.md "/k8s read API".
//
// Setup: the fake API server as a child process (test/fake-apiserver/main.ts), a fresh cluster of N
// ~3 KB pods (`seed`), our Worker under `wrangler dev` with one informer on all pods of that
// cluster, synced. Then, on both servers, the same requests:
//
// 1. List: the N pods without `limit` (one answer), and paged with `limit=500` following `continue`;
//    R runs each, alternating servers; time to the last byte (median, min, max), bytes, pages. Both
//    servers' answers are compared (same items in the same order at the same resourceVersion). The
//    RSS of the Worker's runtime (workerd) and of the fake server is sampled (50 ms) during the lists.
// 2. Watch fan-out: W concurrent watches (`?watch=true&resourceVersion=<the current RV>`, opened by
//    bench/k8s-watch-runner.mjs in its own process) on one server at a time (fake first, then ours)
//    while the cluster churns through the fake server's control API (`POST /__control/churn`, its
//    seeded mix: 25% creates, 50% updates, 25% deletes) at a fixed rate for T seconds, then one
//    burst of B changes at once. Each change's time is when its churn request was sent (before the
//    fake server commits it); its resourceVersion comes from the answer (revisions are consecutive).
//    Per event and watcher: latency = receipt − that time. Checked: every watcher got every
//    resourceVersion once, in order, with the right ADDED/MODIFIED/DELETED counts.
//    Ours serves the changes after its informer (one watch on the fake server) has applied them:
//    its latency includes that hop, as an edge replica's would.
// 3. Ingest lag (issue 20): before ours' fan-out, the same churn (rate, length) with no watcher open,
//    then again during the fan-out, our informer's cacheResourceVersion is sampled (GET
//    /informers/pods, every 200 ms): a change counts as applied at the first sample at or past its
//    RV; lag = that − when its churn request was sent. The two are compared.
//
// Credentials (issue 20): the Worker gets TOKENS with one admin credential (every request of the
// bench's own) and ceil(W / 100) read credentials (watcher i uses credential i % C): a credential
// holds at most 100 watches of an informer, and the watch relays (WATCH_RELAYS, --k8s-relays) are
// chosen by credential name. The fake API server needs none.
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { MB, RssSampler, busiestThreads, cmdline, cpuDelta, now, procCpu, round, summarizeProfile, threadCpu, waitFor } from "./lib.mjs";
import { NODE, RESULTS, ROOT, WORK, api, children, log, pollStatus, profileRuntime, ratio, scanLog, startWorker } from "./harness.mjs";

export const K8S_OPTIONS = {
  "k8s-pods": { type: "string", default: "10000" },
  "k8s-pod-bytes": { type: "string", default: "3000" },
  "k8s-watchers": { type: "string", default: "100" },
  "k8s-rate": { type: "string", default: "200" },
  "k8s-seconds": { type: "string", default: "25" },
  "k8s-burst": { type: "string", default: "500" },
  "k8s-list-runs": { type: "string", default: "5" },
  "k8s-page-runs": { type: "string", default: "3" },
  "k8s-timeout": { type: "string", default: "300" },
  "k8s-profile": { type: "boolean", default: false },
  "k8s-relays": { type: "string" }, // WATCH_RELAYS of the Worker; unset: wrangler.toml's
};

/** The hard deadline of a k8s run. */
export function k8sDeadlineMs() {
  return 25 * 60_000;
}

const PAGE = 500;

function params(opts) {
  const p = {
    pods: Number(opts["k8s-pods"]),
    podBytes: Number(opts["k8s-pod-bytes"]),
    watchers: Number(opts["k8s-watchers"]),
    rate: Number(opts["k8s-rate"]),
    seconds: Number(opts["k8s-seconds"]),
    burst: Number(opts["k8s-burst"]),
    listRuns: Number(opts["k8s-list-runs"]),
    pageRuns: Number(opts["k8s-page-runs"]),
    timeoutSeconds: Number(opts["k8s-timeout"]),
    profile: Boolean(opts["k8s-profile"]),
    relays: opts["k8s-relays"] === undefined ? null : Number(opts["k8s-relays"]),
  };
  if (p.relays !== null && !(Number.isSafeInteger(p.relays) && p.relays >= 0)) throw new Error(`--k8s-relays must be a whole number ≥ 0 (got '${opts["k8s-relays"]}')`);
  p.changes = Math.round(p.rate * p.seconds);
  return p;
}

// ---------------------------------------------------------------------------------------------
// The fake API server

export async function startFake() {
  const child = spawn(NODE, [path.join(ROOT, "test", "fake-apiserver", "main.ts"), "--port", "0", "--compact-every-seconds", "0"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const handle = { pid: child.pid };
  children.add(handle);
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const base = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the fake API server did not start in 20 s: ${out}${err}`)), 20_000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`the fake API server exited with ${code}: ${err.slice(-2000)}`)));
  });
  child.stdout.resume();
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    base,
    pid: child.pid,
    stderr: () => err,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // gone
      }
      if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) {
        try {
          child.kill("SIGKILL");
        } catch {
          // gone
        }
        await Promise.race([exited, sleep(2_000)]);
      }
      children.delete(handle);
    },
  };
}

export async function control(url, body, method = "POST") {
  const response = await fetch(url, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

// ---------------------------------------------------------------------------------------------
// Lists

async function timedGet(url, headers = {}) {
  const t0 = now();
  const response = await fetch(url, { headers: { accept: "application/json", ...headers }, signal: AbortSignal.timeout(120_000) });
  const head = now();
  const body = Buffer.from(await response.arrayBuffer());
  const t1 = now();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${body.toString("utf8", 0, 500)}`);
  return { ms: t1 - t0, headMs: head - t0, bytes: body.length, body };
}

/** What a list holds: count, resourceVersion, and digests of its items' identities (in order, and as a set). */
function summarize(items, rv) {
  const ids = items.map((o) => `${o.metadata.namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
  const hash = (list) => createHash("sha256").update(list.join("\n")).digest("hex").slice(0, 16);
  return { items: items.length, resourceVersion: rv, orderDigest: hash(ids), setDigest: hash([...ids].sort()) };
}

async function fullList(base, headers) {
  const r = await timedGet(`${base}/api/v1/pods`, headers);
  const list = JSON.parse(r.body.toString("utf8"));
  return { ms: r.ms, headMs: r.headMs, bytes: r.bytes, kind: list.kind, ...summarize(list.items, list.metadata.resourceVersion) };
}

async function pagedList(base, headers) {
  const t0 = now();
  const items = [];
  let bytes = 0;
  let pages = 0;
  let token = "";
  let rv;
  const pageRvs = new Set();
  let firstPageMs;
  do {
    const r = await timedGet(`${base}/api/v1/pods?limit=${PAGE}${token ? `&continue=${encodeURIComponent(token)}` : ""}`, headers);
    bytes += r.bytes;
    pages++;
    firstPageMs ??= r.ms;
    const page = JSON.parse(r.body.toString("utf8"));
    rv ??= page.metadata.resourceVersion;
    pageRvs.add(page.metadata.resourceVersion);
    for (const item of page.items) items.push(item);
    token = page.metadata.continue ?? "";
    if (pages > 10_000) throw new Error("more than 10,000 pages");
  } while (token);
  // the time includes parsing each page (a client must, to read `continue`); the same for both servers
  return { ms: now() - t0, firstPageMs, bytes, pages, pageResourceVersions: pageRvs.size, ...summarize(items, rv) };
}

function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: round(sorted[Math.floor(sorted.length / 2)], 1), min: round(sorted[0], 1), max: round(sorted[sorted.length - 1], 1) };
}

function summarizeRuns(runs) {
  const last = runs[runs.length - 1];
  return {
    runs: runs.length,
    ms: stats(runs.map((r) => r.ms)),
    ...(last.headMs !== undefined ? { timeToHeadersMs: stats(runs.map((r) => r.headMs)) } : {}),
    ...(last.firstPageMs !== undefined ? { firstPageMs: stats(runs.map((r) => r.firstPageMs)) } : {}),
    MB: round(last.bytes / MB, 2),
    bytesPerItem: Math.round(last.bytes / Math.max(1, last.items)),
    MBPerSecond: round(last.bytes / MB / (stats(runs.map((r) => r.ms)).median / 1000), 1),
    items: last.items,
    resourceVersion: last.resourceVersion,
    ...(last.pages !== undefined ? { pages: last.pages, pageResourceVersions: last.pageResourceVersions } : {}),
    orderDigest: last.orderDigest,
    setDigest: last.setDigest,
    consistentAcrossRuns: runs.every((r) => r.orderDigest === last.orderDigest),
  };
}

async function listPhase(p, sides, { runtimePid, fakePid, auth }) {
  const rssOurs = new RssSampler(runtimePid, 50);
  const rssFake = new RssSampler(fakePid, 50);
  await sleep(1_000);
  const baseline = { ours: rssOurs.medianBetween(0, now()), fake: rssFake.medianBetween(0, now()) };
  const hwm0 = { ours: rssOurs.last().hwm, fake: rssFake.last().hwm };
  const cpu0 = { ours: procCpu(runtimePid), fake: procCpu(fakePid) };
  const out = { fake: { full: [], paged: [] }, ours: { full: [], paged: [] } };
  // one warm-up of each kind per server (not counted)
  for (const side of ["fake", "ours"]) {
    await fullList(sides[side], auth[side]);
    await pagedList(sides[side], auth[side]);
  }
  for (let r = 0; r < p.listRuns; r++) {
    for (const side of r % 2 === 0 ? ["fake", "ours"] : ["ours", "fake"]) out[side].full.push(await fullList(sides[side], auth[side]));
  }
  for (let r = 0; r < p.pageRuns; r++) {
    for (const side of r % 2 === 0 ? ["fake", "ours"] : ["ours", "fake"]) out[side].paged.push(await pagedList(sides[side], auth[side]));
  }
  const cpu1 = { ours: procCpu(runtimePid), fake: procCpu(fakePid) };
  await sleep(500);
  rssOurs.stop();
  rssFake.stop();
  const memory = (sampler, side) => {
    const peak = sampler.peakBetween(0).rss;
    const hwm = sampler.last().hwm;
    const truePeak = Math.max(peak, hwm > hwm0[side] ? hwm : 0);
    return {
      baselineMB: round(baseline[side] / MB),
      peakMB: round(truePeak / MB),
      growthMB: round((truePeak - baseline[side]) / MB),
      afterMB: round(sampler.last().rss / MB),
    };
  };
  const result = {};
  for (const side of ["fake", "ours"]) {
    result[side] = {
      full: summarizeRuns(out[side].full),
      paged: summarizeRuns(out[side].paged),
      processCpuSeconds: cpuDelta(cpu0[side], cpu1[side]),
      processMemory: memory(side === "ours" ? rssOurs : rssFake, side),
    };
  }
  const problems = [];
  for (const kind of ["full", "paged"]) {
    const a = result.fake[kind];
    const b = result.ours[kind];
    if (b.items !== p.pods) problems.push(`ours ${kind} list: ${b.items} items, not ${p.pods}`);
    if (a.items !== p.pods) problems.push(`fake ${kind} list: ${a.items} items, not ${p.pods}`);
    if (a.resourceVersion !== b.resourceVersion) problems.push(`${kind} list resourceVersion: fake ${a.resourceVersion}, ours ${b.resourceVersion}`);
    if (a.setDigest !== b.setDigest) problems.push(`${kind} list: the items (namespace/name@resourceVersion) differ between the servers`);
    else if (a.orderDigest !== b.orderDigest) problems.push(`${kind} list: same items, different order`);
    if (!a.consistentAcrossRuns || !b.consistentAcrossRuns) problems.push(`${kind} list: runs of one server differ`);
    if (kind === "paged" && (a.pageResourceVersions !== 1 || b.pageResourceVersions !== 1)) problems.push("paged list: pages at different resourceVersions");
  }
  result.sameAnswers = problems.length === 0;
  result.problems = problems;
  result.ratios = {
    fullListTime: ratio(result.ours.full.ms.median, result.fake.full.ms.median),
    fullListBytes: ratio(result.ours.full.MB, result.fake.full.MB),
    pagedListTime: ratio(result.ours.paged.ms.median, result.fake.paged.ms.median),
  };
  return result;
}

// ---------------------------------------------------------------------------------------------
// Watch fan-out

class Runner {
  constructor() {
    this.child = spawn(NODE, [path.join(ROOT, "bench", "k8s-watch-runner.mjs")], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.handle = { pid: this.child.pid };
    children.add(this.handle);
    this.messages = [];
    this.waiters = [];
    this.exited = new Promise((resolve) => this.child.on("exit", resolve));
    this.child.on("message", (m) => {
      if (m.progress) log(`  … ${m.behind} watchers still behind (slowest at RV ${m.minRv} of ${m.lastRv})`);
      this.messages.push(m);
      for (const w of [...this.waiters]) w();
    });
    this.child.on("exit", () => {
      for (const w of [...this.waiters]) w();
    });
  }
  /** The next message with `key`, within `timeoutMs`. */
  async next(key, timeoutMs) {
    const end = now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex((m) => m[key]);
      if (i !== -1) return this.messages.splice(i, 1)[0];
      if (this.child.exitCode !== null || now() > end) throw new Error(`watch runner: no '${key}' message (${this.child.exitCode !== null ? `exited ${this.child.exitCode}` : `timeout ${timeoutMs} ms`})`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, end - now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      this.waiters.length = 0;
    }
  }
  send(message) {
    this.child.send(message);
  }
  async stop() {
    try {
      this.child.send({ cmd: "close" });
    } catch {
      // gone
    }
    if (!(await Promise.race([this.exited.then(() => true), sleep(3_000).then(() => false)]))) {
      try {
        this.child.kill("SIGKILL");
      } catch {
        // gone
      }
      await Promise.race([this.exited, sleep(2_000)]);
    }
    children.delete(this.handle);
  }
}

/**
 * Churns `total` changes at `rate`/s through the control API, one request at a time (so each answer's
 * revision range is that request's). sentAt[rv − startRv − 1] = when the request carrying rv was sent.
 */
async function churnAtRate(clusterUrl, { total, rate, seedBase, startRv, sentAt, firstRv }) {
  const t0 = now();
  let sent = 0;
  let calls = 0;
  let rv = firstRv;
  let maxCallMs = 0;
  let lateMax = 0;
  const counts = { created: 0, updated: 0, deleted: 0 };
  while (sent < total) {
    const due = Math.min(total, Math.floor(((now() - t0) / 1000) * rate) + 1);
    if (due <= sent) {
      await sleep(Math.max(1, t0 + (sent / rate) * 1000 - now()));
      continue;
    }
    const n = Math.min(due - sent, 50);
    lateMax = Math.max(lateMax, now() - (t0 + (sent / rate) * 1000));
    const at = now();
    const r = await control(`${clusterUrl}/__control/churn`, { seed: seedBase + calls, operations: n, resource: "pods" });
    maxCallMs = Math.max(maxCallMs, now() - at);
    const next = Number(r.resourceVersion);
    if (next - rv !== n) throw new Error(`churn of ${n} moved the revision from ${rv} to ${next}: something else writes to the cluster`);
    for (let x = rv + 1; x <= next; x++) sentAt[x - startRv - 1] = at;
    rv = next;
    sent += n;
    calls++;
    counts.created += r.created;
    counts.updated += r.updated;
    counts.deleted += r.deleted;
  }
  const seconds = (now() - t0) / 1000;
  return { changes: sent, calls, seconds: round(seconds, 2), achievedRate: round(sent / seconds, 1), maxCallMs: round(maxCallMs, 1), maxLateMs: round(lateMax, 1), lastRv: rv, counts };
}

// ---------------------------------------------------------------------------------------------
// Credentials and ingest lag (issue 20)

/** Watches one credential may hold on one informer (src/k8s/watcher-caps.ts MAX_WATCHERS_PER_PRINCIPAL). */
const WATCHERS_PER_CREDENTIAL = 100;

/**
 * One admin credential (every request of the bench's own) and ceil(W / 100) read credentials (the
 * watchers, watcher i with credential i % C), as the Worker's TOKENS: random 43-character tokens,
 * kept in this process only.
 */
function benchCredentials(watchers) {
  const token = () => randomBytes(32).toString("base64url");
  const sha = (t) => createHash("sha256").update(t).digest("hex");
  const admin = { name: "bench-admin", token: token() };
  const readers = Array.from({ length: Math.max(1, Math.ceil(watchers / WATCHERS_PER_CREDENTIAL)) }, (_, i) => ({ name: `bench-read-${i}`, token: token() }));
  const entries = [
    { name: admin.name, sha256: sha(admin.token), role: "admin", clusters: ["*"] },
    ...readers.map((r) => ({ name: r.name, sha256: sha(r.token), role: "read", clusters: ["*"] })),
  ];
  const bearer = (t) => ({ authorization: `Bearer ${t}` });
  return { TOKENS: JSON.stringify(entries), admin: bearer(admin.token), readers: readers.map((r) => bearer(r.token)), readerNames: readers.map((r) => r.name) };
}

/** WATCH_RELAYS as wrangler.toml sets it (the Worker's default when --k8s-relays is not given). */
function tomlRelays() {
  const m = /^WATCH_RELAYS\s*=\s*"(\d+)"/m.exec(fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8"));
  return m ? Number(m[1]) : null;
}

/**
 * Samples our informer's cacheResourceVersion (GET /informers/{name}) every `intervalMs`, one
 * request at a time: {t0, t1, rv} per answer (t1 = when the answer arrived).
 */
function ingestSampler(worker, name, intervalMs = 200) {
  const samples = [];
  let errors = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t0 = now();
      try {
        const response = await fetch(`${worker.base}/informers/${name}`, { headers: worker.headers, signal: AbortSignal.timeout(30_000) });
        const status = await response.json();
        const t1 = now();
        if (response.ok && status.cacheResourceVersion) samples.push({ t0, t1, rv: Number(status.cacheResourceVersion) });
        else errors++;
      } catch {
        errors++;
      }
      const wait = intervalMs - (now() - t0);
      if (wait > 0) await sleep(wait);
    }
  })();
  return {
    samples,
    latest: () => samples[samples.length - 1]?.rv ?? 0,
    async stop() {
      stopped = true;
      await loop;
      return { samples, errors };
    },
  };
}

/** Waits (bounded) until the sampler has seen cacheResourceVersion ≥ rv; returns whether it did. */
async function untilApplied(sampler, rv, timeoutMs) {
  const end = now() + timeoutMs;
  while (now() < end) {
    if (sampler.latest() >= rv) return true;
    await sleep(50);
  }
  return false;
}

/**
 * Ingest lag of the changes startRv+1 … lastRv: each applied at the first sample whose
 * cacheResourceVersion ≥ its RV (the answer's arrival: an upper bound, by at most that poll's time
 * and the 200 ms interval); lag = that − when its churn request was sent. Events behind: per sample,
 * the changes sent before the poll left minus those applied (a lower bound).
 */
function ingestLag({ samples, errors }, sentAt, startRv, lastRv) {
  const lags = [];
  let unapplied = 0;
  let k = 0;
  for (let rv = startRv + 1; rv <= lastRv; rv++) {
    while (k < samples.length && samples[k].rv < rv) k++;
    if (k === samples.length) {
      unapplied++;
      continue;
    }
    lags.push(samples[k].t1 - sentAt[rv - startRv - 1]);
  }
  let maxBehind = 0;
  for (const s of samples) {
    let sent = 0;
    for (let rv = startRv + 1; rv <= lastRv && sentAt[rv - startRv - 1] <= s.t0; rv++) sent = rv;
    maxBehind = Math.max(maxBehind, sent - s.rv);
  }
  const pollMs = samples.map((s) => s.t1 - s.t0).sort((a, b) => a - b);
  const sorted = Float64Array.from(lags).sort();
  return {
    changes: lastRv - startRv,
    unapplied,
    lagMs: { p50: round(percentile(sorted, 0.5), 0), p99: round(percentile(sorted, 0.99), 0), max: round(sorted[sorted.length - 1] ?? null, 0) },
    maxBehindEvents: maxBehind,
    samples: samples.length,
    sampleErrors: errors,
    statusPollMs: { p50: round(percentile(pollMs, 0.5), 0), max: round(pollMs[pollMs.length - 1] ?? null, 0) },
  };
}

/** The same churn as a watch phase's steady part, on our informer with no watcher open: its ingest lag. */
async function ingestBaseline(p, { clusterUrl, worker, startRv, seedBase }) {
  const sentAt = new Float64Array(p.changes + 10);
  const sampler = ingestSampler(worker, "pods");
  const cpu0 = procCpu(worker.runtimePid);
  const churn = await churnAtRate(clusterUrl, { total: p.changes, rate: p.rate, seedBase, startRv, sentAt, firstRv: startRv });
  const applied = await untilApplied(sampler, churn.lastRv, 120_000);
  const cpu1 = procCpu(worker.runtimePid);
  const lag = ingestLag(await sampler.stop(), sentAt, startRv, churn.lastRv);
  const cpu = cpuDelta(cpu0, cpu1);
  return { churn, applied, ...lag, workerdCpuSeconds: cpu, workerdCpuMicrosPerChange: cpu ? round((cpu.total * 1e6) / churn.changes, 0) : null };
}

/** wrangler dev's other workerd: the proxy on the dev port that relays every request to the runtime. */
function devProxyPid(base) {
  const entry = `--socket-addr=entry=127.0.0.1:${new URL(base).port}`;
  for (const pid of fs.readdirSync("/proc").filter((x) => /^\d+$/.test(x))) {
    const args = cmdline(Number(pid));
    if (args.some((a) => a.endsWith("workerd")) && args.includes(entry)) return Number(pid);
  }
  return undefined;
}

function percentile(sorted, q) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] : null;
}

export function distribution(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: round(percentile(sorted, 0.5), 1),
    p90: round(percentile(sorted, 0.9), 1),
    p99: round(percentile(sorted, 0.99), 1),
    max: round(sorted[sorted.length - 1] ?? null, 1),
  };
}

/** Latency and throughput of the changes with rv in [from, to] (1-based offsets past startRv). */
function measureRange(arrival, sentAt, { watchers, span, from, to, bytesPerEvent }) {
  const E = to - from + 1;
  const lat = new Float64Array(watchers * E);
  let n = 0;
  let last = 0;
  let missing = 0;
  const perWatcherP99 = [];
  for (let w = 0; w < watchers; w++) {
    const own = [];
    for (let j = from - 1; j < to; j++) {
      const t = arrival[w * span + j];
      if (t === 0) {
        missing++;
        continue;
      }
      const l = t - sentAt[j];
      lat[n++] = l;
      own.push(l);
      if (t > last) last = t;
    }
    own.sort((a, b) => a - b);
    perWatcherP99.push(percentile(own, 0.99));
  }
  const first = sentAt[from - 1];
  const seconds = last ? (last - first) / 1000 : null;
  // per second of change time: latency p50/p99 of the changes sent then; per second of receipt: deliveries
  const timeline = [];
  if (last) {
    const buckets = Math.ceil((last - first) / 1000) + 1;
    const byChange = Array.from({ length: buckets }, () => []);
    const received = new Uint32Array(buckets);
    for (let w = 0; w < watchers; w++) {
      for (let j = from - 1; j < to; j++) {
        const t = arrival[w * span + j];
        if (t === 0) continue;
        byChange[Math.floor((sentAt[j] - first) / 1000)].push(t - sentAt[j]);
        received[Math.floor((t - first) / 1000)]++;
      }
    }
    for (let b = 0; b < buckets; b++) {
      const sorted = byChange[b].sort((x, y) => x - y);
      timeline.push({ t: b, delivered: received[b], p50: round(percentile(sorted, 0.5), 0), p99: round(percentile(sorted, 0.99), 0) });
    }
  }
  const p99s = perWatcherP99.filter((x) => x !== null).sort((a, b) => a - b);
  return {
    changes: E,
    expectedDeliveries: watchers * E,
    delivered: n,
    missing,
    seconds: round(seconds, 2),
    deliveredPerSecond: seconds ? round(n / seconds, 0) : null,
    deliveredMBPerSecond: seconds && bytesPerEvent ? round((n * bytesPerEvent) / MB / seconds, 1) : null,
    latencyMs: distribution(lat.subarray(0, n)),
    perWatcherP99Ms: p99s.length ? { min: round(p99s[0], 1), median: round(percentile(p99s, 0.5), 1), max: round(p99s[p99s.length - 1], 1) } : null,
    timeline,
  };
}

/** Machine-wide CPU seconds (busy, all) from /proc/stat: how much of the 2 cores a phase left idle. */
function machineCpu() {
  try {
    const fields = fs.readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
    const all = fields.reduce((a, x) => a + x, 0) / 100;
    const idle = (fields[3] + (fields[4] ?? 0)) / 100;
    return { busy: all - idle, all };
  } catch {
    return null;
  }
}

/**
 * How the watchers ended, by credential (watcher i used credential i % C): how many ended before
 * the last change, where they stood, and when they ended (seconds after the churn started).
 */
function watcherEnds(stats, { credentials, t0, lastRv }) {
  const groups = [];
  for (let c = 0; c < credentials; c++) {
    const mine = stats.filter((w) => w.i % credentials === c);
    const ended = mine.filter((w) => w.ended && w.lastRv < lastRv);
    const at = ended.map((w) => (w.endedAt - t0) / 1000).sort((a, b) => a - b);
    // silence before the end: from the watcher's last line to its end (10 s: the hub's unresponsive close?)
    const quiet = ended.map((w) => (w.endedAt - (w.lastEventAt ?? t0)) / 1000).sort((a, b) => a - b);
    const rvs = mine.map((w) => w.lastRv).sort((a, b) => a - b);
    groups.push({
      credential: c,
      watchers: mine.length,
      endedEarly: ended.length,
      reasons: [...new Set(ended.map((w) => w.ended))].slice(0, 3),
      endedAtSeconds: at.length ? { first: round(at[0], 1), last: round(at[at.length - 1], 1) } : null,
      quietBeforeEndSeconds: quiet.length ? { min: round(quiet[0], 1), median: round(percentile(quiet, 0.5), 1), max: round(quiet[quiet.length - 1], 1) } : null,
      lastRv: { min: rvs[0], max: rvs[rvs.length - 1] },
      events: mine.reduce((a, w) => a + w.events, 0),
    });
  }
  return groups;
}

async function watchSide(side, p, { url, clusterUrl, startRv, seedBase, pids, headersList, ingestOf, relays = 0 }) {
  const span = p.changes + p.burst + 10;
  const sentAt = new Float64Array(span);
  const runner = new Runner();
  const result = { side, url, startRv };
  const rss = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, new RssSampler(pid, 100)]));
  let sampler;
  try {
    runner.send({ cmd: "start", url, watchers: p.watchers, startRv, span, timeoutSeconds: 900, headersList });
    const ready = await runner.next("ready", 60_000 + p.watchers * 120);
    result.open = {
      seconds: round(ready.openSeconds, 2),
      statuses: ready.statuses,
      perWatchMs: stats(ready.openedMs.filter((x) => x !== null)),
    };
    if (ready.ended.length) throw new Error(`watches ended at once: ${JSON.stringify(ready.ended.slice(0, 3))}`);
    if (ready.statuses["200"] !== p.watchers) throw new Error(`watch statuses ${JSON.stringify(ready.statuses)}`);
    log(`${side}: ${p.watchers} watches open in ${result.open.seconds} s (from RV ${startRv})`);
    await sleep(1_000);
    pids = { ...pids, watchClient: runner.child.pid };
    const machine0 = machineCpu();
    const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, procCpu(pid)]));
    const threads0 = threadCpu(pids.workerd);
    const t0 = now();
    // --k8s-profile: 10 s of our runtime during the churn (the figures of a profiled run are slower)
    const profiling = side === "ours" && p.profile ? profileRuntime(pids.workerd, 10_000).catch((error) => ({ error: error.message })) : undefined;
    // ours: the informer's ingest lag under this read load, sampled as in the baseline without watchers
    sampler = ingestOf ? ingestSampler(ingestOf, "pods") : undefined;
    const steady = await churnAtRate(clusterUrl, { total: p.changes, rate: p.rate, seedBase, startRv, sentAt, firstRv: startRv });
    const ingestDone = sampler ? untilApplied(sampler, steady.lastRv, 120_000).then(async (applied) => ({ applied, ...ingestLag(await sampler.stop(), sentAt, startRv, steady.lastRv) })) : undefined;
    log(`${side}: ${steady.changes} changes at ${steady.achievedRate}/s sent (${steady.calls} churn requests); waiting for every watcher`);
    const wait1 = runner.next("done", p.timeoutSeconds * 1000 + 10_000);
    runner.send({ cmd: "wait", lastRv: steady.lastRv, timeoutMs: p.timeoutSeconds * 1000 });
    const steadyDone = await wait1;
    const steadyDrainedAt = now();
    const cpu1 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, procCpu(pid)]));
    const machine1 = machineCpu();
    if (ingestDone) result.ingest = await ingestDone;
    const busiest = busiestThreads(threads0, threadCpu(pids.workerd), (steadyDrainedAt - t0) / 1000, 2);
    result.steadyOutcome = steadyDone.outcome;
    if (profiling) {
      const profile = await profiling;
      if (profile.error) result.profile = profile;
      else {
        fs.writeFileSync(path.join(RESULTS, "k8s-watch.cpuprofile"), JSON.stringify(profile));
        result.profile = { ...summarizeProfile(profile, 20), file: "bench/results/k8s-watch.cpuprofile" };
      }
    }
    log(`${side}: steady phase ${steadyDone.outcome} ${round(steadyDrainedAt - t0 - steady.seconds * 1000, 0)} ms after the last change was sent`);
    let burst = null;
    let burstDone = null;
    if (p.burst > 0 && steadyDone.outcome === "done") {
      const at = now();
      const r = await control(`${clusterUrl}/__control/churn`, { seed: seedBase + 500_000, operations: p.burst, resource: "pods" });
      const callMs = now() - at;
      const last = Number(r.resourceVersion);
      if (last - steady.lastRv !== p.burst) throw new Error(`the burst moved the revision from ${steady.lastRv} to ${last}`);
      for (let x = steady.lastRv + 1; x <= last; x++) sentAt[x - startRv - 1] = at;
      burst = { changes: p.burst, callMs: round(callMs, 1), lastRv: last, counts: { created: r.created, updated: r.updated, deleted: r.deleted } };
      const wait2 = runner.next("done", p.timeoutSeconds * 1000 + 10_000);
      runner.send({ cmd: "wait", lastRv: last, timeoutMs: p.timeoutSeconds * 1000 });
      burstDone = await wait2;
      log(`${side}: burst of ${p.burst} ${burstDone.outcome} in ${round(now() - at, 0)} ms`);
    }
    const file = path.join(WORK, `k8s-arrivals-${side}.bin`);
    runner.send({ cmd: "dump", file });
    await runner.next("dumped", 30_000);
    const raw = fs.readFileSync(file);
    const arrival = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
    fs.rmSync(file, { force: true });
    const watcherStats = (burstDone ?? steadyDone).stats;
    const totalEvents = watcherStats.reduce((a, w) => a + w.events, 0);
    const totalBytes = watcherStats.reduce((a, w) => a + w.bytes, 0);
    const bytesPerEvent = totalEvents ? totalBytes / totalEvents : 0;
    result.steady = {
      churn: steady,
      ...measureRange(arrival, sentAt, { watchers: p.watchers, span, from: 1, to: p.changes, bytesPerEvent }),
      drainAfterLastChangeMs: round(steadyDrainedAt - t0 - steady.seconds * 1000, 0),
      processCpuSeconds: Object.fromEntries(Object.keys(pids).map((k) => [k, cpuDelta(cpu0[k], cpu1[k])])),
      workerdBusiestThreads: busiest,
      machineCpu: machine0 && machine1 ? { busySeconds: round(machine1.busy - machine0.busy), cores: round((machine1.busy - machine0.busy) / ((steadyDrainedAt - t0) / 1000), 2) } : null,
    };
    result.watcherEnds = watcherEnds((burstDone ?? steadyDone).stats, { credentials: headersList?.length || 1, relays, t0, lastRv: burst ? burst.lastRv : steady.lastRv });
    // the runtime's process CPU over the phase (churn start to the last watcher done) per delivered event
    const workerdCpu = result.steady.processCpuSeconds.workerd?.total;
    result.steady.workerdCpuMicrosPerDelivery = workerdCpu != null && result.steady.delivered ? round((workerdCpu * 1e6) / result.steady.delivered, 1) : null;
    if (burst) result.burst = { churn: burst, ...measureRange(arrival, sentAt, { watchers: p.watchers, span, from: p.changes + 1, to: p.changes + p.burst, bytesPerEvent }) };
    const expectedEnd = burst ? burst.lastRv : steady.lastRv;
    const counts = { ...steady.counts };
    if (burst) for (const k of Object.keys(counts)) counts[k] += burst.counts[k];
    const problems = [];
    const sum = (key) => watcherStats.reduce((a, w) => a + w[key], 0);
    for (const key of ["outOfOrder", "duplicates", "outOfRange", "unparsed", "checkMismatches"]) {
      const v = sum(key);
      if (v) problems.push(`${key}: ${v} (over all watchers)`);
    }
    const missing = (result.steady.missing ?? 0) + (result.burst?.missing ?? 0);
    if (missing) problems.push(`missing deliveries: ${missing} of ${p.watchers * (expectedEnd - startRv)}`);
    for (const w of watcherStats) {
      if (w.lastRv < expectedEnd) problems.push(`watcher ${w.i} stopped at RV ${w.lastRv} of ${expectedEnd}${w.ended ? ` (${w.ended})` : ""}`);
      else if (w.ended) problems.push(`watcher ${w.i}: ${w.ended}`);
      if (w.types.ERROR || w.types.other) problems.push(`watcher ${w.i}: ERROR/unknown events: ${w.errorEvents.join(" | ")}`);
      if (w.types.ADDED !== counts.created || w.types.MODIFIED !== counts.updated || w.types.DELETED !== counts.deleted) {
        problems.push(
          `watcher ${w.i}: ADDED/MODIFIED/DELETED ${w.types.ADDED}/${w.types.MODIFIED}/${w.types.DELETED}, the churn made ${counts.created}/${counts.updated}/${counts.deleted}`,
        );
      }
    }
    result.events = {
      perWatcherExpected: expectedEnd - startRv,
      total: totalEvents,
      MB: round(totalBytes / MB, 1),
      bytesPerEvent: Math.round(bytesPerEvent),
      types: counts,
      bookmarks: watcherStats.reduce((a, w) => a + w.types.BOOKMARK, 0),
      sampledFullParses: sum("checked"),
    };
    result.ok = problems.length === 0 && steadyDone.outcome === "done" && (!burstDone || burstDone.outcome === "done");
    result.problems = problems.slice(0, 20);
    result.problemCount = problems.length;
  } catch (error) {
    result.ok = false;
    result.error = error.message;
    log(`${side}: watch fan-out failed: ${error.message}`);
  } finally {
    await sampler?.stop();
    for (const s of Object.values(rss)) s.stop();
    result.processRss = Object.fromEntries(
      Object.entries(rss).map(([k, s]) => {
        const first = s.samples[0]?.rss ?? 0;
        const peak = s.peakBetween(0)?.rss ?? 0;
        return [k, { startMB: round(first / MB), peakMB: round(peak / MB), growthMB: round((peak - first) / MB) }];
      }),
    );
    await runner.stop();
  }
  return result;
}

// ---------------------------------------------------------------------------------------------

export async function runK8s({ opts, bundle }) {
  const p = params(opts);
  const result = { parameters: { ...p, pageLimit: PAGE } };
  const fake = await startFake();
  log(`d. /k8s read API: fake API server on ${fake.base} (pid ${fake.pid})`);
  let worker;
  try {
    const clusterId = "bench";
    const clusterUrl = `${fake.base}/clusters/${clusterId}`;
    await control(`${fake.base}/__control/clusters`, { id: clusterId });
    const namespaces = p.pods % 20 === 0 ? 20 : 1;
    const seedT0 = now();
    const seeded = await control(`${clusterUrl}/__control/seed`, { namespaces, podsPerNamespace: p.pods / namespaces, deployments: 5, podBytes: p.podBytes, seed: 8 });
    result.seed = { seconds: round((now() - seedT0) / 1000, 2), namespaces, ...seeded.created, resourceVersion: seeded.resourceVersion };
    log(`seeded ${seeded.created.pods} pods (~${p.podBytes} B each) in ${result.seed.seconds} s, RV ${seeded.resourceVersion}`);

    // credentials (issue 20): an admin one for the bench's own requests, read ones for the watchers
    // (at most 100 watches per credential per informer); each watch goes to a relay at random
    const credentials = benchCredentials(p.watchers);
    const vars = { TOKENS: credentials.TOKENS, ...(p.relays !== null ? { WATCH_RELAYS: String(p.relays) } : {}) };
    const relays = p.relays ?? tomlRelays();
    result.watchRelays = { value: relays, from: p.relays !== null ? "--k8s-relays" : "wrangler.toml", readCredentials: credentials.readers.length };
    if (relays > 0) {
      // Expected: the Worker picks a relay at random per watch (src/k8s/watch-relay.ts pickRelay).
      result.watchRelays.watchersPerRelay = new Array(relays).fill(Math.round(p.watchers / relays));
    }
    worker = await startWorker(bundle, "k8s", clusterUrl, { vars, headers: credentials.admin });
    log(`ours: WATCH_RELAYS ${relays} (${result.watchRelays.from}), ${credentials.readers.length} read credentials${result.watchRelays.watchersPerRelay ? `, watchers per relay ${result.watchRelays.watchersPerRelay.join("/")}` : ""}`);
    log(`ours: wrangler dev ready in ${round(worker.readyMs / 1000)} s (runtime workerd pid ${worker.runtimePid})`);
    const putAt = now();
    await api(worker, "PUT", "/informers/pods", { resource: "pods", watchTimeoutSeconds: 600 });
    const synced = await pollStatus(worker, "pods", (s) => s.synced && s.objects === p.pods && s.queueDepth === 0, { timeoutMs: 180_000, intervalMs: 200 });
    if (!synced.ok) throw new Error(`the informer did not sync ${p.pods} pods in 180 s: ${JSON.stringify(synced.status)}`);
    await waitFor(async () => (await fetch(`${worker.base}/k8s/api/v1/pods?limit=1`, { headers: credentials.admin, signal: AbortSignal.timeout(10_000) })).status === 200, {
      timeoutMs: 60_000,
      what: "/k8s/api/v1/pods to answer 200",
    });
    result.sync = { seconds: round((synced.at - putAt) / 1000, 2) };
    log(`ours: informer synced ${p.pods} pods in ${result.sync.seconds} s`);
    const sides = { fake: clusterUrl, ours: `${worker.base}/k8s` };

    log(`list: ${p.pods} pods, ${p.listRuns} full lists and ${p.pageRuns} paged lists (limit=${PAGE}) per server`);
    const auth = { fake: {}, ours: credentials.admin };
    result.list = await listPhase(p, sides, { runtimePid: worker.runtimePid, fakePid: fake.pid, auth });
    for (const side of ["fake", "ours"]) {
      const s = result.list[side];
      log(`${side}: full list ${s.full.ms.median} ms (${s.full.MB} MB), paged ${s.paged.ms.median} ms (${s.paged.pages} pages), RSS +${s.processMemory.growthMB} MB`);
    }
    if (!result.list.sameAnswers) log(`list differences: ${result.list.problems.join("; ")}`);

    log(`watch fan-out: ${p.watchers} watchers per server, ${p.changes} changes at ${p.rate}/s, then a burst of ${p.burst}`);
    const proxy = devProxyPid(worker.base);
    const pids = { workerd: worker.runtimePid, ...(proxy ? { wranglerProxyWorkerd: proxy } : {}), fakeApiServer: fake.pid };
    const fakeRv = Number((await control(`${clusterUrl}/__control`, undefined, "GET")).resourceVersion);
    result.watch = { fake: await watchSide("fake", p, { url: `${sides.fake}/api/v1/pods`, clusterUrl, startRv: fakeRv, seedBase: 1_000_000, pids }) };
    // ours: from the RV our cache serves, once the informer has caught up with the churn before
    const catchUp = async () => {
      const target = Number((await control(`${clusterUrl}/__control`, undefined, "GET")).resourceVersion);
      return waitFor(
        async () => {
          const r = await (await fetch(`${sides.ours}/api/v1/pods?limit=1`, { headers: credentials.admin, signal: AbortSignal.timeout(10_000) })).json();
          return Number(r.metadata.resourceVersion) === target ? target : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200, what: `our /k8s list to reach RV ${target}` },
      );
    };
    // the ingest baseline: the same churn (rate, length) with no watcher open
    log(`ours: ingest baseline, ${p.changes} changes at ${p.rate}/s with no watcher open`);
    result.ingestBaseline = await ingestBaseline(p, { clusterUrl, worker, startRv: await catchUp(), seedBase: 3_000_000 });
    const b = result.ingestBaseline;
    log(`ours: ingest lag without watchers p50 ${b.lagMs.p50} / p99 ${b.lagMs.p99} / max ${b.lagMs.max} ms, at most ${b.maxBehindEvents} changes behind`);
    result.watch.ours = await watchSide("ours", p, {
      url: `${sides.ours}/api/v1/pods`,
      clusterUrl,
      startRv: await catchUp(),
      seedBase: 2_000_000,
      pids,
      headersList: credentials.readers,
      ingestOf: worker,
      relays,
    });
    const ends = result.watch.ours.watcherEnds;
    const early = ends?.reduce((n, g) => n + g.endedEarly, 0);
    if (early) {
      const byCredential = Object.fromEntries(ends.map((g) => [g.credential, g.endedEarly]));
      log(`ours: ${early} of ${p.watchers} watchers ended before the last change (by credential: ${JSON.stringify(byCredential)})`);
    }
    const under = result.watch.ours.ingest;
    if (under) log(`ours: ingest lag under ${p.watchers} watchers p50 ${under.lagMs.p50} / p99 ${under.lagMs.p99} / max ${under.lagMs.max} ms, at most ${under.maxBehindEvents} changes behind`);
    const w = result.watch;
    result.watch.ratios = {
      steadyP50: ratio(w.ours.steady?.latencyMs.p50, w.fake.steady?.latencyMs.p50),
      steadyP99: ratio(w.ours.steady?.latencyMs.p99, w.fake.steady?.latencyMs.p99),
      steadyDeliveredPerSecond: ratio(w.ours.steady?.deliveredPerSecond, w.fake.steady?.deliveredPerSecond),
      burstDeliveredPerSecond: ratio(w.ours.burst?.deliveredPerSecond, w.fake.burst?.deliveredPerSecond),
      burstP99: ratio(w.ours.burst?.latencyMs.p99, w.fake.burst?.latencyMs.p99),
    };
    // the informer's ingest under the watchers' read load next to the same churn without them
    result.ingestRatios = {
      lagP50: ratio(w.ours.ingest?.lagMs.p50, result.ingestBaseline?.lagMs.p50),
      lagP99: ratio(w.ours.ingest?.lagMs.p99, result.ingestBaseline?.lagMs.p99),
      lagMax: ratio(w.ours.ingest?.lagMs.max, result.ingestBaseline?.lagMs.max),
    };
    result.ingestProblems = [];
    for (const [label, x] of [["baseline", result.ingestBaseline], ["under watchers", w.ours.ingest]]) {
      if (x && (!x.applied || x.unapplied)) result.ingestProblems.push(`ingest ${label}: ${x.unapplied} of ${x.changes} changes not seen applied within 120 s`);
    }
    result.ok = Boolean(result.list.sameAnswers && w.fake.ok && w.ours.ok && result.ingestProblems.length === 0);
  } catch (error) {
    result.ok = false;
    result.error = error.message;
    log(`k8s bench failed: ${error.message}`);
  } finally {
    if (worker) {
      await worker.stop();
      result.log = scanLog(worker.logPath);
    }
    const stderr = fake.stderr();
    if (stderr) result.fakeApiServerStderr = stderr.slice(-2000);
    await fake.stop();
  }
  return result;
}

/** Rows of the summary table. */
export function k8sRows(r) {
  const rows = [["/k8s read API", "ours (/k8s)", "fake API server", "ours/fake", "", r.ok ? "OK" : "PROBLEMS"]];
  if (r.error) rows.push(["  error", r.error, "", "", "", ""]);
  const l = r.list;
  if (l) {
    const P = r.parameters.pods;
    rows.push([`  list ${P} pods, no limit: median ms`, l.ours.full.ms.median, l.fake.full.ms.median, l.ratios.fullListTime, "", ""]);
    rows.push(["    MB", l.ours.full.MB, l.fake.full.MB, l.ratios.fullListBytes, "", ""]);
    rows.push([`  list paged limit=${r.parameters.pageLimit}: median ms`, l.ours.paged.ms.median, l.fake.paged.ms.median, l.ratios.pagedListTime, "", ""]);
    rows.push(["  server RSS growth during lists (MB)", l.ours.processMemory.growthMB, l.fake.processMemory.growthMB, "", "", ""]);
  }
  const w = r.watch;
  if (w?.fake && w?.ours) {
    const cell = (x, f) => (x?.[f.split(".")[0]] ? f.split(".").reduce((a, k) => a?.[k], x) : "-");
    rows.push([`  watch x${r.parameters.watchers}, ${r.parameters.rate}/s: delivered events/s`, cell(w.ours, "steady.deliveredPerSecond"), cell(w.fake, "steady.deliveredPerSecond"), w.ratios?.steadyDeliveredPerSecond ?? "-", "", ""]);
    rows.push(["    latency p50 / p99 (ms)", `${cell(w.ours, "steady.latencyMs.p50")} / ${cell(w.ours, "steady.latencyMs.p99")}`, `${cell(w.fake, "steady.latencyMs.p50")} / ${cell(w.fake, "steady.latencyMs.p99")}`, `${w.ratios?.steadyP50 ?? "-"} / ${w.ratios?.steadyP99 ?? "-"}`, "", ""]);
    rows.push(["    latency max (ms)", cell(w.ours, "steady.latencyMs.max"), cell(w.fake, "steady.latencyMs.max"), "", "", ""]);
    rows.push(["    runtime CPU µs per delivered event", cell(w.ours, "steady.workerdCpuMicrosPerDelivery"), "", "", "", ""]);
    rows.push([`  burst of ${r.parameters.burst}: delivered events/s`, cell(w.ours, "burst.deliveredPerSecond"), cell(w.fake, "burst.deliveredPerSecond"), w.ratios?.burstDeliveredPerSecond ?? "-", "", ""]);
    rows.push(["    latency p50 / p99 (ms)", `${cell(w.ours, "burst.latencyMs.p50")} / ${cell(w.ours, "burst.latencyMs.p99")}`, `${cell(w.fake, "burst.latencyMs.p50")} / ${cell(w.fake, "burst.latencyMs.p99")}`, w.ratios?.burstP99 ?? "-", "", ""]);
    rows.push(["  every watcher got every event in order", w.ours.ok ? "yes" : "NO", w.fake.ok ? "yes" : "NO", "", "", ""]);
  }
  if (r.watchRelays) rows.push(["  WATCH_RELAYS (watchers per relay)", `${r.watchRelays.value} (${r.watchRelays.from})${r.watchRelays.watchersPerRelay ? ` ${r.watchRelays.watchersPerRelay.join("/")}` : ""}`, "", "", "", ""]);
  const b = r.ingestBaseline;
  const u = r.watch?.ours?.ingest;
  if (b || u) {
    const lag = (x) => (x ? `${x.lagMs.p50} / ${x.lagMs.p99} / ${x.lagMs.max}` : "-");
    rows.push(["  ingest lag p50/p99/max ms: no watchers", lag(b), "", "", "", ""]);
    rows.push([`    under ${r.parameters.watchers} watchers (ratio p50/p99)`, lag(u), "", `${r.ingestRatios?.lagP50 ?? "-"} / ${r.ingestRatios?.lagP99 ?? "-"}`, "", ""]);
    rows.push(["    max changes behind: no watchers / under watchers", `${b?.maxBehindEvents ?? "-"} / ${u?.maxBehindEvents ?? "-"}`, "", "", "", ""]);
  }
  return rows;
}
