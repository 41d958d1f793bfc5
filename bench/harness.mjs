// Shared by the benchmarks (run.mjs, fanout.mjs): the project's paths, child processes stopped on
// exit, the stream server, our Worker bundled once and run by `wrangler dev`, its API and status
// polling, its log scan, the runtime's inspector and CPU profiles, and machine facts.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { wranglerDevArgs } from "../scripts/wrangler-dev-args.mjs";
import {
  Inspector,
  cmdline,
  descendants,
  freePort,
  listeningPorts,
  now,
  procCpu,
  round,
  run,
  waitFor,
} from "./lib.mjs";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const RESULTS = path.join(ROOT, "bench", "results");
export const NODE = process.execPath;
const WRANGLER = path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

export const WORK = fs.mkdtempSync(path.join(os.tmpdir(), "edge-informer-bench-"));
export const ENV = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false", // miniflare would fetch Request.cf from the Internet
  WRANGLER_SEND_METRICS: "false",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};
export const children = new Set(); // {pid, group} to stop on exit

export function log(message) {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function killChildren() {
  for (const child of children) {
    try {
      process.kill(child.group ? -child.pid : child.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  children.clear();
}
process.on("exit", () => {
  killChildren();
  fs.rmSync(WORK, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    process.exit(130);
  });
}

/** Stops everything after `ms` (the whole run); returns nothing, the timer does not hold the process. */
export function setHardDeadline(ms) {
  setTimeout(() => {
    log(`hard deadline of ${round(ms / 60_000, 1)} min reached: stopping everything`);
    process.exit(2);
  }, ms).unref();
}

// ---------------------------------------------------------------------------------------------
// The stream server

export async function startServer() {
  const child = spawn(NODE, [path.join(ROOT, "bench", "stream-server.mjs"), "--port", "0", "--max-watch-seconds", "900"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.add({ pid: child.pid });
  const port = await new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(() => reject(new Error("stream server did not start in 10 s")), 10_000);
    child.stdout.on("data", (d) => {
      buffer += d;
      const line = buffer.split("\n")[0];
      if (buffer.includes("\n")) {
        clearTimeout(timer);
        resolve(JSON.parse(line).port);
      }
    });
    child.on("exit", (code) => reject(new Error(`stream server exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    pid: child.pid,
    async configure(scenario) {
      const response = await fetch(`${url}/__bench/config`, { method: "POST", body: JSON.stringify(scenario) });
      return response.json();
    },
    async stats() {
      return (await fetch(`${url}/__bench/stats`)).json();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Our Worker: bundled once (frozen: src/ edits during the run change nothing), run by wrangler dev

export async function bundleWorker() {
  const buildDir = path.join(WORK, "build");
  const bundleDir = path.join(WORK, "bundle");
  fs.mkdirSync(buildDir);
  const toml = fs.readFileSync(path.join(ROOT, "wrangler.toml"), "utf8");
  if (!/^main\s*=.*$/m.test(toml)) throw new Error("wrangler.toml has no `main`");
  // Configs live in WORK so wrangler's .wrangler/ scratch files stay out of the project. The bench
  // bundle is not minified (same code, but CPU profiles keep readable function names).
  const buildToml = toml
    .replace(/^main\s*=.*$/m, `main = ${JSON.stringify(path.join(ROOT, "src", "index.ts"))}`)
    .replace(/^minify\s*=.*$/m, "minify = false");
  fs.writeFileSync(path.join(buildDir, "wrangler.toml"), buildToml);
  await run(NODE, [WRANGLER, "deploy", "--dry-run", "--outdir", bundleDir, "--config", path.join(buildDir, "wrangler.toml")], {
    cwd: buildDir,
    env: ENV,
  });
  fs.writeFileSync(path.join(bundleDir, "wrangler.toml"), toml.replace(/^main\s*=.*$/m, 'main = "index.js"'));
  const code = fs.readFileSync(path.join(bundleDir, "index.js"));
  return { dir: bundleDir, bytes: code.length, sha256: createHash("sha256").update(code).digest("hex").slice(0, 16) };
}

/**
 * `options.vars` are added to (and override) the fixed variables, e.g. TOKENS or WATCH_RELAYS;
 * `options.headers` (e.g. an admin credential's Authorization) go with api() and pollStatus().
 */
export async function startWorker(bundle, label, serverUrl, { vars = {}, headers = {} } = {}) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const persist = fs.mkdtempSync(path.join(WORK, `state-${label}-`));
  fs.mkdirSync(RESULTS, { recursive: true });
  const logPath = path.join(RESULTS, `wrangler-${label}.log`);
  const logFd = fs.openSync(logPath, "w");
  const args = [
    WRANGLER,
    ...wranglerDevArgs({
      config: path.join(bundle.dir, "wrangler.toml"),
      port,
      inspectorPort,
      persist,
      vars: { KUBE_API_URL: serverUrl, ALLOW_UNAUTHENTICATED: "true", INFORMERS: "[]", ...vars },
    }),
  ];
  const child = spawn(NODE, args, { cwd: bundle.dir, env: ENV, detached: true, stdio: ["ignore", logFd, logFd] });
  fs.closeSync(logFd);
  const handle = { pid: child.pid, group: true };
  children.add(handle);
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const base = `http://127.0.0.1:${port}`;
  const startedAt = now();
  await waitFor(async () => (await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok, {
    timeoutMs: 90_000,
    intervalMs: 250,
    what: `wrangler dev on ${base} (log: ${logPath})`,
  });
  // wrangler dev runs two workerd: a proxy on the dev port and the runtime hosting the Durable Objects.
  const runtime = await waitFor(
    () => {
      const workerds = descendants(child.pid).filter((p) => p.comm === "workerd");
      const candidates = workerds.filter((p) => !cmdline(p.pid).some((a) => a === `--socket-addr=entry=127.0.0.1:${port}`));
      return candidates.length === 1 ? candidates[0].pid : undefined;
    },
    { timeoutMs: 10_000, what: "the runtime workerd process" },
  );
  const worker = {
    base,
    label,
    headers,
    logPath,
    runtimePid: runtime,
    readyMs: now() - startedAt,
    async stop() {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // gone
      }
      const done = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!done) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // gone
        }
        await Promise.race([exited, sleep(5_000)]);
      }
      children.delete(handle);
      fs.rmSync(persist, { recursive: true, force: true });
    },
  };
  return worker;
}

/** The runtime's own inspector (not wrangler's proxy): found among the ports the runtime listens on. */
export async function runtimeInspectorUrl(pid) {
  for (const port of listeningPorts(pid)) {
    try {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(1_000) })).json();
      const target = Array.isArray(targets) && targets.find((t) => String(t.id).startsWith("core:user:"));
      if (target) return target.webSocketDebuggerUrl.replace("ws://localhost:", "ws://127.0.0.1:");
    } catch {
      // not the inspector
    }
  }
  return undefined;
}

export async function api(worker, method, pathname, body) {
  const response = await fetch(`${worker.base}${pathname}`, {
    method,
    headers: { ...(worker.headers ?? {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${text.slice(0, 500)}`);
  return text ? JSON.parse(text) : null;
}

/**
 * Polls GET /informers/{name} every `intervalMs` (from the start of one poll to the next) until
 * `done(status)`. Returns when it was first seen true, poll latencies, and a 1 s progress series.
 * Gives up early when nothing moves for `stallMs`: no change in the status nor in the bytes the
 * server has sent, while the runtime used under 10% of a core (a stuck loop, e.g. a failing alarm).
 */
export async function pollStatus(worker, name, done, { timeoutMs, intervalMs = 100, server, stallMs = 60_000 }) {
  const started = now();
  const latencies = [];
  const series = [];
  let errors = 0;
  let last;
  let lastErrorText = null;
  let signature;
  let changedAt = now();
  let cpuAtChange = procCpu(worker.runtimePid)?.total ?? 0;
  let checkedAt = 0;
  while (now() - started < timeoutMs) {
    const t0 = now();
    try {
      const response = await fetch(`${worker.base}/informers/${name}`, { headers: worker.headers ?? {}, signal: AbortSignal.timeout(60_000) });
      const t1 = now();
      latencies.push(t1 - t0);
      if (response.ok) {
        last = await response.json();
        if (series.length === 0 || t1 - series[series.length - 1].t >= 1_000) {
          series.push({
            t: t1,
            objects: last.objects,
            queueDepth: last.queueDepth,
            tail: last.eventLog.tail,
            synced: last.synced,
            watch: last.watch.state,
            ...(last.lastError ? { lastError: last.lastError } : {}),
          });
        }
        if (done(last)) return { ok: true, at: t1, status: last, ...pollStats(latencies, errors, lastErrorText), series };
      } else {
        errors++;
        lastErrorText = `${response.status} ${(await response.text()).slice(0, 300)}`;
      }
    } catch (error) {
      errors++;
      lastErrorText = error.message;
    }
    if (server && now() - checkedAt >= 2_000) {
      checkedAt = now();
      const stats = await server.stats();
      const sent = [...stats.lists, ...stats.watches].reduce((a, r) => a + r.bytes, 0);
      const next = JSON.stringify([last?.objects, last?.queueDepth, last?.eventLog.tail, last?.synced, last?.watch.state, sent]);
      const cpu = procCpu(worker.runtimePid)?.total ?? 0;
      if (next !== signature) {
        signature = next;
        changedAt = now();
        cpuAtChange = cpu;
      } else if (now() - changedAt > stallMs && cpu - cpuAtChange < (0.1 * stallMs) / 1000) {
        return { ok: false, stalled: true, at: now(), status: last, ...pollStats(latencies, errors, lastErrorText), series };
      }
    }
    const wait = intervalMs - (now() - t0);
    if (wait > 0) await sleep(wait);
  }
  return { ok: false, at: now(), status: last, ...pollStats(latencies, errors, lastErrorText), series };
}

function pollStats(latencies, errors, lastErrorText) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    polls: latencies.length,
    pollErrors: errors,
    lastPollError: lastErrorText,
    pollLatencyMs: {
      p50: round(sorted[Math.floor(sorted.length * 0.5)] ?? null, 0),
      p95: round(sorted[Math.floor(sorted.length * 0.95)] ?? null, 0),
      max: round(sorted[sorted.length - 1] ?? null, 0),
    },
  };
}

/** Lines of a wrangler log that look like trouble (errors, exceptions, reloads, 5xx answers), deduplicated. */
export function scanLog(logPath) {
  let text = "";
  try {
    text = fs.readFileSync(logPath, "utf8");
  } catch {
    return { lines: 0, problemCount: 0, problems: [] };
  }
  const lines = text.replace(/\x1b\[[0-9;]*m/g, "").split("\n");
  const counts = new Map();
  let problemCount = 0;
  for (const line of lines) {
    if (!/error|exception|uncaught|✘|failed|reloading|\b5\d\d\b/i.test(line) || /Request\.cf|update available/i.test(line)) continue;
    problemCount++;
    const key = line.trim().slice(0, 400);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const problems = [...counts].slice(0, 15).map(([line, count]) => (count > 1 ? `${line} (×${count})` : line));
  return { lines: lines.length, problemCount, problems };
}

/**
 * CPU-profiles the runtime's isolate for `ms`, over a fresh inspector session. workerd's inspector
 * sometimes drops or stops answering a session: each step is bounded and the whole is retried.
 */
export async function profileRuntime(pid, ms, beforeStart = async () => {}) {
  let lastError;
  let begun = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    let inspector;
    try {
      const url = await runtimeInspectorUrl(pid);
      if (!url) throw new Error("the runtime's inspector was not found");
      inspector = await Inspector.connect(url);
      await inspector.call("Profiler.enable", {}, 5_000);
      await inspector.call("Profiler.setSamplingInterval", { interval: 1000 }, 5_000);
      await inspector.call("Profiler.start", {}, 5_000);
      if (!begun) {
        begun = true;
        await beforeStart();
      }
      await sleep(ms);
      const { profile } = await inspector.call("Profiler.stop", {}, 60_000);
      return profile;
    } catch (error) {
      lastError = error;
    } finally {
      inspector?.close();
    }
    await sleep(500);
  }
  throw lastError;
}

// ---------------------------------------------------------------------------------------------

export async function machineInfo() {
  const versionOf = (pkg) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
    } catch {
      return null;
    }
  };
  let workerd = null;
  try {
    const bin = path.join(ROOT, "node_modules", "@cloudflare", "workerd-linux-64", "bin", "workerd");
    workerd = (await run(bin, ["--version"], { timeoutMs: 10_000 })).trim();
  } catch {
    // other platform
  }
  let git = null;
  try {
    const head = (await run("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, timeoutMs: 10_000 })).trim();
    const dirty = (await run("git", ["status", "--porcelain", "--", "src", "wrangler.toml"], { cwd: ROOT, timeoutMs: 10_000 }))
      .split("\n")
      .filter(Boolean);
    git = { head, uncommittedInSrc: dirty };
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    nproc: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? null,
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    loadAverageAtStart: os.loadavg().map((x) => round(x, 2)),
    node: process.version,
    workerd,
    wrangler: versionOf("wrangler"),
    miniflare: versionOf("miniflare"),
    clientNode: versionOf("@kubernetes/client-node"),
    git,
  };
}

export function ratio(a, b) {
  return a && b ? round(a / b, 3) : null;
}

export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => String(c ?? "").padEnd(widths[i])).join("  ")).join("\n");
}

