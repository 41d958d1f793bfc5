#!/usr/bin/env node
// `npm start`: runs edge-informer locally with `wrangler dev`. Without KUBE_API_URL it first starts
// the simulated cluster (test/fake-apiserver: a few namespaces, pods and deployments, light churn);
// with KUBE_API_URL (e.g. `kubectl proxy` at http://127.0.0.1:8001) it watches that cluster instead.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const port = Number(process.env.PORT ?? 8787);
const base = `http://127.0.0.1:${port}`;
let cluster;
let apiUrl = process.env.KUBE_API_URL;
// The simulated cluster is new on every run, so the Durable Objects' storage must be too: a cache
// from an earlier run would hold resourceVersions this cluster has not reached yet.
let scratch;

if (!apiUrl) {
  const { startFakeApiServer } = await import("../test/fake-apiserver/server.ts");
  const { seedDemo, startChurn } = await import("../test/fake-apiserver/seed.ts");
  cluster = await startFakeApiServer({ port: Number(process.env.FAKE_APISERVER_PORT ?? 0) });
  await seedDemo(cluster);
  startChurn(cluster, { perSecond: 2 });
  apiUrl = cluster.url;
  scratch = mkdtempSync(join(tmpdir(), "edge-informer-dev-"));
  console.log(`simulated cluster: ${apiUrl} (try: kubectl --server ${apiUrl} get pods -A)`);
}

const args = [
  "dev",
  "--port", String(port),
  "--ip", "127.0.0.1",
  "--show-interactive-dev-session=false",
  "--var", `KUBE_API_URL:${apiUrl}`,
  "--var", "ALLOW_UNAUTHENTICATED:true",
  ...(scratch ? ["--persist-to", scratch] : []),
];
const wrangler = spawn("wrangler", args, { stdio: "inherit" });

const stop = async (code = 0) => {
  wrangler.kill("SIGTERM");
  await cluster?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  process.exit(code);
};
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
wrangler.on("exit", (code) => stop(code ?? 0));

// Tell the user where to look once the informers have synced.
for (let i = 0; i < 120; i++) {
  await sleep(1000);
  try {
    const response = await fetch(`${base}/informers`);
    if (!response.ok) continue;
    const { items } = await response.json();
    if (items.length > 0 && items.every((informer) => informer.synced)) {
      console.log(`
edge-informer is running at ${base}
  informers:      curl ${base}/informers
  one informer:   curl ${base}/informers/pods
  query:          curl '${base}/informers/pods/objects?namespace=demo&labelSelector=app%3Dweb'
  an index:       curl ${base}/informers/pods/indexes/namespace
  a webhook:      curl -X POST ${base}/informers/pods/subscriptions -H 'content-type: application/json' -d '{"url": "http://127.0.0.1:3000/"}'
                  then WEBHOOK_SECRET=<its secret> PORT=3000 npx node examples/receiver.ts
`);
      break;
    }
  } catch {
    // not up yet
  }
}
