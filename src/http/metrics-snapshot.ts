/**
 * The metrics snapshot a request serves (`/metrics`, the status page): the isolate's kept one for the
 * caller's scope while it is fresh enough (metrics/snapshot-cache.ts), else a new collection.
 */
import type { Context } from "hono";
import { collect, type MetricsSnapshot } from "../metrics/collect.ts";
import { SnapshotCache, snapshotMaxAgeMs } from "../metrics/snapshot-cache.ts";
import type { AppEnv } from "./app-env.ts";

const snapshots = new SnapshotCache<MetricsSnapshot>();

export function metricsSnapshot(c: Context<AppEnv>, readable: { readable: (cluster: string) => boolean; scope: string }): Promise<MetricsSnapshot> {
  const maxAgeMs = snapshotMaxAgeMs(c.env.METRICS_SNAPSHOT_SECONDS);
  return snapshots.get(readable.scope, Date.now(), maxAgeMs, () => collect(c.env, Date.now, readable.readable));
}
