// g. Search across clusters (`npm run bench -- --only search`; BENCHMARKS.md "Search across
// clusters"): GET /search/pods over C clusters of N pods each, next to the same query on one cluster.
//
// Setup: the fake API server (test/fake-apiserver) with C clusters of N ~3 KB pods each (`seed`),
// our Worker under `wrangler dev` with each as a run-time cluster (PUT /clusters/{c}) holding one
// `pods` informer, all synced. Then, one request at a time (latency, not throughput):
// 1. first pages: `limit=L` over all C clusters and over one, R of each, alternating;
// 2. continued pages: the whole list walked page by page following `continue`, over all C (C·N/L
//    pages) and over one (N/L pages), twice each; checked: every object once, each with its cluster's
//    annotation, each cluster at one resourceVersion.
// Times are to the last byte; p50/p99 per kind. Plus, in this Node process (V8, as workerd), the cost
// of adding the cluster annotation to the seeded pods' JSON text: splice (src/search/annotate.ts)
// against JSON.parse + JSON.stringify.
import { setTimeout as sleep } from "node:timers/promises";
import { now, round, waitFor } from "./lib.mjs";
import { api, log, ratio, scanLog, startWorker } from "./harness.mjs";
import { control, distribution, startFake } from "./k8s.mjs";
import { withClusterAnnotation, CLUSTER_ANNOTATION } from "../src/search/annotate.ts";

export const SEARCH_OPTIONS = {
  "search-clusters": { type: "string", default: "4" },
  "search-pods": { type: "string", default: "10000" },
  "search-limit": { type: "string", default: "100" },
  "search-runs": { type: "string", default: "200" },
};

export function searchDeadlineMs() {
  return 30 * 60_000;
}

async function timed(url) {
  const t0 = now();
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  const text = await response.text();
  const ms = now() - t0;
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 300)}`);
  return { ms, bytes: text.length, body: JSON.parse(text) };
}

/** Walks a search to its end; answers each page's time and what the walk saw. */
async function walk(base, query) {
  const times = [];
  const seen = new Set();
  const rvs = new Map();
  let duplicates = 0;
  let unannotated = 0;
  let token;
  do {
    const r = await timed(`${base}/search/pods?${query}${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
    times.push(r.ms);
    if (r.body.partial) throw new Error(`partial: ${r.body.partial.join(",")}`);
    for (const [cluster, rv] of Object.entries(r.body.resourceVersions)) {
      if (rvs.has(cluster) && rvs.get(cluster) !== rv) throw new Error(`cluster ${cluster} moved from RV ${rvs.get(cluster)} to ${rv} within one search`);
      rvs.set(cluster, rv);
    }
    for (const o of r.body.items) {
      const cluster = o.metadata.annotations?.[CLUSTER_ANNOTATION];
      if (!cluster) unannotated++;
      const id = `${cluster} ${o.metadata.namespace}/${o.metadata.name}`;
      if (seen.has(id)) duplicates++;
      seen.add(id);
    }
    token = r.body.continue;
  } while (token);
  return { times, items: seen.size, duplicates, unannotated };
}

/** The annotation's cost on real pod text: splice against parse + stringify, µs per object. */
function annotationCost(bodies) {
  const measure = (fn) => {
    for (const b of bodies) fn(b); // warm-up
    const t0 = now();
    let n = 0;
    while (now() - t0 < 1_000) for (const b of bodies) (fn(b), n++);
    return round(((now() - t0) * 1000) / n, 2);
  };
  const parse = (b) => {
    const o = JSON.parse(b);
    o.metadata.annotations = { ...o.metadata.annotations, [CLUSTER_ANNOTATION]: "c0" };
    return JSON.stringify(o);
  };
  return { objects: bodies.length, avgBytes: Math.round(bodies.reduce((s, b) => s + b.length, 0) / bodies.length), spliceMicros: measure((b) => withClusterAnnotation(b, "c0")), parseMicros: measure(parse) };
}

