#!/usr/bin/env node
// The fan-out baseline (bench/fanout.mjs starts it, one process): a @kubernetes/client-node informer
// on the bench stream server with S event handlers, each POSTing every event to its own endpoint —
// the fan-out a user writes by hand. Per handler, posts go one after another through a promise
// chain (so each endpoint sees its events in order and at most one request in flight, as our
// subscriptions do), with a per-request timeout; a failed post is counted and dropped: no retry, no
// durability, no signature.
//
//   node bench/fanout-client-node-runner.mjs --server URL --endpoints '["http://…/s/0", …]'
//        --count E [--timeout-ms 5000] [--timeout-seconds 600]
//
// Prints `{"phase":"connecting"}` when the informer starts its list,
// then one JSON line of results when every handler has settled its post of the E-th event.
import { parseArgs } from "node:util";
import { CoreV1Api, KubeConfig, makeInformer } from "@kubernetes/client-node";

const { values: args } = parseArgs({
  options: {
    server: { type: "string" },
    endpoints: { type: "string" },
    count: { type: "string" },
    "timeout-ms": { type: "string", default: "5000" },
    "timeout-seconds": { type: "string", default: "600" },
  },
});
const count = Number(args.count);
const endpoints = JSON.parse(args.endpoints);
const timeoutMs = Number(args["timeout-ms"]);
const now = () => performance.timeOrigin + performance.now();

const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: "bench", server: args.server, skipTLSVerify: true }],
  users: [{ name: "bench" }],
  contexts: [{ name: "bench", cluster: "bench", user: "bench" }],
  currentContext: "bench",
});
const api = kc.makeApiClient(CoreV1Api);
const informer = makeInformer(kc, "/api/v1/pods", () => api.listPodForAllNamespaces());

const handlers = endpoints.map((url) => ({ url, chain: Promise.resolve(), ok: 0, failed: 0, errors: new Map() }));
let callbacks = 0;
let lastCallbackAt = null;
const informerErrors = [];

/** The naive webhook: POST the event as JSON, wait for the answer (or the timeout), next. */
async function post(handler, type, object) {
  try {
    const response = await fetch(handler.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type, object, resourceVersion: object.metadata?.resourceVersion }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    if (response.ok) handler.ok++;
    else {
      handler.failed++;
      const key = `HTTP ${response.status}`;
      handler.errors.set(key, (handler.errors.get(key) ?? 0) + 1);
    }
  } catch (error) {
    handler.failed++;
    const key = String(error?.cause?.code ?? error?.name ?? error);
    handler.errors.set(key, (handler.errors.get(key) ?? 0) + 1);
  }
}

let resolveAll;
const allSeen = new Promise((resolve) => (resolveAll = resolve));
for (const handler of handlers) {
  for (const verb of ["add", "update", "delete"]) {
    const type = verb;
    informer.on(verb, (object) => {
      handler.chain = handler.chain.then(() => post(handler, type, object));
    });
  }
}
// Registered last: runs after every handler has queued its post of the event.
for (const verb of ["add", "update", "delete"]) {
  informer.on(verb, () => {
    callbacks++;
    if (callbacks === count) {
      lastCallbackAt = now();
      resolveAll();
    }
  });
}
let announced = false;
informer.on("connect", () => {
  if (announced) return;
  announced = true;
  process.stdout.write(`${JSON.stringify({ phase: "connecting", at: now() })}\n`);
});
informer.on("error", (error) => informerErrors.push(String(error?.message ?? error)));

const startedAt = now();
informer.start().catch((error) => informerErrors.push(String(error?.message ?? error)));
let timer;
const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), Number(args["timeout-seconds"]) * 1000)));
let outcome = await Promise.race([allSeen.then(() => "seen"), timeout]);
if (outcome === "seen") outcome = await Promise.race([Promise.all(handlers.map((h) => h.chain)).then(() => "done"), timeout]);
clearTimeout(timer);
const settledAt = now();
const cpu = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({
    outcome,
    count,
    callbacks,
    startedAt,
    lastCallbackAt,
    settledAt,
    cpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100,
    informerErrors: informerErrors.slice(0, 5),
    handlers: handlers.map((h) => ({ url: h.url, ok: h.ok, failed: h.failed, errors: Object.fromEntries(h.errors) })),
  })}\n`,
);
process.exit(0);
