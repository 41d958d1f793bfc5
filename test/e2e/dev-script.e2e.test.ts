/**
 * `npm start` (scripts/dev.mjs), run against a stub `wrangler` first on PATH: it reports "running"
 * only for the Worker it started. A taken port fails at once with the way out; a Worker that does not
 * echo this run's id is not taken for ours; `--port` and `PORT` choose the port; wrangler runs with
 * CLOUDFLARE_CF_FETCH_ENABLED=false (offline, miniflare's Request.cf fetch would print ENOTFOUND).
 * Without KUBE_API_URL it runs two simulated clusters, `default` and `staging` (declared in CLUSTERS,
 * demo informers in INFORMERS for both; the stub reads the pods each serves), and reports "running"
 * only once every cluster's informers have synced; with KUBE_API_URL it passes that one cluster on.
 * The banner points kubectl at the Worker's /k8s, never at a simulated API server. State is kept
 * across runs in one directory (.wrangler/state, gitignored; `--persist-to`), emptied by `--fresh`,
 * and owned by one run at a time. Each test gets a state directory of its own unless it says otherwise.
 * One test runs the real wrangler three times on one state directory: what the first run added is
 * there in the second (whose new simulated clusters make the kept cache relist), and gone with --fresh.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useStubWrangler } from "./stub-wrangler.ts";
import { freePort, listenOnLoopback, waitFor } from "./wait.ts";

/**
 * Records its arguments and environment, and the pods each cluster's server (KUBE_API_URL and those
 * in CLUSTERS) answers, then serves /healthz and the informer lists as STUB_MODE says; the informers
 * listed at STUB_UNSYNCED (a path) never sync.
 */
const STUB = `#!/usr/bin/env node
const http = require("node:http");
const fs = require("node:fs");
const args = process.argv.slice(2);
const vars = Object.fromEntries(args.filter((a, i) => args[i - 1] === "--var").map((a) => [a.slice(0, a.indexOf(":")), a.slice(a.indexOf(":") + 1)]));
const servers = { default: vars.KUBE_API_URL };
for (const [name, cluster] of Object.entries(JSON.parse(vars.CLUSTERS ?? "{}"))) servers[name] = cluster.server;
(async () => {
  const pods = {};
  for (const [name, server] of Object.entries(servers)) {
    try {
      pods[name] = (await (await fetch(server + "/api/v1/pods")).json()).items.map((p) => p.metadata.namespace + "/" + p.metadata.name);
    } catch {
      pods[name] = null;
    }
  }
  fs.writeFileSync(process.env.STUB_RECORD, JSON.stringify({ args, vars, pods, cfFetch: process.env.CLOUDFLARE_CF_FETCH_ENABLED }));
  const port = Number(args[args.indexOf("--port") + 1]);
  const server = http.createServer((req, res) => {
    const headers = process.env.STUB_MODE === "ours" ? { "x-edge-informer-dev-run": vars.DEV_RUN_ID } : {};
    if (req.url === "/healthz") return res.writeHead(200, headers).end("ok");
    const synced = req.url !== process.env.STUB_UNSYNCED;
    res.writeHead(200, { ...headers, "content-type": "application/json" }).end(JSON.stringify({ items: [{ name: "pods", synced }] }));
  });
  server.listen(port, "127.0.0.1");
})();
process.on("SIGTERM", () => process.exit(0));
`;

const stubDir = useStubWrangler("dev-script-test", STUB);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the stub wrangler was started with, if it was, and the pods each cluster's server answered it. */
  wrangler?: { args: string[]; vars: Record<string, string>; pods: Record<string, string[] | null>; cfFetch?: string };
}

const ROOT = resolve(import.meta.dirname, "../..");
const LOCK_FILE = "npm-start.lock";
/** A pid no process has (above Linux's pid_max). */
const DEAD_PID = 2 ** 31 - 1;

/** A state directory of its own, not yet created. */
const newStateDir = () => join(stubDir(), `state-${Math.random().toString(36).slice(2)}`);

interface StartOptions {
  /** Use the project's state directory (.wrangler/state) instead of a new one. */
  projectState?: boolean;
  /** Run the real wrangler (node_modules/.bin) instead of the stub. */
  realWrangler?: boolean;
  /** Runs once the Worker is reported running, before it is stopped; its failure fails the run. */
  whileRunning?: () => Promise<void>;
}