export async function runSearch({ opts, bundle }) {
  const p = { clusters: Number(opts["search-clusters"]), pods: Number(opts["search-pods"]), limit: Number(opts["search-limit"]), runs: Number(opts["search-runs"]) };
  const result = { parameters: p };
  const fake = await startFake();
  let worker;
  try {
    const names = Array.from({ length: p.clusters }, (_, i) => `c${i}`);
    const urls = [];
    for (const [i, name] of names.entries()) {
      await control(`${fake.base}/__control/clusters`, { id: `search-${name}` });
      const url = `${fake.base}/clusters/search-${name}`;
      await control(`${url}/__control/seed`, { namespaces: 20, podsPerNamespace: p.pods / 20, deployments: 5, podBytes: 3000, seed: 20 + i });
      urls.push(url);
    }
    log(`g. search: seeded ${p.clusters} clusters of ${p.pods} pods`);
    worker = await startWorker(bundle, "search", urls[0]);
    const t0 = now();
    for (const [i, name] of names.entries()) {
      await api(worker, "PUT", `/clusters/${name}`, { server: urls[i] });
      await api(worker, "PUT", `/clusters/${name}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 600 });
    }
    for (const name of names) {
      await waitFor(async () => {
        const s = await api(worker, "GET", `/clusters/${name}/informers/pods`);
        return s.synced && s.objects === p.pods && s.queueDepth === 0;
      }, { timeoutMs: 600_000, intervalMs: 500, what: `cluster ${name} to sync` });
    }
    result.syncSeconds = round((now() - t0) / 1000, 1);
    log(`synced ${p.clusters} × ${p.pods} pods in ${result.syncSeconds} s`);

    const all = `clusters=${names.join(",")}&limit=${p.limit}`;
    const one = `clusters=${names[0]}&limit=${p.limit}`;
    const first = { all: [], one: [] };
    for (let i = 0; i < 10; i++) (await timed(`${worker.base}/search/pods?${all}`), await timed(`${worker.base}/search/pods?${one}`));
    for (let r = 0; r < p.runs; r++) {
      for (const side of r % 2 === 0 ? ["all", "one"] : ["one", "all"]) {
        const answer = await timed(`${worker.base}/search/pods?${side === "all" ? all : one}`);
        if (answer.body.items.length !== p.limit) throw new Error(`a first page of ${answer.body.items.length} items`);
        first[side].push(answer.ms);
        result.firstPageBytes ??= {};
        result.firstPageBytes[side] = answer.bytes;
      }
    }
    const walks = { all: [], one: [] };
    for (let r = 0; r < 2; r++) {
      for (const side of ["all", "one"]) {
        const w = await walk(worker.base, side === "all" ? all : one);
        const expected = side === "all" ? p.clusters * p.pods : p.pods;
        if (w.items !== expected || w.duplicates || w.unannotated) throw new Error(`${side}: ${w.items}/${expected} items, ${w.duplicates} duplicates, ${w.unannotated} unannotated`);
        walks[side].push(...w.times.slice(1));
      }
    }
    result.firstPage = { all: distribution(first.all), one: distribution(first.one) };
    result.continuedPage = { all: { pages: walks.all.length, ...distribution(walks.all) }, one: { pages: walks.one.length, ...distribution(walks.one) } };
    result.ratios = {
      firstP50: ratio(result.firstPage.all.p50, result.firstPage.one.p50),
      firstP99: ratio(result.firstPage.all.p99, result.firstPage.one.p99),
      continuedP50: ratio(result.continuedPage.all.p50, result.continuedPage.one.p50),
      continuedP99: ratio(result.continuedPage.all.p99, result.continuedPage.one.p99),
    };
    const sample = (await timed(`${worker.base}/clusters/${names[0]}/informers/pods/objects?limit=1000`)).body.items.map((o) => JSON.stringify(o));
    result.annotation = annotationCost(sample);
    result.ok = true;
    log(`first page p50/p99: all ${result.firstPage.all.p50}/${result.firstPage.all.p99} ms, one ${result.firstPage.one.p50}/${result.firstPage.one.p99} ms`);
    log(`continued page p50/p99: all ${result.continuedPage.all.p50}/${result.continuedPage.all.p99} ms, one ${result.continuedPage.one.p50}/${result.continuedPage.one.p99} ms`);
    log(`annotation: splice ${result.annotation.spliceMicros} µs, parse+stringify ${result.annotation.parseMicros} µs per ${result.annotation.avgBytes} B pod`);
  } catch (error) {
    result.ok = false;
    result.error = error.message;
    log(`search bench failed: ${error.message}`);
  } finally {
    if (worker) {
      await worker.stop();
      result.log = scanLog(worker.logPath);
    }
    await fake.stop();
    await sleep(100);
  }
  return result;
}

/** Rows of the summary table. */
export function searchRows(r) {
  if (!r.parameters || !r.firstPage) return [["search", `FAILED: ${r.error ?? "?"}`, "", "", "", "FAIL"]];
  const { clusters, pods, limit } = r.parameters;
  return [
    [`search, page of ${limit}`, `${clusters} clusters × ${pods}`, "1 cluster", "all/one", "", r.ok ? "OK" : "PROBLEMS"],
    ["  first page p50 / p99 (ms)", `${r.firstPage.all.p50} / ${r.firstPage.all.p99}`, `${r.firstPage.one.p50} / ${r.firstPage.one.p99}`, `${r.ratios.firstP50} / ${r.ratios.firstP99}`, "", ""],
    ["  continued page p50 / p99 (ms)", `${r.continuedPage.all.p50} / ${r.continuedPage.all.p99}`, `${r.continuedPage.one.p50} / ${r.continuedPage.one.p99}`, `${r.ratios.continuedP50} / ${r.ratios.continuedP99}`, "", ""],
    ["  annotation per pod (µs): splice / parse", `${r.annotation.spliceMicros} / ${r.annotation.parseMicros}`, "", "", "", ""],
  ];
}
