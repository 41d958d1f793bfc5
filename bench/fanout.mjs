// c. Fan-out (`npm run bench -- --only fanout`): S webhook subscriptions on one informer, E watch
// events emitted at a fixed rate, one subscriber down the whole time. See BENCHMARKS.md "Fan-out".
//
// - A receiver (node:http, in this process) serves S endpoints `/s/{i}`: S − 1 answer 204 at once and
//   record when each (subscriber, event) arrived; the last subscriber is down: its URL is a port
//   nobody listens on (connection refused), or with `--down 503` a path that always answers 503.
// - Ours: an informer on the stream server, synced on an empty list; S subscriptions
//   (`replayExisting: false`, `maxBatchSize: --batch`); then the server releases E events at
//   `--rate` events/s: event j is due at release + j / rate and never written earlier (later only if
//   the reader holds the stream back; both times are recorded). Measured for the S − 1 healthy
//   subscribers: deliveries/s from the release to the last 2xx, lag = 2xx arrival − due time
//   (p50/p99/max, and per subscriber), completeness and order (every event once, in order per key; our
//   `sequence` without gaps; signatures); the down subscriber's status at the end.
// - client-node: the same scenario; one informer with S handlers, each POSTing every event to its
//   endpoint through its own promise chain (bench/fanout-client-node-runner.mjs); same measures.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { busiestThreads, cpuDelta, freePort, now, procCpu, round, summarizeProfile, threadCpu } from "./lib.mjs";
import { NODE, RESULTS, ROOT, api, children, log, pollStatus, profileRuntime, ratio, scanLog, startWorker } from "./harness.mjs";

export const FANOUT_OPTIONS = {
  subscribers: { type: "string", default: "100" },
  rate: { type: "string", default: "100" },
  batch: { type: "string", default: "1" },
  signing: { type: "string", default: "hmac" },
  down: { type: "string", default: "refused" },
  "watch-pool": { type: "string", default: "1000" },
  "fanout-timeout": { type: "string", default: "600" },
  "profile-fanout": { type: "boolean", default: false },
  "skip-baseline": { type: "boolean", default: false },
};

/** The hard deadline of a fan-out run: both sides at their timeout, plus setup. */
export function fanoutDeadlineMs(opts) {
  return (2 * Number(opts["fanout-timeout"]) + 300) * 1000;
}

/** How long without any new delivery (while some are missing) before a side is called stalled. */
const STALL_MS = 60_000;
/** The baseline's per-request timeout (the down endpoint refuses at once; this bounds a hang). */
const BASELINE_TIMEOUT_MS = 5_000;

// ---------------------------------------------------------------------------------------------
// The receiver

class Receiver {
  constructor() {
    this.down = { mode: "refused", hits: 0 };
    this.server = http.createServer((req, res) => this.#handle(req, res));
    this.server.keepAliveTimeout = 120_000;
    this.server.headersTimeout = 130_000;
    this.server.requestTimeout = 0;
    this.reset({ subscribers: 0, events: 0, listRv: 0 });
  }

  async listen() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${this.server.address().port}`;
    // a port nobody listens on: connection refused
    this.refusedUrl = `http://127.0.0.1:${await freePort()}/s/down`;
  }

  /** The endpoint of subscriber i (the last one is the down one). */
  url(i) {
    if (i < this.subscribers - 1) return `${this.base}/s/${i}`;
    return this.down.mode === "503" ? `${this.base}/down` : this.refusedUrl;
  }

  reset({ subscribers, events, listRv, downMode = this.down.mode, keys = 1000 }) {
    this.subscribers = subscribers;
    this.keys = keys; // event j is about pod j % keys (the scenario's watchPool)
    this.events = events;
    this.listRv = listRv;
    this.down = { mode: downMode, hits: 0 };
    this.arrival = new Float64Array(subscribers * events); // 0: not yet
    this.received = new Uint32Array(subscribers); // unique events
    this.duplicates = new Uint32Array(subscribers);
    this.outOfOrder = new Uint32Array(subscribers);
    // Order is per key (invariant 3): an informer pops a burst's deltas grouped by key, as client-go's
    // DeltaFIFO does, so events of different keys may go out in another order than the stream's.
    this.lastIndex = new Int32Array(subscribers * keys).fill(-1);
    this.lastSequence = new Float64Array(subscribers).fill(-1);
    this.sequenceGaps = new Uint32Array(subscribers);
    this.requests = 0;
    this.bytes = 0;
    this.foreign = 0; // events of another scenario, unparseable bodies
    this.firstBodies = new Map(); // i → {body, headers} (signature check)
    this.healthyTotal = 0;
    this.lastArrival = 0;
  }

