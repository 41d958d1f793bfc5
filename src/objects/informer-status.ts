/**
 * What an informer's object reports about itself: its status (the admin API's and the factory's
 * view, docs/api.md) and its metrics (what /metrics and the status page read, src/metrics), each
 * the informer's own progress plus what only the object knows — its subscriptions, its database's
 * size, the rows its statements touched, its killed slices (slice-kills.ts).
 *
 * Guarantees: both are read-only views, built from one reading of each source; times are ISO 8601
 * strings, never epoch numbers; no credential or connection detail appears in either.
 */
import type { Informer } from "../cache/informer.ts";
import type { InformerMetrics } from "../cache/log-counters.ts";
import { type StorageStatus, storageStatus } from "../cache/storage-ceiling.ts";
import type { InformerSpec } from "../config/informer-spec.ts";
import type { RowCounts } from "../sql-rows.ts";
import type { SliceKillCounts } from "./slice-kills.ts";

export interface InformerStatus {
  name: string;
  cluster: string;
  resource: string;
  synced: boolean;
  lastSyncResourceVersion: string;
  cacheResourceVersion: string;
  objects: number;
  queueDepth: number;
  skippedObjects: number;
  lastSkipped: string | null;
  /** `wakesAt`: while `state` is "sleeping", when the next watch window opens (cache/watch-windows.ts). */
  watch: { state: string; since: string | null; restarts: number; wakesAt?: string };
  relists: number;
  lastError: string | null;
  eventLog: { head: number; tail: number };
  storage: StorageStatus;
  subscriptions: number;
  /** Alarm slices killed before their end, the last one's start, and whether lists now go in pages (objects/slice-kills.ts). */
  sliceKills: { count: number; lastAt: string | null; listsInPages: boolean };
}

/** An informer's metrics with what only its object knows: its name, subscriptions and storage size. */
export interface InformerObjectMetrics extends InformerMetrics {
  name: string;
  resource: string;
  subscriptions: string[];
  /** The object's whole SQLite database (log, cache, queue), as the platform bills it. */
  storageBytes: number;
  /** Rows its statements read and wrote since it was loaded (sql-rows.ts: in memory, reset by an eviction). */
  sqlRows: RowCounts;
  /** Alarm slices killed before their end (objects/slice-kills.ts). */
  sliceKills: number;
}

type Named = Pick<InformerSpec, "name" | "cluster" | "resource">;

/** What the object knows beside its informer, read by the caller at the moment of the report. */
export interface ObjectFacts {
  subscriptions: () => number;
  kills: () => SliceKillCounts;
}

export function informerStatus(spec: Named, informer: Informer, facts: ObjectFacts): InformerStatus {
  const progress = informer.progress();
  return {
    name: spec.name,
    cluster: spec.cluster,
    resource: spec.resource,
    synced: progress.synced,
    lastSyncResourceVersion: progress.lastSyncResourceVersion,
    cacheResourceVersion: progress.cacheResourceVersion,
    objects: progress.objects,
    queueDepth: progress.queueDepth,
    skippedObjects: progress.skippedObjects,
    lastSkipped: progress.lastSkipped,
    watch: progress.watch.state === "sleeping" ? { ...progress.watch, wakesAt: new Date(progress.wakeAt).toISOString() } : progress.watch,
    relists: progress.relists,
    lastError: progress.lastError,
    eventLog: progress.eventLog,
    storage: storageStatus(informer.storage()),
    subscriptions: facts.subscriptions(),
    sliceKills: sliceKillStatus(facts.kills()),
  };
}

export function informerObjectMetrics(
  spec: Named,
  informer: Informer,
  facts: { subscriptions: string[]; storageBytes: number; sqlRows: RowCounts; kills: number },
): InformerObjectMetrics {
  return {
    ...informer.metrics(),
    name: spec.name,
    resource: spec.resource,
    subscriptions: facts.subscriptions,
    storageBytes: facts.storageBytes,
    sqlRows: facts.sqlRows,
    sliceKills: facts.kills,
  };
}

function sliceKillStatus(counts: SliceKillCounts): InformerStatus["sliceKills"] {
  return { count: counts.kills, lastAt: counts.lastKillAt === null ? null : new Date(counts.lastKillAt).toISOString(), listsInPages: counts.shrunk };
}
