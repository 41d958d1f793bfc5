/**
 * Runs our Worker as a real HTTP server for the end-to-end tests: bundled once with
 * `wrangler deploy --dry-run` (so edits to src/ during a run change nothing, as in bench/harness.mjs),
 * then served by `wrangler dev --no-bundle` on a free loopback port, with fresh Durable Object storage
 * (a temp `--persist-to`). wrangler runs in its own process group, and `stop()` signals the whole
 * group (wrangler and its two workerd), SIGTERM then SIGKILL, so nothing outlives the run.
 * `kill9()` is a crash: SIGKILL to the group at once, storage kept; `restart()` then serves the same
 * bundle and storage again (on a new port: `url` changes), as a runtime that came back would.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { wranglerDevArgs } from "../../scripts/wrangler-dev-args.mjs";
import { freePort, waitFor } from "./wait.ts";

export const ROOT = resolve(import.meta.dirname, "..", "..");
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
const BUNDLE_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;
const SYNC_TIMEOUT_MS = 60_000;

/** The environment wrangler runs in: no telemetry, no Internet lookups, no colours in the log. */
const WRANGLER_ENV = {
  ...process.env,
  CLOUDFLARE_CF_FETCH_ENABLED: "false", // miniflare would fetch Request.cf from the Internet
  WRANGLER_SEND_METRICS: "false",
  NO_COLOR: "1",
  FORCE_COLOR: "0",
};

export interface WorkerOptions {
  /** Worker variables and secrets (`--var NAME:value`), e.g. KUBE_API_URL, INFORMERS, READ_TOKEN. */
  vars: Record<string, string>;
}

export interface RunningWorker {
  /** e.g. http://127.0.0.1:40123 */
  url: string;
  pid: number;
  /** wrangler's combined stdout/stderr, for failure messages. */
  logPath: string;
  stop(): Promise<void>;
  /** SIGKILL to wrangler and both workerd, no grace: the Durable Objects' storage stays as it was. */
  kill9(): Promise<void>;
  /** After kill9(): the same bundle on the same storage, on a new port (`url`, `pid`, `logPath` change). */
  restart(): Promise<void>;
}

/** Runs a command to completion within `timeoutMs`; rejects with its output on a non-zero exit. */
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env: WRANGLER_ENV, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d));
    child.stderr.on("data", (d: Buffer) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(out);
      else reject(new Error(`${command} ${args.join(" ")} exited with ${code ?? signal}:\n${out.slice(-4000)}`));
    });
  });
}

/** Bundles src/ into `dir` once; returns the directory holding index.js and its wrangler.toml. */
async function bundle(dir: string): Promise<string> {
  const buildDir = join(dir, "build");
  const bundleDir = join(dir, "bundle");
  mkdirSync(buildDir);
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  if (!/^main\s*=.*$/m.test(toml)) throw new Error("wrangler.toml has no `main`");
  // The configs live in the temp dir so wrangler's .wrangler/ scratch files stay out of the project.
  writeFileSync(join(buildDir, "wrangler.toml"), toml.replace(/^main\s*=.*$/m, `main = ${JSON.stringify(join(ROOT, "src", "index.ts"))}`));
  await run(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", bundleDir, "--config", join(buildDir, "wrangler.toml")], buildDir, BUNDLE_TIMEOUT_MS);
  writeFileSync(join(bundleDir, "wrangler.toml"), toml.replace(/^main\s*=.*$/m, 'main = "index.js"'));
  return bundleDir;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

interface Launched {
  url: string;
  child: ChildProcess;
  logPath: string;
  exited: Promise<void>;
}

/** Runs `wrangler dev` on the bundle and storage; resolves once GET /healthz answers 200. */
async function launch(bundleDir: string, persist: string, logPath: string, vars: Record<string, string>, track: (child: ChildProcess) => void): Promise<Launched> {
  const port = await freePort();
  const inspectorPort = await freePort();
  const logFd = openSync(logPath, "w");
  // The suites read /metrics and the status page right after each change: no snapshot kept unless a test asks.
  const args = [WRANGLER, ...wranglerDevArgs({ config: join(bundleDir, "wrangler.toml"), port, inspectorPort, persist, vars: { METRICS_SNAPSHOT_SECONDS: "0", ...vars } })];
  const child = spawn(process.execPath, args, { cwd: bundleDir, env: WRANGLER_ENV, detached: true, stdio: ["ignore", logFd, logFd] });
  closeSync(logFd);
  track(child);
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (gone) throw new Error(`wrangler dev exited early:\n${readFileSync(logPath, "utf8").slice(-4000)}`);
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      return response.ok;
    },
    { timeoutMs: START_TIMEOUT_MS, intervalMs: 200, what: `wrangler dev on ${url} (log: ${logPath})`, retryErrors: (e) => !String(e).includes("exited early") },
  );
  return { url, child, logPath, exited };
}