  get healthyExpected() {
    return (this.subscribers - 1) * this.events;
  }

  #handle(req, res) {
    const match = /^\/s\/(\d+)$/.exec(req.url);
    if (req.method !== "POST" || (!match && req.url !== "/down")) {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const t = now();
      if (!match) {
        this.down.hits++;
        res.writeHead(503, { "content-type": "text/plain" }).end("down");
        return;
      }
      res.writeHead(204).end();
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      this.requests++;
      this.bytes += body.length;
      this.#record(Number(match[1]), body, req.headers, t);
    });
  }

  #record(i, body, headers, t) {
    if (i >= this.subscribers - 1) {
      this.foreign++;
      return;
    }
    if (!this.firstBodies.has(i)) this.firstBodies.set(i, { body: body.toString("utf8"), headers });
    // One event: its top-level resourceVersion (and our sequence) end the body, so only the tail is
    // read. A batch (`{"events":[…]}`) is parsed whole.
    if (body[2] === 0x65 && body.subarray(0, 11).toString("latin1") === '{"events":[') {
      let parsed;
      try {
        parsed = JSON.parse(body.toString("utf8"));
      } catch {
        this.foreign++;
        return;
      }
      for (const event of parsed.events) this.#event(i, Number(event.resourceVersion), event.sequence ?? null, t);
      return;
    }
    const tail = body.toString("latin1", Math.max(0, body.length - 120));
    const m = /"resourceVersion":"(\d+)"(?:,"sequence":(\d+))?\}$/.exec(tail);
    if (!m) {
      this.foreign++;
      return;
    }
    this.#event(i, Number(m[1]), m[2] === undefined ? null : Number(m[2]), t);
  }

  #event(i, rv, sequence, t) {
    const j = rv - this.listRv - 1;
    if (!(j >= 0 && j < this.events)) {
      this.foreign++;
      return;
    }
    const slot = i * this.events + j;
    if (this.arrival[slot] !== 0) {
      this.duplicates[i]++;
      return;
    }
    this.arrival[slot] = t;
    this.received[i]++;
    this.healthyTotal++;
    if (t > this.lastArrival) this.lastArrival = t;
    const k = i * this.keys + (j % this.keys);
    if (j <= this.lastIndex[k]) this.outOfOrder[i]++;
    this.lastIndex[k] = j;
    if (sequence !== null) {
      if (this.lastSequence[i] >= 0 && sequence !== this.lastSequence[i] + 1) this.sequenceGaps[i]++;
      this.lastSequence[i] = sequence;
    }
  }

  close() {
    this.server.closeAllConnections?.();
    this.server.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Figures

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function distribution(values) {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: round(percentile(sorted, 0.5), 0),
    p90: round(percentile(sorted, 0.9), 0),
    p99: round(percentile(sorted, 0.99), 0),
    max: round(sorted[sorted.length - 1] ?? null, 0),
  };
}

/**
 * Throughput, lag and completeness of the healthy subscribers, from the receiver's arrivals and the
 * server's timeline: `scheduledAt[j]` (release + j / rate: when event j happened, the same for both
 * sides) and `emittedAt[j]` (when the server could write it: later than scheduled if the reader
 * applied backpressure; 0: never written). Lag is measured from the schedule: time an event waited
 * at the server because the reader was slow is lag too.
 */