/**
 * Runs `npm start` with `args` until it exits, or until it printed "is running" (then stops it).
 * Without `--persist-to` in `args` it gets a new state directory, so tests never touch the project's.
 */
function start(args: string[], env: Record<string, string> = {}, { projectState = false, realWrangler = false, whileRunning }: StartOptions = {}): Promise<Run> {
  const record = join(stubDir(), `record-${Math.random().toString(36).slice(2)}.json`);
  const state = projectState || args.includes("--persist-to") ? [] : ["--persist-to", newStateDir()];
  const path = realWrangler ? `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` : `${stubDir()}:${process.env.PATH}`;
  const child = spawn(process.execPath, ["scripts/dev.mjs", ...state, ...args], {
    env: { ...process.env, PATH: path, STUB_RECORD: record, STUB_MODE: "ours", STUB_UNSYNCED: "", DEV_READY_WAIT_S: realWrangler ? "120" : "4", KUBE_API_URL: "", FAKE_APISERVER_PORT: "0", PORT: "", ...env },
  });
  let stdout = "";
  let stderr = "";
  let running: Promise<void> | undefined;
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    if (!running && stdout.includes("edge-informer is running")) {
      running = (whileRunning?.() ?? Promise.resolve()).finally(() => child.kill("SIGTERM"));
    }
  });
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => {
      const wrangler = existsSync(record) ? JSON.parse(readFileSync(record, "utf8")) : undefined;
      (running ?? Promise.resolve()).then(() => resolve({ code, stdout, stderr, ...(wrangler ? { wrangler } : {}) }), reject);
    });
  });
}

async function occupied(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  return { port: await listenOnLoopback(server), server };
}

