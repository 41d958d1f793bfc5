#!/usr/bin/env node
// `npm start`: runs edge-informer locally with `wrangler dev`. Without KUBE_API_URL it first starts
// two simulated clusters (test/fake-apiserver: a few namespaces, pods and deployments, light churn),
// `default` and `staging` (declared in CLUSTERS), with a pods and a deployments informer on each, so
// a new user sees one deployment mirror several clusters at once; with KUBE_API_URL (e.g. `kubectl
// proxy` at http://127.0.0.1:8001) it watches that one cluster instead, with wrangler.toml's INFORMERS.
//
//   npm start                            http://127.0.0.1:8787
//   npm start -- --port 8788             another port (or PORT=8788 npm start)
//   npm start -- --fresh                 forget the state of earlier runs first
//   npm start -- --persist-to DIR        keep the state in DIR instead of .wrangler/state
//
// The Durable Objects' storage (informers, caches, subscriptions, clusters added at run time,
// counters) lives in .wrangler/state (gitignored) and is kept across runs, as a deployment keeps it
// across restarts. One run at a time owns a state directory (a lock file in it).
//
// It reports "running" only for the Worker it started: the port must be free before wrangler starts,
// and the Worker that answers must echo this run's id on /healthz (another instance on the same port
// would otherwise look ready).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";

const DEV_RUN_HEADER = "x-edge-informer-dev-run"; // src/http/app.ts
const HOST = "127.0.0.1";
const PROJECT = resolve(import.meta.dirname, "..");
/** In the state directory: the pid and port of the run that owns it. */
const LOCK_FILE = "npm-start.lock";

function fail(message) {
  console.error(`npm start: ${message}`);
  process.exit(1);
}

const USAGE = "usage: npm start [-- --port N] [--fresh] [--persist-to DIR]   (or PORT=N npm start; default port 8787)";

function parseOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { port: { type: "string", short: "p" }, fresh: { type: "boolean" }, "persist-to": { type: "string" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    fail(`${error.message}\n${USAGE}`);
  }
  const text = values.port ?? (process.env.PORT || "8787");
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65535) fail(`port '${text}' is not a TCP port (1-65535)`);
  return { port, fresh: values.fresh ?? false, stateDir: resolve(values["persist-to"] ?? join(PROJECT, ".wrangler", "state")) };
}

/** Resolves when `port` can be bound on HOST (then releases it); rejects with the listen error. */
function checkPortFree(port) {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ port, host: HOST, exclusive: true }, () => probe.close(() => resolve()));
  });
}

const { port, fresh, stateDir } = parseOptions();
const base = `http://${HOST}:${port}`;
const lockPath = join(stateDir, LOCK_FILE);
/** The state directory as the user would type it: relative to the working directory when inside it. */
const shownStateDir = relative(process.cwd(), stateDir).startsWith("..") ? stateDir : relative(process.cwd(), stateDir) || ".";

/** The live run that owns the state directory, if another one does: `{pid, port}`. */
function stateOwner() {
  let owner;
  try {
    owner = JSON.parse(readFileSync(lockPath, "utf8"));
  } catch {
    return undefined; // no lock, or one cut short by a crash
  }
  if (owner.pid === process.pid) return undefined;
  try {
    process.kill(owner.pid, 0);
    return owner;
  } catch (error) {
    return error.code === "EPERM" ? owner : undefined; // EPERM: alive, another user's
  }
}

/** How to run beside the run that owns the state directory: another port and a state of its own. */
const besideOwner = `npm start -- --port ${port + 1} --persist-to ${shownStateDir}-${port + 1}`;

try {
  await checkPortFree(port);
} catch (error) {
  fail(
    error.code === "EADDRINUSE"
      ? `port ${port} is already in use on ${HOST} (another \`npm start\` or \`wrangler dev\`?).\n` +
          (stateOwner()
            ? `  Stop it, or run beside it (the other run owns ${shownStateDir}): ${besideOwner}`
            : `  Stop it, or pick another port: npm start -- --port ${port + 1}   (or PORT=${port + 1} npm start)`)
      : `cannot listen on ${HOST}:${port}: ${error.message}`,
  );
}