function measure(receiver, { scheduledAt, emittedAt }) {
  const S = receiver.subscribers - 1;
  const E = receiver.events;
  const firstEmit = scheduledAt[0];
  const lags = new Float64Array(S * E);
  const afterWrite = new Float64Array(S * E);
  let n = 0;
  const perSubscriber = [];
  const problems = [];
  for (let i = 0; i < S; i++) {
    const own = [];
    let last = 0;
    for (let j = 0; j < E; j++) {
      const t = receiver.arrival[i * E + j];
      if (t === 0) continue;
      const lag = t - scheduledAt[j];
      afterWrite[n] = t - emittedAt[j];
      lags[n++] = lag;
      own.push(lag);
      if (t > last) last = t;
    }
    const d = own.length ? distribution(own) : { p50: null, p99: null, max: null };
    perSubscriber.push({
      i,
      received: receiver.received[i],
      duplicates: receiver.duplicates[i],
      outOfOrder: receiver.outOfOrder[i],
      sequenceGaps: receiver.sequenceGaps[i],
      p50: d.p50,
      p99: d.p99,
      max: d.max,
      doneSeconds: last ? round((last - firstEmit) / 1000, 2) : null,
    });
    if (receiver.received[i] !== E) problems.push(`subscriber ${i} received ${receiver.received[i]}/${E} events`);
    if (receiver.outOfOrder[i] > 0) problems.push(`subscriber ${i}: ${receiver.outOfOrder[i]} events out of order`);
    if (receiver.sequenceGaps[i] > 0) problems.push(`subscriber ${i}: ${receiver.sequenceGaps[i]} gaps in 'sequence'`);
  }
  if (receiver.foreign > 0) problems.push(`${receiver.foreign} requests the receiver could not attribute`);
  const unwritten = emittedAt.filter((t) => t === 0).length;
  if (unwritten > 0) problems.push(`${unwritten} events were never written by the stream server`);
  const lastEmit = emittedAt.reduce((a, t) => Math.max(a, t), 0);
  const lastScheduled = scheduledAt[E - 1];
  let writeDelayMax = 0;
  for (let j = 0; j < E; j++) if (emittedAt[j] > 0) writeDelayMax = Math.max(writeDelayMax, emittedAt[j] - scheduledAt[j]);
  const seconds = receiver.lastArrival ? (receiver.lastArrival - firstEmit) / 1000 : null;
  const spreadOf = (key) => {
    const values = perSubscriber.map((s) => s[key]).filter((v) => v !== null).sort((a, b) => a - b);
    return values.length ? { min: values[0], median: values[Math.floor(values.length / 2)], max: values[values.length - 1] } : null;
  };
  const worst = [...perSubscriber].sort((a, b) => (b.p99 ?? Infinity) - (a.p99 ?? Infinity)).slice(0, 3);
  return {
    ok: problems.length === 0,
    problems: problems.slice(0, 20),
    problemCount: problems.length,
    deliveries: receiver.healthyTotal,
    expected: receiver.healthyExpected,
    duplicates: perSubscriber.reduce((a, s) => a + s.duplicates, 0),
    scheduledEmitSeconds: round((lastScheduled - firstEmit) / 1000, 2),
    // the server writes no event before its time; later only when the reader held it back
    emitSeconds: round((lastEmit - firstEmit) / 1000, 2),
    emitRate: lastEmit > firstEmit ? round((E - 1) / ((lastEmit - firstEmit) / 1000), 1) : null,
    serverHeldBackMaxMs: round(writeDelayMax, 0),
    seconds: round(seconds, 2),
    deliveriesPerSecond: seconds ? round(receiver.healthyTotal / seconds, 0) : null,
    drainAfterLastEmitSeconds: receiver.lastArrival ? round((receiver.lastArrival - lastEmit) / 1000, 2) : null,
    lagMs: distribution(lags.subarray(0, n)),
    lagAfterServerWriteMs: distribution(afterWrite.subarray(0, n)),
    perSubscriberP99Ms: spreadOf("p99"),
    perSubscriberP50Ms: spreadOf("p50"),
    perSubscriberDoneSeconds: spreadOf("doneSeconds"),
    worstSubscribers: worst,
    receiver: { requests: receiver.requests, MB: round(receiver.bytes / 1048576), bytesPerRequest: receiver.requests ? Math.round(receiver.bytes / receiver.requests) : null },
  };
}