describe("npm start (scripts/dev.mjs)", () => {
  it("fails at once, naming the way out, when the port is taken, and starts nothing", async () => {
    const { port, server } = await occupied();
    const state = newStateDir();
    try {
      const run = await start(["--port", String(port), "--persist-to", state]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port} is already in use`);
      expect(run.stderr).toContain(`npm start -- --port ${port + 1}`);
      expect(run.stdout).not.toContain("is running");
      expect(run.stdout).not.toContain("simulated Kubernetes API servers"); // checked before anything starts
      expect(existsSync(state)).toBe(false);
      expect(run.wrangler).toBeUndefined();
    } finally {
      server.close();
    }
  });

  it("takes the port from PORT as well", async () => {
    const { port, server } = await occupied();
    try {
      const run = await start([], { PORT: String(port) });
      expect([run.code, run.stderr]).toEqual([1, expect.stringContaining(`port ${port} is already in use`)]);
    } finally {
      server.close();
    }
  });

  it.each([
    ["a port that is not a number", ["--port", "http"], /port 'http' is not a TCP port/],
    ["a port out of range", ["--port", "70000"], /port '70000' is not a TCP port/],
    ["an unknown option", ["--prot", "8788"], /Unknown option '--prot'[\s\S]*usage: npm start \[-- --port N\] \[--fresh\] \[--persist-to DIR\]/],
  ])("refuses %s", async (_, args, message) => {
    const run = await start(args);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.wrangler).toBeUndefined();
  });

  it("reports the Worker it started on --port, with Request.cf fetching off", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)]);
    expect(run.stdout).toContain(`edge-informer is running at http://127.0.0.1:${port}`);
    expect(run.stdout).toContain(`/subscriptions/<its id>/enable`);
    expect(run.wrangler?.args).toEqual(expect.arrayContaining(["dev", "--port", String(port), "--ip", "127.0.0.1"]));
    expect(run.wrangler?.cfFetch).toBe("false");
  }, 30_000);

  it("runs two simulated clusters, default and staging, each with the demo informers, and prints both", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)]);
    const base = `http://127.0.0.1:${port}`;
    const stdout = run.stdout;
    expect(stdout).toMatch(/simulated Kubernetes API servers for edge-informer to watch: 'default' at http:\/\/127\.0\.0\.1:\d+, 'staging' at http:\/\/127\.0\.0\.1:\d+\/clusters\/staging\n/);
    expect(stdout).toContain(`edge-informer is running at ${base}, mirroring 2 clusters: default, staging`);
    expect(stdout).toContain(`curl ${base}/clusters `);
    expect(stdout).toContain(`curl ${base}/clusters/staging/informers   (cluster 'staging')`);
    expect(stdout).toContain(`curl '${base}/clusters/staging/informers/pods/objects?namespace=demo&labelSelector=app%3Dweb'`);
    const { vars, pods } = run.wrangler!;
    const clusters = JSON.parse(vars.CLUSTERS!) as Record<string, { server: string }>;
    expect(Object.keys(clusters)).toEqual(["staging"]);
    expect(clusters.staging!.server).toBe(`${vars.KUBE_API_URL}/clusters/staging`);
    const informers = (JSON.parse(vars.INFORMERS!) as { name: string; resource: string; cluster?: string }[]).map((i) => `${i.cluster ?? "default"}/${i.name}:${i.resource}`);
    expect(informers.sort()).toEqual(["default/deployments:deployments.apps", "default/pods:pods", "staging/deployments:deployments.apps", "staging/pods:pods"]);
    // Both servers were up when wrangler started, each serving the demo app (seeded alike; their churn differs).
    for (const cluster of ["default", "staging"]) {
      const keys = pods[cluster] ?? [];
      expect(keys.length, cluster).toBeGreaterThanOrEqual(9);
      for (const app of ["demo/web-", "demo/api-", "kube-system/coredns-"]) expect(keys.some((key) => key.startsWith(app)), `${cluster}: ${app}…`).toBe(true);
    }
  }, 30_000);

  it("waits for every cluster's informers to sync, not only the default cluster's", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)], { STUB_UNSYNCED: "/clusters/staging/informers" });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain("is running");
    expect(run.stderr).toContain("the informers did not sync within 4 s");
  }, 30_000);

  it("with KUBE_API_URL, watches that one cluster: nothing simulated, INFORMERS and CLUSTERS left to wrangler.toml", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)], { KUBE_API_URL: "http://127.0.0.1:1" });
    expect(run.stdout).not.toContain("simulated Kubernetes API servers");
    expect(run.stdout).toContain(`edge-informer is running at http://127.0.0.1:${port}, mirroring one cluster`);
    expect(run.stdout).toContain(`kubectl --server http://127.0.0.1:${port}/k8s get pods -A\n`);
    expect(run.stdout).not.toContain("/clusters/staging");
    expect(run.wrangler?.vars.KUBE_API_URL).toBe("http://127.0.0.1:1");
    expect(run.wrangler?.vars.CLUSTERS).toBeUndefined();
    expect(run.wrangler?.vars.INFORMERS).toBeUndefined();
  }, 30_000);

  it("does not take another Worker on its port for its own", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)], { STUB_MODE: "foreign" });
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain("is running");
    expect(run.stderr).toContain(`the server at http://127.0.0.1:${port} is not the Worker this run started`);
  }, 30_000);
  it("points kubectl, the status page and /metrics at the Worker, never at a simulated API server", async () => {
    const port = await freePort();
    const run = await start(["--port", String(port)]);
    const base = `http://127.0.0.1:${port}`;
    expect(run.stdout).toContain(`status page:    ${base}/ `);
    expect(run.stdout).toContain(`kubectl:        kubectl --server ${base}/k8s get pods -A\n`);
    expect(run.stdout).toContain(`kubectl --server ${base}/k8s/clusters/staging get pods -A   (cluster 'staging')`);
    expect(run.stdout).toContain(`metrics:        curl ${base}/metrics\n`);
    const servers = [...run.stdout.matchAll(/kubectl --server (\S+)/g)].map((m) => m[1]);
    expect(servers).toEqual([`${base}/k8s`, `${base}/k8s/clusters/staging`]);
    expect(run.stdout).not.toContain(`${run.wrangler!.vars.KUBE_API_URL} get`);
  }, 30_000);

  it("keeps the state in the project's .wrangler/state, which git ignores, and frees it on exit", async () => {
    const state = join(ROOT, ".wrangler", "state");
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await start(["--port", String(await freePort())], {}, { projectState: true }));
    for (const run of runs) {
      expect(run.wrangler?.args.slice(run.wrangler.args.indexOf("--persist-to"), run.wrangler.args.indexOf("--persist-to") + 2)).toEqual(["--persist-to", state]);
      expect(run.stdout).toContain("state:          .wrangler/state, kept across runs (npm start -- --fresh starts over)");
    }
    // `git check-ignore -q` fails unless the path is ignored: a run leaves `git status` clean.
    expect(() => execFileSync("git", ["check-ignore", "-q", ".wrangler/state/v3/do/x.sqlite"], { cwd: ROOT })).not.toThrow();
    expect(existsSync(join(state, LOCK_FILE))).toBe(false);
  }, 60_000);

  it("keeps what an earlier run stored, unless started with --fresh", async () => {
    const state = newStateDir();
    const marker = join(state, "v3", "earlier-run");
    mkdirSync(join(state, "v3"), { recursive: true });
    writeFileSync(marker, "");
    const kept = await start(["--port", String(await freePort()), "--persist-to", state]);
    expect(kept.stdout).toContain("edge-informer is running");
    expect(kept.wrangler?.args).toEqual(expect.arrayContaining(["--persist-to", state]));
    expect(existsSync(marker)).toBe(true);
    const fresh = await start(["--port", String(await freePort()), "--persist-to", state, "--fresh"]);
    expect(fresh.stdout).toContain("edge-informer is running");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(state, LOCK_FILE))).toBe(false);
  }, 60_000);

  it("refuses a state directory another live run owns, naming the way to run beside it, and takes over a dead run's", async () => {
    const state = newStateDir();
    mkdirSync(state);
    const lock = join(state, LOCK_FILE);
    const owner = JSON.stringify({ pid: process.pid, port: 8787 });
    writeFileSync(lock, owner);
    const port = await freePort();
    const refused = await start(["--port", String(port), "--persist-to", state, "--fresh"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${state} is in use by another \`npm start\` (pid ${process.pid}, port 8787)`);
    expect(refused.stderr).toContain(`npm start -- --port ${port + 1} --persist-to ${state}-${port + 1}`);
    expect(refused.wrangler).toBeUndefined();
    expect(readFileSync(lock, "utf8")).toBe(owner); // neither emptied (--fresh) nor unlocked

    const { port: taken, server } = await occupied();
    try {
      const busy = await start(["--port", String(taken), "--persist-to", state]);
      expect(busy.stderr).toContain(`the other run owns ${state}): npm start -- --port ${taken + 1} --persist-to ${state}-${taken + 1}`);
    } finally {
      server.close();
    }

    writeFileSync(lock, JSON.stringify({ pid: DEAD_PID, port: 8787 }));
    const takenOver = await start(["--port", String(port), "--persist-to", state]);
    expect(takenOver.stdout).toContain("edge-informer is running");
    expect(existsSync(lock)).toBe(false);
  }, 60_000);
  it("with the real wrangler, keeps what a run stored for the next run, and --fresh forgets it", async () => {
    const state = newStateDir();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const json = async (path: string, init?: RequestInit) => {
      const response = await fetch(`${base}${path}`, { ...init, headers: { "content-type": "application/json" } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const args = ["--port", String(port), "--persist-to", state];
    let subscription = "";
    // Run 1 adds a subscription and an informer at run time.
    await start(args, {}, {
      realWrangler: true,
      whileRunning: async () => {
        const created = await json("/informers/pods/subscriptions", { method: "POST", body: JSON.stringify({ url: "http://127.0.0.1:9/" }) });
        expect(created.status).toBe(201);
        subscription = created.body.id as string;
        expect((await json("/clusters/staging/informers/configmaps", { method: "PUT", body: JSON.stringify({ resource: "configmaps" }) })).status).toBe(201);
      },
    });
    // Run 2 has both; its simulated clusters are new, so the kept pods cache relists once (410) and
    // then holds this run's objects.
    await start(args, {}, {
      realWrangler: true,
      whileRunning: async () => {
        expect((await json(`/subscriptions/${subscription}`)).status).toBe(200);
        expect((await json("/clusters/staging/informers/configmaps")).status).toBe(200);
        await waitFor(async () => ((await json("/informers/pods")).body.relists as number) >= 1 || undefined, { timeoutMs: 30_000, what: "the kept pods cache to relist" });
      },
    });
    // Run 3 starts fresh.
    await start([...args, "--fresh"], {}, {
      realWrangler: true,
      whileRunning: async () => {
        expect((await json(`/subscriptions/${subscription}`)).status).toBe(404);
        expect((await json("/clusters/staging/informers/configmaps")).status).toBe(404);
      },
    });
  }, 300_000);
});
