// Helpers for bench/run.mjs: processes, ports, /proc memory sampling, the workerd inspector.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** Epoch milliseconds with sub-millisecond precision, comparable across processes. */
export const now = () => performance.timeOrigin + performance.now();
export const MB = 1024 * 1024;
export const round = (x, digits = 1) => (x === null || x === undefined || Number.isNaN(x) ? null : Math.round(x * 10 ** digits) / 10 ** digits);

/** A small deterministic PRNG (mulberry32), so runs ask for (and make) the same objects. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs a command to completion (bounded), returning its output; rejects on a non-zero exit. */
export function run(command, args, { cwd, env, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code ?? signal}:\n${out.slice(-4000)}`));
    });
  });
}

/** Reads VmRSS / VmHWM (bytes) of a process; undefined if it is gone. */
export function procMemory(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const field = (name) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text);
    return m ? Number(m[1]) * 1024 : null;
  };
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** CPU time of a process in seconds: {user, system, total}; null if it is gone. */
export function procCpu(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const user = Number(fields[11]) / 100; // utime, in clock ticks (USER_HZ = 100 on Linux)
    const system = Number(fields[12]) / 100; // stime
    return { user, system, total: user + system };
  } catch {
    return null;
  }
}

export function cpuDelta(before, after) {
  if (!before || !after) return null;
  return { user: round(after.user - before.user), system: round(after.system - before.system), total: round(after.total - before.total) };
}

/** Samples a process's VmRSS every `intervalMs` from outside (works while the process is busy). */
export class RssSampler {
  constructor(pid, intervalMs = 50) {
    this.pid = pid;
    this.samples = [];
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.sample();
  }
  sample() {
    const m = procMemory(this.pid);
    if (m && m.rss !== null) this.samples.push({ t: now(), rss: m.rss, hwm: m.hwm });
  }
  stop() {
    clearInterval(this.timer);
    this.sample();
  }
  /** Median RSS of the samples taken in [from, to). */
  medianBetween(from, to) {
    const values = this.samples.filter((s) => s.t >= from && s.t < to).map((s) => s.rss).sort((a, b) => a - b);
    return values.length ? values[Math.floor(values.length / 2)] : null;
  }
  peakBetween(from, to = Number.POSITIVE_INFINITY) {
    let peak = null;
    for (const s of this.samples) if (s.t >= from && s.t < to && (peak === null || s.rss > peak.rss)) peak = s;
    return peak;
  }
  last() {
    return this.samples[this.samples.length - 1];
  }
  /** The sample closest to time t. */
  at(t) {
    let best;
    for (const s of this.samples) if (!best || Math.abs(s.t - t) < Math.abs(best.t - t)) best = s;
    return best;
  }
  /** One sample per `stepMs` (the peak of each step), times relative to `origin`, in MB. */
  series(origin, stepMs = 1_000) {
    const out = [];
    for (const s of this.samples) {
      if (s.t < origin) continue;
      const slot = Math.floor((s.t - origin) / stepMs);
      const mb = Math.round((s.rss / MB) * 10) / 10;
      if (!out[slot] || out[slot].mb < mb) out[slot] = { t: round((slot * stepMs) / 1000, 1), mb };
    }
    return out.filter(Boolean);
  }
}

/** pid → {ppid, comm} for every process. */
function processTable() {
  const table = new Map();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      table.set(Number(entry), { ppid, comm });
    } catch {
      // gone
    }
  }
  return table;
}

export function descendants(rootPid) {
  const table = processTable();
  const out = [];
  const walk = (pid) => {
    for (const [child, info] of table) {
      if (info.ppid === pid) {
        out.push({ pid: child, comm: info.comm });
        walk(child);
      }
    }
  };
  walk(rootPid);
  return out;
}

export function cmdline(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** TCP ports a process listens on (IPv4, from /proc/net/tcp matched to its socket inodes), by fd number. */
export function listeningPorts(pid) {
  const fdOfInode = new Map();
  try {
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) fdOfInode.set(m[1], Number(fd));
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return [];
  }
  const ports = [];
  for (const line of fs.readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== "0A") continue; // LISTEN
    if (fdOfInode.has(cols[9])) ports.push({ port: parseInt(cols[1].split(":")[1], 16), fd: fdOfInode.get(cols[9]) });
  }
  return ports.sort((a, b) => a.fd - b.fd).map((p) => p.port);
}

/** A minimal Chrome DevTools Protocol client over the global WebSocket (Node ≥ 22). */
export class Inspector {
  /** workerd drops the first session after start (observed with 2026-11-02): retry a few times. */
  static async connect(url, { attempts = 4, timeoutMs = 5_000 } = {}) {
    let lastError;
    for (let i = 0; i < attempts; i++) {
      try {
        return await Inspector.connectOnce(url, timeoutMs);
      } catch (error) {
        lastError = error;
        await sleep(250);
      }
    }
    throw lastError;
  }

  static async connectOnce(url, timeoutMs) {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector ${url}: no connection in ${timeoutMs} ms`)), timeoutMs);
      ws.onopen = () => {
        clearTimeout(timer);
        resolve();
      };
      ws.onerror = (e) => {
        clearTimeout(timer);
        reject(new Error(`inspector ${url}: ${e.message ?? "connection failed"}`));
      };
    });
    const inspector = new Inspector(ws);
    // workerd closes a session whose first command is not Runtime.enable
    await inspector.call("Runtime.enable", {}, timeoutMs);
    return inspector;
  }
  constructor(ws) {
    this.ws = ws;
    this.nextId = 0;
    this.pending = new Map();
    ws.onmessage = (message) => {
      const data = JSON.parse(message.data);
      const waiter = data.id !== undefined && this.pending.get(data.id);
      if (waiter) {
        this.pending.delete(data.id);
        if (data.error) waiter.reject(new Error(`${data.error.message} (${data.error.code})`));
        else waiter.resolve(data.result);
      }
    };
    ws.onclose = () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error("inspector closed"));
      this.pending.clear();
    };
  }
  call(method, params = {}, timeoutMs = 60_000) {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }
  close() {
    try {
      this.ws.close();
    } catch {
      // already closed
    }
  }
}