/** Bundles and starts the Worker; resolves once GET /healthz answers 200. */
export async function startWorker(options: WorkerOptions): Promise<RunningWorker> {
  const dir = mkdtempSync(join(tmpdir(), "edge-informer-e2e-worker-"));
  let child: ChildProcess | undefined;
  const track = (started: ChildProcess) => (child = started);
  const cleanup = () => {
    if (child) killGroup(child, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  // A vitest process that dies without teardown still takes the Worker with it.
  process.once("exit", cleanup);
  try {
    const bundleDir = await bundle(dir);
    const persist = join(dir, "state");
    let current = await launch(bundleDir, persist, join(dir, "wrangler.log"), options.vars, track);
    let launches = 1;
    const worker: RunningWorker = {
      url: current.url,
      pid: current.child.pid!,
      logPath: current.logPath,
      async stop() {
        const { child: started, exited } = current;
        killGroup(started, "SIGTERM");
        if (!(await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]))) {
          killGroup(started, "SIGKILL");
          await Promise.race([exited, sleep(STOP_GRACE_MS)]);
        }
        // workerd may outlive wrangler for a moment; the group kill reaches it as well.
        killGroup(started, "SIGKILL");
        process.off("exit", cleanup);
        rmSync(dir, { recursive: true, force: true });
      },
      async kill9() {
        killGroup(current.child, "SIGKILL");
        await Promise.race([current.exited, sleep(STOP_GRACE_MS)]);
      },
      async restart() {
        launches++;
        current = await launch(bundleDir, persist, join(dir, `wrangler-${launches}.log`), options.vars, track);
        Object.assign(worker, { url: current.url, pid: current.child.pid!, logPath: current.logPath });
      },
    };
    return worker;
  } catch (error) {
    cleanup();
    process.off("exit", cleanup);
    throw error;
  }
}

/**
 * Resolves once each of the Worker's informers `names` reports synced (GET /informers/{name}, with
 * `adminToken` when the Worker has one); rejects at once when one reports an error instead.
 */
export async function waitInformersSynced(worker: Pick<RunningWorker, "url" | "logPath">, names: readonly string[], adminToken?: string): Promise<void> {
  const headers: Record<string, string> = adminToken === undefined ? {} : { authorization: `Bearer ${adminToken}` };
  for (const name of names) {
    await waitFor(
      async () => {
        const response = await fetch(`${worker.url}/informers/${name}`, { headers, signal: AbortSignal.timeout(5_000) });
        if (!response.ok) throw new Error(`GET /informers/${name}: ${response.status} ${await response.text()}`);
        const status = (await response.json()) as { synced: boolean; lastError: string | null };
        if (!status.synced && status.lastError) throw new Error(`informer ${name}: ${status.lastError}`);
        return status.synced;
      },
      { timeoutMs: SYNC_TIMEOUT_MS, intervalMs: 200, what: `informer ${name} to sync (log: ${worker.logPath})` },
    );
  }
}
