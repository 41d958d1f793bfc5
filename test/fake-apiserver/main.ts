/**
 * CLI: a demo Kubernetes API server for `npm start` and manual testing with kubectl.
 *   npx node test/fake-apiserver/main.ts --port 8001 [--host 127.0.0.1] [--churn-per-second 2]
 *        [--compact-every-seconds 300] [--bookmark-interval-ms 60000]
 * The "default" cluster (root paths) holds the demo data of seed.ts; with churn, pods keep being
 * created, updated and deleted; history is compacted like etcd's periodic compaction (everything
 * older than one interval), so stale continue tokens and watch RVs expire realistically.
 */
import { seedDemo, startChurn } from "./seed.ts";
import { startFakeApiServer } from "./server.ts";

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index === -1) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} needs a non-negative number`);
    process.exit(2);
  }
  return value;
}

function stringOption(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : (process.argv[index + 1] ?? fallback);
}

const port = option("port", 8001);
const host = stringOption("host", "127.0.0.1");
const churnPerSecond = option("churn-per-second", 0);
const compactEverySeconds = option("compact-every-seconds", 300);

const server = await startFakeApiServer({ port, host });
const cluster = server.clusters.defaultCluster;
cluster.settings.bookmarkIntervalMs = option("bookmark-interval-ms", 60_000);
seedDemo(cluster.store);
console.log(`fake kube-apiserver listening on ${server.url} (revision ${cluster.store.revision})`);
console.log(`  try: kubectl --server ${server.url} get pods -A`);
console.log(`  control API: ${server.url}/__control  (new clusters: POST ${server.url}/__control/clusters)`);

const timers: ReturnType<typeof setInterval>[] = [];
const stopChurn = startChurn(cluster, { perSecond: churnPerSecond });
if (churnPerSecond > 0) console.log(`  churning ${churnPerSecond} pod operation(s) per second`);
if (compactEverySeconds > 0) {
  let previous = cluster.store.revision;
  timers.push(
    setInterval(() => {
      cluster.store.compact(previous);
      previous = cluster.store.revision;
    }, compactEverySeconds * 1000),
  );
}

const shutdown = (): void => {
  stopChurn();
  for (const t of timers) clearInterval(t);
  void server.close().then(() => process.exit(0));
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