/** Waits until the receiver has every healthy delivery, nothing arrives for STALL_MS, `until()` says stop, or the timeout. */
async function awaitDeliveries(receiver, { timeoutMs, onTick = async () => {}, until = () => false }) {
  const started = now();
  let lastCount = -1;
  let changedAt = now();
  let loggedAt = now();
  const series = [];
  for (;;) {
    await sleep(250);
    const t = now();
    const count = receiver.healthyTotal;
    if (count !== lastCount) {
      lastCount = count;
      changedAt = t;
    }
    if (series.length === 0 || t - series[series.length - 1].t >= 1_000) {
      series.push({ t, deliveries: count, ...(await onTick()) });
    }
    if (t - loggedAt >= 10_000) {
      loggedAt = t;
      log(`  … ${count}/${receiver.healthyExpected} deliveries (${round((100 * count) / receiver.healthyExpected, 1)}%)`);
    }
    if (count >= receiver.healthyExpected) return { outcome: "done", series };
    if (until()) return { outcome: "stopped", series };
    if (t - changedAt > STALL_MS && count > 0) return { outcome: "stalled", series };
    if (t - started > timeoutMs) return { outcome: "timeout", series };
  }
}

/** Adds to each progress tick how many events were due and how many the server had written by then. */
function withEmitted(series, { scheduledAt, emittedAt }) {
  const sorted = Float64Array.from(emittedAt.filter((t) => t > 0)).sort();
  const count = (values, t) => {
    let lo = 0;
    let hi = values.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (values[mid] <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return series.map((s) => ({ ...s, t: round((s.t - scheduledAt[0]) / 1000, 1), due: count(scheduledAt, s.t), emitted: count(sorted, s.t) }));
}

/** The server's timeline of the scenario: when each event was due, and when it was written. */
async function emits(server) {
  const r = await (await fetch(`${server.url}/__bench/emits`)).json();
  const emittedAt = Float64Array.from(r.emittedAt);
  const interval = 1000 / r.scenario.watchRate;
  const scheduledAt = Float64Array.from(emittedAt, (_, j) => r.releasedAt + j * interval);
  return { scheduledAt, emittedAt };
}

async function release(server) {
  return (await (await fetch(`${server.url}/__bench/release`, { method: "POST" })).json()).releasedAt;
}

/** Runs `fn` over `items`, `concurrency` at a time, in order of start. */
async function pool(items, concurrency, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const k = next++;
        out[k] = await fn(items[k], k);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Ours

async function fanoutOurs({ server, bundle, receiver, scenario, p }) {
  const sc = await server.configure(scenario);
  const worker = await startWorker(bundle, "fanout", server.url);
  log(`ours: wrangler dev ready in ${round(worker.readyMs / 1000)} s (runtime workerd pid ${worker.runtimePid})`);
  const result = { scenario: sc };
  try {
    await api(worker, "PUT", "/informers/fanout", { resource: "pods", watchTimeoutSeconds: 600 });
    const synced = await pollStatus(worker, "fanout", (s) => s.synced && s.watch.state === "watching", { timeoutMs: 60_000, intervalMs: 200 });
    if (!synced.ok) throw new Error(`the informer did not sync in 60 s: ${JSON.stringify(synced.status)}`);
    receiver.reset({ subscribers: p.subscribers, events: p.events, listRv: sc.listRv, downMode: p.down, keys: p.watchPool });
    const createdAt = now();
    const created = await pool(Array.from({ length: p.subscribers }, (_, i) => i), 8, async (i) => {
      const t0 = now();
      const answer = await api(worker, "POST", "/informers/fanout/subscriptions", {
        url: receiver.url(i),
        replayExisting: false,
        maxBatchSize: p.batch,
        signing: p.signing,
      });
      return { id: answer.id, secret: answer.secret, publicKey: answer.publicKey, ms: now() - t0 };
    });
    const createMs = created.map((c) => c.ms).sort((a, b) => a - b);
    result.create = {
      seconds: round((now() - createdAt) / 1000, 2),
      perRequestMs: { p50: round(percentile(createMs, 0.5), 0), max: round(createMs[createMs.length - 1], 0) },
    };
    log(`ours: ${p.subscribers} subscriptions created in ${result.create.seconds} s`);
    // Every subscription has started (its first alarm read the empty log) and the informer counts them all.
    await sleep(2_000);
    const informer = await api(worker, "GET", "/informers/fanout");
    if (informer.subscriptions !== p.subscribers) throw new Error(`the informer counts ${informer.subscriptions} subscriptions, not ${p.subscribers}`);
    const watches = (await server.stats()).watches.length;
    if (watches < 1) throw new Error("the informer has no watch open");

    const cpu0 = procCpu(worker.runtimePid);
    const threads0 = threadCpu(worker.runtimePid);
    const self0 = process.cpuUsage();
    let profilePromise;
    let releasedAt;
    if (p.profile) {
      // profiles the measured run's first 15 s (the figures are then those of a profiled run)
      profilePromise = profileRuntime(worker.runtimePid, 15_000, async () => {
        releasedAt = await release(server);
      }).catch((error) => ({ error: error.message }));
      while (releasedAt === undefined) await sleep(20);
    } else {
      releasedAt = await release(server);
    }
    log(`ours: ${p.events} events released at ${p.rate} events/s`);
    let tail = 0;
    let tailReachedAt = null;
    const waited = await awaitDeliveries(receiver, {
      timeoutMs: p.timeoutSeconds * 1000,
      onTick: async () => {
        try {
          const s = await api(worker, "GET", "/informers/fanout");
          tail = s.eventLog.tail;
          if (tailReachedAt === null && tail >= p.events) tailReachedAt = now();
          return { tail, queueDepth: s.queueDepth };
        } catch (error) {
          return { statusError: error.message };
        }
      },
    });
    const cpu1 = procCpu(worker.runtimePid);
    const threads1 = threadCpu(worker.runtimePid);
    const self1 = process.cpuUsage(self0);
    const timeline = await emits(server);
    const start = timeline.scheduledAt[0]; // the release: when the first event was due
    Object.assign(result, measure(receiver, timeline));
    result.runtimeThreads = busiestThreads(threads0, threads1, (now() - releasedAt) / 1000);
    result.outcome = waited.outcome;
    if (waited.outcome !== "done") result.problems.unshift(`ended: ${waited.outcome} after ${round((now() - releasedAt) / 1000, 1)} s`);
    result.ok = result.ok && waited.outcome === "done";
    result.ingestDoneSeconds = tailReachedAt ? round((tailReachedAt - start) / 1000, 1) : null;
    result.runtimeCpuSeconds = cpuDelta(cpu0, cpu1);
    result.receiverCpuSeconds = round((self1.user + self1.system) / 1e6, 1);
    result.progress = withEmitted(waited.series, timeline);

    // Signatures: the first request of every healthy subscriber is signed with its secret (checked
    // as Webhook.verify does, without its 5-minute timestamp tolerance: the run may be longer).
    let verified = 0;
    const signatureErrors = [];
    for (const [i, { body, headers }] of receiver.firstBodies) {
      try {
        const id = headers["webhook-id"];
        const timestamp = new Date(Number(headers["webhook-timestamp"]) * 1000);
        if (!signedBy(created[i], id, timestamp, body, String(headers["webhook-signature"]))) throw new Error("signature mismatch");
        verified++;
      } catch (error) {
        signatureErrors.push(`subscriber ${i}: ${error.message}`);
      }
    }
    result.signatures = { verified, failed: signatureErrors.length, errors: signatureErrors.slice(0, 3) };
    if (signatureErrors.length) {
      result.ok = false;
      result.problems.push(`${signatureErrors.length} signatures did not verify`);
    }

    // Status of every subscription at the end; the down one in full, with its delivery log.
    const statuses = await pool(created, 8, (c) => api(worker, "GET", `/subscriptions/${c.id}`));
    const healthy = statuses.slice(0, -1);
    const down = statuses[statuses.length - 1];
    const attempts = await api(worker, "GET", `/subscriptions/${created[created.length - 1].id}/deliveries?limit=200`);
    // One healthy subscription's own delivery log: how long its POSTs took and how far apart they started.
    const sample = await api(worker, "GET", `/subscriptions/${created[0].id}/deliveries?limit=200`);
    const starts = sample.items.map((a) => Date.parse(a.at) - a.durationMs).sort((a, b) => a - b);
    result.healthyDeliveryLog = {
      attempts: sample.items.length,
      durationMs: distribution(sample.items.map((a) => a.durationMs)),
      startToStartMs: distribution(starts.slice(1).map((t, k) => t - starts[k])),
    };
    result.healthyStatus = {
      states: countBy(healthy.map((s) => s.state)),
      maxLag: Math.max(...healthy.map((s) => s.lag)),
      maxConsecutiveFailures: Math.max(...healthy.map((s) => s.consecutiveFailures)),
      deadLetters: healthy.reduce((a, s) => a + s.deadLetters, 0),
    };
    result.downStatus = {
      url: down.url,
      state: down.state,
      cursor: down.cursor,
      lag: down.lag,
      consecutiveFailures: down.consecutiveFailures,
      lastError: down.lastError,
      nextAttemptAt: down.nextAttemptAt,
      deadLetters: down.deadLetters,
      attempts: attempts.items.length,
      attemptTimesSeconds: attempts.items
        .map((a) => round((Date.parse(a.at) - start) / 1000, 1))
        .sort((a, b) => a - b),
      downEndpointHits: receiver.down.hits,
    };
    if (down.state !== "failing") result.problems.push(`the down subscription is '${down.state}', not 'failing'`);
    if (profilePromise) {
      const profile = await profilePromise;
      if (profile.error) result.profile = profile;
      else {
        fs.writeFileSync(path.join(RESULTS, "fanout.cpuprofile"), JSON.stringify(profile));
        // the profile's line numbers are the bundle's: keep it next to it
        fs.copyFileSync(path.join(bundle.dir, "index.js"), path.join(RESULTS, "fanout-bundle.js"));
        result.profile = { ...summarizeProfile(profile, 25), file: "bench/results/fanout.cpuprofile", bundle: "bench/results/fanout-bundle.js" };
      }
    }
    log(
      `ours: ${result.deliveries}/${result.expected} deliveries in ${result.seconds} s = ${result.deliveriesPerSecond}/s, ` +
        `lag p50 ${result.lagMs.p50} ms p99 ${result.lagMs.p99} ms max ${result.lagMs.max} ms ` +
        `(events written in ${result.emitSeconds} s, due in ${result.scheduledEmitSeconds} s); ` +
        `down subscription: ${down.state}, ${down.consecutiveFailures} consecutive failures` +
        (result.ok ? "" : ` — PROBLEMS: ${result.problems.slice(0, 3).join("; ")}`),
    );
  } catch (error) {
    Object.assign(result, { ok: false, error: error.message });
    log(`ours: fan-out failed: ${error.message}`);
  } finally {
    await worker.stop();
    result.log = scanLog(worker.logPath);
  }
  return result;
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

// ---------------------------------------------------------------------------------------------
// client-node

async function fanoutClientNode({ server, receiver, scenario, p }) {
  const sc = await server.configure(scenario);
  receiver.reset({ subscribers: p.subscribers, events: p.events, listRv: sc.listRv, downMode: p.down, keys: p.watchPool });
  const endpoints = Array.from({ length: p.subscribers }, (_, i) => receiver.url(i));
  const child = spawn(
    NODE,
    [
      path.join(ROOT, "bench", "fanout-client-node-runner.mjs"),
      "--server", server.url,
      "--endpoints", JSON.stringify(endpoints),
      "--count", String(p.events),
      "--timeout-ms", String(BASELINE_TIMEOUT_MS),
      "--timeout-seconds", String(p.timeoutSeconds + 120),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  const handle = { pid: child.pid };
  children.add(handle);
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  let exited = false;
  const exit = new Promise((resolve) => child.on("exit", (code) => ((exited = true), resolve(code))));
  const result = { scenario: sc };
  try {
    // ready: its list is done and its watch request is at the server (held until the release)
    const readyBy = now() + 60_000;
    while ((await server.stats()).watches.length < 1) {
      if (exited || now() > readyBy) throw new Error(`client-node did not open its watch: ${(out + err).slice(-2000)}`);
      await sleep(100);
    }
    await sleep(500);
    const cpu0 = procCpu(child.pid);
    const self0 = process.cpuUsage();
    await release(server);
    log(`client-node: ${p.events} events released at ${p.rate} events/s`);
    let cpuLast = cpu0;
    const waited = await awaitDeliveries(receiver, {
      timeoutMs: p.timeoutSeconds * 1000,
      until: () => exited,
      onTick: async () => {
        cpuLast = procCpu(child.pid) ?? cpuLast;
        return {};
      },
    });
    const self1 = process.cpuUsage(self0);
    const code = await Promise.race([exit, sleep(p.timeoutSeconds * 1000 + 150_000).then(() => "no exit")]);
    const line = out.trim().split("\n").pop();
    let r;
    try {
      r = JSON.parse(line);
    } catch {
      throw new Error(`the client-node runner exited with ${code} and no result:\n${(out + err).slice(-3000)}`);
    }
    const timeline = await emits(server);
    const start = timeline.scheduledAt[0];
    Object.assign(result, measure(receiver, timeline));
    result.outcome = waited.outcome;
    if (waited.outcome !== "done") result.problems.unshift(`ended: ${waited.outcome} (runner: ${r.outcome})`);
    result.ok = result.ok && waited.outcome === "done";
    result.runner = {
      outcome: r.outcome,
      callbacks: r.callbacks,
      lastCallbackSeconds: r.lastCallbackAt ? round((r.lastCallbackAt - start) / 1000, 2) : null,
      cpuSeconds: cpuDelta(cpu0, cpuLast),
      informerErrors: r.informerErrors,
      stderr: err.slice(-1000) || undefined,
    };
    result.receiverCpuSeconds = round((self1.user + self1.system) / 1e6, 1);
    result.progress = withEmitted(waited.series, timeline);
    const healthy = r.handlers.slice(0, -1);
    const down = r.handlers[r.handlers.length - 1];
    result.healthyPosts = { ok: healthy.reduce((a, h) => a + h.ok, 0), failed: healthy.reduce((a, h) => a + h.failed, 0) };
    result.downHandler = { ...down, downEndpointHits: receiver.down.hits, note: "each failed post is dropped: no retry" };
    if (result.healthyPosts.failed > 0) result.problems.push(`${result.healthyPosts.failed} posts to healthy endpoints failed (dropped)`);
    log(
      `client-node: ${result.deliveries}/${result.expected} deliveries in ${result.seconds} s = ${result.deliveriesPerSecond}/s, ` +
        `lag p50 ${result.lagMs.p50} ms p99 ${result.lagMs.p99} ms max ${result.lagMs.max} ms ` +
        `(events written in ${result.emitSeconds} s, due in ${result.scheduledEmitSeconds} s); ` +
        `down handler: ${down.failed} failed posts (${JSON.stringify(down.errors)}), none retried` +
        (result.ok ? "" : ` — PROBLEMS: ${result.problems.slice(0, 3).join("; ")}`),
    );
  } catch (error) {
    Object.assign(result, { ok: false, error: error.message });
    log(`client-node: fan-out failed: ${error.message}`);
  } finally {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // gone
    }
    await Promise.race([exit, sleep(5_000)]);
    children.delete(handle);
  }
  return result;
}

/**
 * Whether `signatures` (the `webhook-signature` header) carry the subscription's: `v1,` HMAC by the
 * Standard Webhooks library, or `v1a,` Ed25519 by Node's own crypto (the `whpk_` public key).
 */
function signedBy(subscription, id, timestamp, body, signatures) {
  if (subscription.publicKey === undefined) return signatures.split(" ").includes(new Webhook(subscription.secret).sign(id, timestamp, body));
  const key = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(subscription.publicKey.slice("whpk_".length), "base64").toString("base64url") }, format: "jwk" });
  const message = Buffer.from(`${id}.${Math.floor(timestamp.getTime() / 1000)}.${body}`);
  return signatures
    .split(" ")
    .filter((s) => s.startsWith("v1a,"))
    .some((s) => crypto.verify(null, message, key, Buffer.from(s.slice(4), "base64")));
}

// ---------------------------------------------------------------------------------------------

export async function runFanout({ opts, events, server, bundle, safe }) {
  const p = {
    subscribers: Number(opts.subscribers),
    events,
    rate: Number(opts.rate),
    batch: Number(opts.batch),
    signing: opts.signing,
    down: opts.down,
    watchPool: Number(opts["watch-pool"]),
    timeoutSeconds: Number(opts["fanout-timeout"]),
    profile: opts["profile-fanout"],
  };
  if (!(p.subscribers >= 2) || !(p.events >= 1) || !(p.rate > 0) || !["refused", "503"].includes(p.down) || !["hmac", "ed25519"].includes(p.signing)) {
    throw new Error("fan-out needs --subscribers >= 2, --events >= 1, --rate > 0, --down refused|503, --signing hmac|ed25519");
  }
  const scenario = { listSize: 0, watchEvents: p.events, watchPool: p.watchPool, watchRate: p.rate, watchHold: true };
  const receiver = new Receiver();
  await receiver.listen();
  receiver.reset({ subscribers: p.subscribers, events: p.events, listRv: 0, downMode: p.down, keys: p.watchPool });
  log(`c. fan-out: ${p.subscribers} subscribers (1 down: ${p.down === "refused" ? `connection refused at ${receiver.refusedUrl}` : "503"}), ${p.events} events at ${p.rate}/s, receiver ${receiver.base}`);
  try {
    const ours = await safe("ours (fan-out)", () => fanoutOurs({ server, bundle, receiver, scenario, p }));
    const clientNode = opts["skip-baseline"]
      ? { ok: false, skipped: true }
      : await safe("client-node (fan-out)", () => fanoutClientNode({ server, receiver, scenario, p }));
    return {
      parameters: { ...p, healthySubscribers: p.subscribers - 1, deliveriesExpected: (p.subscribers - 1) * p.events },
      ours,
      clientNode,
      ratios: {
        deliveriesPerSecond: ratio(ours.deliveriesPerSecond, clientNode.deliveriesPerSecond),
        lagP50: ratio(ours.lagMs?.p50, clientNode.lagMs?.p50),
        lagP99: ratio(ours.lagMs?.p99, clientNode.lagMs?.p99),
      },
      ok: Boolean(ours.ok && (clientNode.ok || clientNode.skipped)),
    };
  } finally {
    receiver.close();
  }
}

/** Rows for run.mjs's table. */
export function fanoutRows(f) {
  const { ours: o, clientNode: c, parameters: p } = f;
  const dnf = (r) => (r.error ? `FAILED (${r.error.slice(0, 60)})` : `DNF (${r.deliveries ?? 0}/${r.expected ?? "?"})`);
  const fig = (r, v) => (r.skipped ? "skipped" : r.outcome === "done" ? v : dnf(r));
  return [
    [
      `fan-out, ${p.subscribers - 1}+1 down × ${p.events} events at ${p.rate}/s: deliveries/s`,
      fig(o, o.deliveriesPerSecond),
      fig(c, c.deliveriesPerSecond),
      f.ratios.deliveriesPerSecond ?? "-",
      "every healthy delivery, in order per key",
      o.ok ? "PASS" : "FAIL",
    ],
    ["  lag p50 / p99 / max (ms)", o.lagMs ? `${o.lagMs.p50} / ${o.lagMs.p99} / ${o.lagMs.max}` : "-", c.lagMs ? `${c.lagMs.p50} / ${c.lagMs.p99} / ${c.lagMs.max}` : "-", f.ratios.lagP99 ? `p99 ${f.ratios.lagP99}` : "-", "", ""],
    [
      `  events written by the server in (s; due in ${o.scheduledEmitSeconds ?? c.scheduledEmitSeconds ?? "?"} s)`,
      o.emitSeconds ?? "-",
      c.emitSeconds ?? "-",
      "",
      "later than due = the reader held the stream back",
      "",
    ],
    [
      "  per-subscriber p99, min / median / max (ms)",
      o.perSubscriberP99Ms ? `${o.perSubscriberP99Ms.min} / ${o.perSubscriberP99Ms.median} / ${o.perSubscriberP99Ms.max}` : "-",
      c.perSubscriberP99Ms ? `${c.perSubscriberP99Ms.min} / ${c.perSubscriberP99Ms.median} / ${c.perSubscriberP99Ms.max}` : "-",
      "",
      "",
      "",
    ],
    [
      "  down subscriber at the end",
      o.downStatus ? `${o.downStatus.state}, ${o.downStatus.consecutiveFailures} failures, ${o.downStatus.attempts} attempts` : "-",
      c.downHandler ? `${c.downHandler.failed} posts failed, dropped` : "-",
      "",
      "",
      "",
    ],
  ];
}
