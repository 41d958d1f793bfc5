/**
 * One simulated cluster (its MVCC store, faults, settings, request log and open watches) and the
 * registry of clusters one server hosts. Clusters share nothing, so test files running in parallel
 * against one server cannot see each other's objects, faults or requests.
 */
import { FaultRegistry } from "./faults.ts";
import { Store } from "./store.ts";
import type { RecordedRequest, Settings } from "./types.ts";

export type ClusterSettings = Required<Omit<Settings, "token">> & { token: string | null };

/** An open watch stream that can be ended from outside (close-watches, cluster deletion, shutdown). */
export interface OpenWatch {
  /** Ends the response body cleanly. */
  end(): void;
}

export const DEFAULT_CLUSTER = "default";
const ID_PATTERN = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export class Cluster {
  readonly id: string;
  readonly store: Store;
  readonly faults = new FaultRegistry();
  readonly settings: ClusterSettings = {
    bookmarkIntervalMs: 60_000,
    bookmarkBeforeTimeoutMs: 2_000,
    token: null,
    watchList: true,
    watchCache: true,
  };
  readonly watches = new Set<OpenWatch>();
  private requestLog: RecordedRequest[] = [];

  constructor(id: string, startRevision?: bigint) {
    this.id = id;
    this.store = new Store(startRevision);
  }

  record(request: RecordedRequest): RecordedRequest {
    this.requestLog.push(request);
    return request;
  }

  requests(): RecordedRequest[] {
    return this.requestLog;
  }

  clearRequests(): void {
    this.requestLog = [];
  }

  /** Ends every open watch cleanly; returns how many there were. */
  closeWatches(): number {
    const open = [...this.watches];
    for (const w of open) w.end();
    return open.length;
  }
}

export class ClusterRegistry {
  private readonly clusters = new Map<string, Cluster>();
  private counter = 0;

  constructor() {
    this.clusters.set(DEFAULT_CLUSTER, new Cluster(DEFAULT_CLUSTER));
  }

  get(id: string): Cluster | undefined {
    return this.clusters.get(id);
  }

  get defaultCluster(): Cluster {
    return this.clusters.get(DEFAULT_CLUSTER)!;
  }

  ids(): string[] {
    return [...this.clusters.keys()];
  }

  /** Throws Error with a message for a bad or taken id. */
  create(id?: string, startRevision?: bigint): Cluster {
    if (id === undefined) {
      do id = `c${++this.counter}-${crypto.randomUUID().slice(0, 8)}`;
      while (this.clusters.has(id));
    }
    if (!ID_PATTERN.test(id)) throw new Error(`cluster id "${id}" must be a DNS label (a-z, 0-9, '-', at most 63 characters)`);
    if (this.clusters.has(id)) throw new Error(`cluster "${id}" already exists`);
    const cluster = new Cluster(id, startRevision);
    this.clusters.set(id, cluster);
    return cluster;
  }

  delete(id: string): boolean {
    const cluster = this.clusters.get(id);
    if (!cluster || id === DEFAULT_CLUSTER) return false;
    cluster.closeWatches();
    this.clusters.delete(id);
    return true;
  }

  closeAllWatches(): void {
    for (const cluster of this.clusters.values()) cluster.closeWatches();
  }
}