/** Samples the isolate heap (Runtime.getHeapUsage) every `intervalMs`, one call in flight at most. */
export class HeapSampler {
  constructor(inspector, intervalMs = 200) {
    this.inspector = inspector;
    this.samples = [];
    this.errors = 0;
    this.maxLatencyMs = 0;
    this.inFlight = false;
    this.timer = setInterval(() => this.sample(), intervalMs);
  }
  async sample() {
    if (this.inFlight) return;
    this.inFlight = true;
    const t0 = now();
    try {
      const usage = await this.inspector.call("Runtime.getHeapUsage", {}, 30_000);
      const t1 = now();
      this.maxLatencyMs = Math.max(this.maxLatencyMs, t1 - t0);
      this.samples.push({ t: t1, used: usage.usedSize, total: usage.totalSize });
    } catch {
      this.errors++;
    } finally {
      this.inFlight = false;
    }
  }
  stop() {
    clearInterval(this.timer);
  }
}

/** Self and inclusive time by function of a V8 CPU profile (the top `n` of each). */
export function summarizeProfile(profile, n = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const timeOf = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    timeOf.set(id, (timeOf.get(id) ?? 0) + dt);
    total += dt;
  });
  const label = (node) => {
    const cf = node.callFrame;
    const file = cf.url ? cf.url.split("/").pop() : "";
    return `${cf.functionName || "(anonymous)"}${file ? ` ${file}:${cf.lineNumber + 1}` : ""}`;
  };
  const self = new Map();
  const inclusive = new Map();
  for (const [id, t] of timeOf) {
    const node = byId.get(id);
    self.set(label(node), (self.get(label(node)) ?? 0) + t);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const name = byId.get(cur).callFrame.functionName || "(anonymous)";
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + t);
    }
  }
  const top = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, t]) => ({ name, ms: round(t / 1000, 0), percent: round((100 * t) / total, 1) }));
  return { totalMs: round(total / 1000, 0), self: top(self), inclusive: top(inclusive) };
}

export async function waitFor(fn, { timeoutMs, intervalMs = 250, what }) {
  const end = Date.now() + timeoutMs;
  let lastError;
  while (Date.now() < end) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError.message}` : ""}`);
}

/** CPU seconds of each thread of a process: tid → {comm, total}. */
export function threadCpu(pid) {
  const out = new Map();
  let tids = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, { comm, total: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // gone
    }
  }
  return out;
}

/** The busiest threads between two threadCpu() readings, as a share of one core over `seconds`. */
export function busiestThreads(before, after, seconds, count = 3) {
  return [...after]
    .map(([tid, t]) => ({ tid, comm: t.comm, cpuSeconds: round(t.total - (before.get(tid)?.total ?? 0), 1) }))
    .sort((a, b) => b.cpuSeconds - a.cpuSeconds)
    .slice(0, count)
    .map((t) => ({ ...t, shareOfOneCore: round(t.cpuSeconds / seconds, 2) }));
}