// Two runtimes on one state directory would both run every Durable Object (two reflectors, two
// deliveries of each event), so a run takes the directory with a lock file, and a lock whose run is
// gone (killed, crashed) is taken over.
mkdirSync(stateDir, { recursive: true });
const owner = stateOwner();
if (owner) {
  fail(
    `${shownStateDir} is in use by another \`npm start\` (pid ${owner.pid}, port ${owner.port}).\n` +
      `  Stop it, or run beside it with a state of its own: ${besideOwner}`,
  );
}
writeFileSync(lockPath, JSON.stringify({ pid: process.pid, port }));
process.on("exit", () => {
  if (!stateOwner()) rmSync(lockPath, { force: true });
});
if (fresh) {
  for (const entry of readdirSync(stateDir)) if (entry !== LOCK_FILE) rmSync(join(stateDir, entry), { recursive: true, force: true });
}

/** The second simulated cluster, beside `default`. */
const SECOND_CLUSTER = "staging";
/** The demo informers, the same on each simulated cluster (wrangler.toml declares them for `default`). */
const DEMO_INFORMERS = [
  { name: "pods", resource: "pods" },
  { name: "deployments", resource: "deployments.apps" },
];

let fakeServer;
let apiUrl = process.env.KUBE_API_URL;
/** Variables for the simulated clusters; with KUBE_API_URL, wrangler.toml's INFORMERS and no CLUSTERS. */
const clusterVars = [];
/** Cluster names, each with the routes of its informers (`/informers` is the default cluster's) and its /k8s. */
const clusters = [{ name: "default", informers: "/informers", k8s: "/k8s" }];

if (!apiUrl) {
  const { startFakeApiServer } = await import("../test/fake-apiserver/server.ts");
  const { seedDemo, startChurn } = await import("../test/fake-apiserver/seed.ts");
  // One fake server serves both clusters, each under its own API root with its own objects.
  fakeServer = await startFakeApiServer({ port: Number(process.env.FAKE_APISERVER_PORT ?? 0) });
  const second = fakeServer.clusters.create(SECOND_CLUSTER);
  // The simulated clusters are new on every run, but the state is kept: an informer's cache holds
  // resourceVersions of an earlier run's clusters. Revisions starting at the clock (in ms; the churn
  // writes a few a second) are past all of those, so each informer finds its resourceVersion expired
  // (410) and relists, as after a long outage of a real cluster, instead of reading this run's
  // objects as versions it has already seen.
  const startRevision = BigInt(Date.now());
  for (const { store } of [fakeServer.clusters.defaultCluster, second]) store.revision = store.compactedRevision = startRevision;
  seedDemo(fakeServer);
  seedDemo(second);
  // Another churn seed: the two clusters start alike (the same demo app) and drift apart.
  startChurn(fakeServer, { perSecond: 2 });
  startChurn(second, { perSecond: 2, seed: 2 });
  apiUrl = fakeServer.url;
  const secondUrl = `${fakeServer.url}/clusters/${SECOND_CLUSTER}`;
  clusters.push({ name: SECOND_CLUSTER, informers: `/clusters/${SECOND_CLUSTER}/informers`, k8s: `/k8s/clusters/${SECOND_CLUSTER}` });
  clusterVars.push(
    "--var", `CLUSTERS:${JSON.stringify({ [SECOND_CLUSTER]: { server: secondUrl } })}`,
    "--var", `INFORMERS:${JSON.stringify([...DEMO_INFORMERS, ...DEMO_INFORMERS.map((spec) => ({ ...spec, cluster: SECOND_CLUSTER }))])}`,
  );
  // Where edge-informer reads from; users read from edge-informer (the banner below).
  console.log(`simulated Kubernetes API servers for edge-informer to watch: 'default' at ${apiUrl}, '${SECOND_CLUSTER}' at ${secondUrl}`);
}

