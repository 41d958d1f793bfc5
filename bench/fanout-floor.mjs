// The fan-out floor (`node bench/fanout-floor.mjs`): the runtime CPU one signed webhook POST to a
// loopback receiver costs in workerd on its own, next to which BENCHMARKS.md "Fan-out" puts our
// figure per durable delivery. The probe Worker (bench/fanout-floor-worker.mjs) is started by
// `wrangler dev` like ours; for each mode, `--objects` Durable Objects each POST `--n` / objects
// bodies of `--bytes` in a row to a node:http receiver in this process that answers 204. Runtime CPU
// is read from /proc for the runtime workerd process around each mode (after a warm-up of each).
//
// Options: --n N (6000 per mode) --objects K (20) --bytes B (5000) --modes a,b,…
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { ENV, NODE, RESULTS, ROOT, WORK, killChildren, log, startWorker } from "./harness.mjs";
import { procCpu, round, run } from "./lib.mjs";

const { values: opts } = parseArgs({
  options: {
    n: { type: "string", default: "6000" },
    objects: { type: "string", default: "20" },
    bytes: { type: "string", default: "5000" },
    modes: { type: "string", default: "fetch,sign,sign-lib,sign-only,sign-sql,sign-sql6,sign-window" },
  },
});
const N = Number(opts.n);
const OBJECTS = Number(opts.objects);
const BYTES = Number(opts.bytes);
const MODES = opts.modes.split(",");

async function bundle() {
  const dir = path.join(WORK, "floor");
  fs.mkdirSync(dir, { recursive: true });
  const toml = (main) =>
    [
      'name = "fanout-floor"',
      `main = ${JSON.stringify(main)}`,
      'compatibility_date = "2026-11-01"',
      "[[durable_objects.bindings]]",
      'name = "PROBE"',
      'class_name = "Probe"',
      "[[migrations]]",
      'tag = "v1"',
      'new_sqlite_classes = ["Probe"]',
      "",
    ].join("\n");
  fs.writeFileSync(path.join(dir, "build.toml"), toml(path.join(ROOT, "bench", "fanout-floor-worker.mjs")));
  const out = path.join(dir, "out");
  await run(NODE, [path.join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"), "deploy", "--dry-run", "--outdir", out, "--config", path.join(dir, "build.toml")], {
    cwd: dir,
    env: ENV,
  });
  const main = fs.readdirSync(out).find((f) => f.endsWith(".js"));
  fs.writeFileSync(path.join(out, "wrangler.toml"), toml(main));
  return { dir: out };
}

const received = { count: 0 };
const receiver = http.createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => {
    received.count++;
    res.writeHead(204).end();
  });
});
receiver.keepAliveTimeout = 120_000;
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const target = `http://127.0.0.1:${receiver.address().port}`;

const results = {};
let worker;
try {
  worker = await startWorker(await bundle(), "fanout-floor", "http://127.0.0.1:1");
  const runMode = async (mode, n) => {
    const query = new URLSearchParams({ mode, objects: String(OBJECTS), n: String(Math.ceil(n / OBJECTS)), bytes: String(BYTES), url: target });
    const before = procCpu(worker.runtimePid);
    const answer = await (await fetch(`${worker.base}/run?${query}`)).json();
    const after = procCpu(worker.runtimePid);
    return { ...answer, cpu: after.total - before.total, sys: after.system - before.system, n: OBJECTS * Math.ceil(n / OBJECTS) };
  };
  for (const mode of MODES) {
    await runMode(mode, Math.min(N, 1000)); // warm-up (JIT, connections)
    const r = await runMode(mode, N);
    results[mode] = {
      requests: r.n,
      failed: r.failed,
      seconds: round(r.ms / 1000, 2),
      perSecond: round(r.n / (r.ms / 1000), 0),
      runtimeCpuSeconds: round(r.cpu, 2),
      cpuMsPerRequest: round((r.cpu * 1000) / r.n, 3),
      systemCpuMsPerRequest: round((r.sys * 1000) / r.n, 3),
    };
    log(`${mode}: ${JSON.stringify(results[mode])}`);
  }
} finally {
  await worker?.stop();
  receiver.close();
  killChildren();
}
fs.mkdirSync(RESULTS, { recursive: true });
fs.writeFileSync(path.join(RESULTS, "fanout-floor.json"), JSON.stringify({ at: new Date().toISOString(), objects: OBJECTS, bytes: BYTES, results }, null, 2));
