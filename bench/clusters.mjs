// Watch ingest with several clusters active at once (issue 12; BENCHMARKS.md "Ingest with several
// clusters"): `npm run bench -- --only ingest --clusters 1,4`. For each count N, one fresh Worker
// with N clusters (c1 … cN, added with PUT /clusters, all served by the one stream server) and a pods
// informer on each, created at once; every informer's watch gets the same M events after an empty
// list. Reported per cluster (M / the time from its watch's arrival to its cache holding all M) and
// in aggregate (N × M / the time from the first watch's arrival to the last cluster done).
//
// Locally every Durable Object shares the one runtime thread of `wrangler dev`, so the aggregate is
// bounded by one core and the per-cluster rate falls as N grows; on the platform each object runs
// apart, so the per-cluster rate is the one to expect for each cluster (BENCHMARKS.md says so).
// Each cluster's informer asks for its own watch timeout (600 + i s): the stream server records it
// in the watch URL, which tells the N watches apart.
import { setTimeout as sleep } from "node:timers/promises";
import { cpuDelta, now, procCpu, round } from "./lib.mjs";
import { api, log, scanLog, startWorker } from "./harness.mjs";

export const CLUSTERS_OPTIONS = {
  clusters: { type: "string" },
};

/** `--clusters 1,4` → [1, 4]; undefined when absent; throws on anything but positive integers. */
export function parseClusterCounts(text) {
  if (text === undefined) return undefined;
  const counts = text.split(",").map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) {
    throw new Error(`--clusters must be a comma-separated list of cluster counts from 1 to 16 (got '${text}')`);
  }
  return counts;
}

const WATCH_TIMEOUT_BASE_S = 600;
const POLL_INTERVAL_MS = 200;

/** One count: N clusters ingesting M events each, at once, in one fresh Worker. */
async function ingestClusters({ server, bundle, clusters, events, timeoutSeconds, watchFraming }) {
  const scenario = await server.configure({ listSize: 0, watchEvents: events, watchFraming });
  const worker = await startWorker(bundle, `ingest-clusters-${clusters}`, server.url);
  const names = Array.from({ length: clusters }, (_, i) => `c${i + 1}`);
  const result = { clusters, events, scenario };
  try {
    for (const name of names) await api(worker, "PUT", `/clusters/${name}`, { server: server.url });
    const cpu0 = procCpu(worker.runtimePid);
    const putAt = now();
    await Promise.all(
      names.map((name, i) => api(worker, "PUT", `/clusters/${name}/informers/bench`, { resource: "pods", watchTimeoutSeconds: WATCH_TIMEOUT_BASE_S + i + 1 })),
    );
    const doneAt = new Map();
    const last = new Map();
    const deadline = putAt + timeoutSeconds * 1000;
    while (doneAt.size < clusters && now() < deadline) {
      await Promise.all(
        names
          .filter((name) => !doneAt.has(name))
          .map(async (name) => {
            const status = await api(worker, "GET", `/clusters/${name}/informers/bench`);
            last.set(name, status);
            if (status.eventLog.tail >= events && status.queueDepth === 0) doneAt.set(name, now());
          }),
      );
      await sleep(POLL_INTERVAL_MS);
    }
    const cpu1 = procCpu(worker.runtimePid);
    const stats = await server.stats();
    const watchOf = (i) =>
      stats.watches.find((w) => w.url.includes(`timeoutSeconds=${WATCH_TIMEOUT_BASE_S + i + 1}`) && w.events > 0) ?? null;
    const perCluster = names.map((name, i) => {
      const watch = watchOf(i);
      const done = doneAt.get(name);
      const start = watch?.arrivedAt ?? putAt;
      const seconds = done === undefined ? null : (done - start) / 1000;
      return {
        cluster: name,
        ok: done !== undefined,
        seconds: round(seconds, 2),
        eventsPerSecond: seconds ? round(events / seconds, 0) : null,
        eventsApplied: last.get(name)?.eventLog.tail ?? 0,
        watchArrivedSeconds: watch ? round((watch.arrivedAt - putAt) / 1000, 2) : null,
        relists: last.get(name)?.relists ?? null,
      };
    });
    const starts = names.map((_, i) => watchOf(i)?.arrivedAt ?? putAt);
    const ok = perCluster.every((c) => c.ok);
    const wall = ok ? (Math.max(...doneAt.values()) - Math.min(...starts)) / 1000 : null;
    const rates = perCluster.map((c) => c.eventsPerSecond).filter((r) => r !== null);
    Object.assign(result, {
      ok,
      perCluster,
      aggregate: {
        seconds: round(wall, 2),
        eventsPerSecond: wall ? round((clusters * events) / wall, 0) : null,
        perClusterEventsPerSecond: {
          min: rates.length ? Math.min(...rates) : null,
          median: rates.length ? [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)] : null,
          max: rates.length ? Math.max(...rates) : null,
        },
      },
      runtimeCpuSeconds: cpuDelta(cpu0, cpu1),
      watchRequests: stats.watches.length,
      listRequests: stats.lists.length,
    });
    log(
      ok
        ? `${clusters} cluster(s) × ${events} events: aggregate ${result.aggregate.eventsPerSecond} events/s in ${result.aggregate.seconds} s; per cluster ${rates.join(", ")} events/s`
        : `${clusters} cluster(s): NOT DONE within ${timeoutSeconds} s: ${perCluster.map((c) => `${c.cluster} ${c.eventsApplied}/${events}`).join(", ")}`,
    );
  } catch (error) {
    Object.assign(result, { ok: false, error: error.message });
    log(`${clusters} cluster(s): failed: ${error.message}`);
  } finally {
    await worker.stop();
    result.log = scanLog(worker.logPath);
  }
  return result;
}

/** Every count in `counts`, one after the other, each on a fresh Worker. */
export async function runClustersIngest({ counts, server, bundle, events, timeoutSeconds, watchFraming }) {
  const runs = [];
  for (const clusters of counts) {
    log(`a*. watch ingest with ${clusters} cluster(s) at once: ${events} events each`);
    runs.push(await ingestClusters({ server, bundle, clusters, events, timeoutSeconds: timeoutSeconds * clusters, watchFraming }));
  }
  return { events, runs, ok: runs.every((r) => r.ok) };
}

/** Rows for run.mjs's summary table. */
export function clustersRows(result) {
  const rows = [];
  for (const r of result.runs) {
    const label = `ingest, ${r.clusters} cluster(s) × ${r.events} events at once (events/s)`;
    if (!r.ok) {
      rows.push([label, `DNF${r.error ? `: ${r.error}` : ""}`, "", "", "", "FAIL"]);
      continue;
    }
    const p = r.aggregate.perClusterEventsPerSecond;
    rows.push([label, `aggregate ${r.aggregate.eventsPerSecond}`, "", "", "", ""]);
    rows.push(["  per cluster min / median / max", `${p.min} / ${p.median} / ${p.max}`, "", "", "", ""]);
  }
  return rows;
}