const runId = randomUUID();
const args = [
  "dev",
  "--port", String(port),
  "--ip", HOST,
  "--show-interactive-dev-session=false",
  "--var", `KUBE_API_URL:${apiUrl}`,
  "--var", "ALLOW_UNAUTHENTICATED:true",
  "--var", `DEV_RUN_ID:${runId}`,
  ...clusterVars,
  "--persist-to", stateDir,
];
const wrangler = spawn("wrangler", args, {
  stdio: "inherit",
  // Offline, miniflare's fetch of Request.cf data from workers.cloudflare.com prints ENOTFOUND twice.
  env: { CLOUDFLARE_CF_FETCH_ENABLED: "false", ...process.env },
});

let stopping = false;
const stop = async (code = 0) => {
  if (stopping) return;
  stopping = true;
  wrangler.kill("SIGTERM");
  await fakeServer?.close();
  process.exit(code);
};
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
wrangler.on("error", (error) => {
  console.error(`npm start: could not run wrangler: ${error.message}`);
  stop(1);
});
wrangler.on("exit", (code, signal) => {
  if (!stopping) console.error(`npm start: wrangler dev exited (${signal ?? `code ${code}`}); edge-informer is not running`);
  stop(code || 1);
});

/** Whether every cluster has informers and all of them have synced. */
async function allSynced() {
  for (const { informers } of clusters) {
    const response = await fetch(`${base}${informers}`);
    if (!response.ok) return false;
    const { items } = await response.json();
    if (items.length === 0 || !items.every((informer) => informer.synced)) return false;
  }
  return true;
}

/** Whether the Worker answering on `base` is the one this run started. */
async function ours() {
  const response = await fetch(`${base}/healthz`);
  await response.body?.cancel();
  return response.headers.get(DEV_RUN_HEADER) === runId;
}

// Tell the user where to look once the informers have synced.
const READY_WAIT_S = Number(process.env.DEV_READY_WAIT_S ?? 120);
let foreign = false;
let ready = false;
for (let i = 0; i < READY_WAIT_S; i++) {
  await sleep(1000);
  if (stopping) break;
  try {
    if (!(await ours())) {
      foreign = true;
      continue;
    }
    foreign = false;
    if (!(await allSynced())) continue;
    const query = "pods/objects?namespace=demo&labelSelector=app%3Dweb";
    // Each line names the default cluster's route; the other clusters' follow it, aligned.
    const alsoIn = (line) => clusters.slice(1).map((cluster) => `\n${" ".repeat(18)}${line(cluster)}   (cluster '${cluster.name}')`).join("");
    const kubectl = ({ k8s }) => `kubectl --server ${base}${k8s} get pods -A`;
    const [defaultCluster] = clusters;
    console.log(`
edge-informer is running at ${base}, mirroring ${clusters.length === 1 ? "one cluster" : `${clusters.length} clusters: ${clusters.map(({ name }) => name).join(", ")}`}
  status page:    ${base}/   (open it in a browser)
  kubectl:        ${kubectl(defaultCluster)}${alsoIn(kubectl)}
  metrics:        curl ${base}/metrics
  clusters:       curl ${base}/clusters              (each with its health)
  informers:      curl ${base}/informers${alsoIn(({ informers }) => `curl ${base}${informers}`)}
  one informer:   curl ${base}/informers/pods
  query:          curl '${base}/informers/${query}'${alsoIn(({ informers }) => `curl '${base}${informers}/${query}'`)}
  an index:       curl ${base}/informers/pods/indexes/namespace
  a webhook:      curl -X POST ${base}/informers/pods/subscriptions -H 'content-type: application/json' -d '{"url": "http://127.0.0.1:3000/"}'
                  (answers {"id": "sub_…", "secret": "whsec_…", …}; the secret is shown this once), then
                  WEBHOOK_SECRET=<its secret> PORT=3000 npx node examples/receiver.ts
                  curl -X POST ${base}/subscriptions/<its id>/enable    (deliver now, not after the retry backoff)
  state:          ${shownStateDir}, kept across runs (npm start -- --fresh starts over)
`);
    ready = true;
    break;
  } catch {
    // not up yet
  }
}
if (!ready && !stopping) {
  console.error(
    foreign
      ? `npm start: the server at ${base} is not the Worker this run started (another instance took the port?)`
      : `npm start: the informers did not sync within ${READY_WAIT_S} s; see wrangler's output above`,
  );
  await stop(1);
}
