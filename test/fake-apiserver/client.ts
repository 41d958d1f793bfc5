/**
 * Typed client of the fake API server's control API, built on `fetch` alone so tests running inside
 * workerd can drive the Node server. Every method resolves once the server has applied the change
 * (and written it to open watches), or rejects with FakeApiError carrying the HTTP status and body.
 */
import type {
  ApplyResult,
  ChurnOptions,
  ChurnResult,
  ClusterInfo,
  CompactResult,
  FakeObject,
  Fault,
  ObjectOp,
  RecordedRequest,
  ResourceName,
  SeedOptions,
  SeedResult,
  Settings,
  StateResult,
} from "./types.ts";

export type * from "./types.ts";
export * from "./builders.ts";

export class FakeApiError extends Error {
  override readonly name = "FakeApiError";
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown, what: string) {
    const message = (body as { message?: unknown } | null)?.message;
    super(`${what} failed with ${status}${typeof message === "string" ? `: ${message}` : ""}`);
    this.status = status;
    this.body = body;
  }
}

export interface CreateClusterOptions extends Settings {
  /** A DNS label; default a fresh unique id. */
  id?: string;
  /** Revision the empty cluster starts at (default "1"); e.g. "9007199254740993" to test RVs beyond 2^53. */
  startRevision?: string;
}

/** Just the identity of an object, for deletes. */
export interface ObjectRef {
  metadata: { name?: string; namespace?: string; [field: string]: unknown };
}

const trim = (url: string): string => url.replace(/\/+$/, "");

async function call<T>(url: string, what: string, init: RequestInit = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, { ...init, headers });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // keep the text
  }
  if (!response.ok) throw new FakeApiError(response.status, body, what);
  return body as T;
}

const post = <T>(url: string, what: string, body: unknown): Promise<T> =>
  call<T>(url, what, { method: "POST", body: JSON.stringify(body ?? {}) });

export class FakeCluster {
  /** Kubernetes API root of this cluster, e.g. http://127.0.0.1:8001/clusters/c1-ab12cd34. */
  readonly url: string;
  readonly id: string;
  private readonly control: string;

  /** Wraps an existing cluster by its URL; the server root URL names the "default" cluster. */
  constructor(url: string) {
    this.url = trim(url);
    const scoped = /\/clusters\/([^/]+)$/.exec(this.url);
    this.id = scoped ? decodeURIComponent(scoped[1]!) : "default";
    this.control = `${this.url}/__control`;
  }

  /** Creates a new, empty cluster on the server at `baseUrl`. */
  static async create(baseUrl: string, options: CreateClusterOptions = {}): Promise<FakeCluster> {
    const { id } = await post<{ id: string; url: string }>(`${trim(baseUrl)}/__control/clusters`, "creating a cluster", options);
    return new FakeCluster(`${trim(baseUrl)}/clusters/${encodeURIComponent(id)}`);
  }

  /** Applies ops in order; the first failing op rejects (earlier ones stay applied). */
  apply(ops: ObjectOp[]): Promise<ApplyResult> {
    return post<ApplyResult>(`${this.control}/objects`, "apply", { ops });
  }

  private async one(op: ObjectOp["op"], resource: ResourceName, object: FakeObject | ObjectRef): Promise<FakeObject> {
    const result = await post<ApplyResult>(`${this.control}/objects`, `${op} ${resource}`, { op, resource, object });
    return result.objects[0]!;
  }

  /** Creates; 409 if it exists. Resolves to the stored object as a LIST would return it. */
  create(resource: ResourceName, object: FakeObject): Promise<FakeObject> {
    return this.one("create", resource, object);
  }

  /** Replaces; 404 if missing, 409 if `metadata.resourceVersion` is set and stale. */
  update(resource: ResourceName, object: FakeObject): Promise<FakeObject> {
    return this.one("update", resource, object);
  }

  upsert(resource: ResourceName, object: FakeObject): Promise<FakeObject> {
    return this.one("upsert", resource, object);
  }

  /** Deletes; 404 if missing. Resolves to the last state, stamped with the deletion RV. */
  delete(resource: ResourceName, object: FakeObject | ObjectRef): Promise<FakeObject> {
    return this.one("delete", resource, object);
  }

  seed(options: SeedOptions = {}): Promise<SeedResult> {
    return post<SeedResult>(`${this.control}/seed`, "seed", options);
  }

  churn(options: ChurnOptions): Promise<ChurnResult> {
    return post<ChurnResult>(`${this.control}/churn`, "churn", options);
  }

  /** Every current object of `resource` (in one namespace if given), in key order. */
  state(resource: ResourceName = "pods", namespace?: string): Promise<StateResult> {
    const query = new URLSearchParams({ resource });
    if (namespace !== undefined) query.set("namespace", namespace);
    return call<StateResult>(`${this.control}/state?${query}`, "state");
  }

  async requests(): Promise<RecordedRequest[]> {
    return (await call<{ items: RecordedRequest[] }>(`${this.control}/requests`, "requests")).items;
  }

  async clearRequests(): Promise<void> {
    await call(`${this.control}/requests`, "clear requests", { method: "DELETE" });
  }

  /** Compacts history up to `revision` (default: the current revision). */
  compact(revision?: string): Promise<CompactResult> {
    return post<CompactResult>(`${this.control}/compact`, "compact", revision === undefined ? {} : { revision });
  }

  async fault(fault: Fault | Fault[]): Promise<void> {
    await post(`${this.control}/faults`, "fault", Array.isArray(fault) ? { faults: fault } : fault);
  }

  /** Faults still pending, with their remaining counts. */
  async faults(): Promise<Fault[]> {
    return (await call<{ items: Fault[] }>(`${this.control}/faults`, "faults")).items;
  }

  async clearFaults(): Promise<void> {
    await call(`${this.control}/faults`, "clear faults", { method: "DELETE" });
  }

  /** Changes the given settings; resolves to all settings now in force. */
  settings(settings: Settings): Promise<ClusterInfo["settings"]> {
    return post<ClusterInfo["settings"]>(`${this.control}/settings`, "settings", settings);
  }

  /** Ends every open watch stream of the cluster cleanly; resolves to how many there were. */
  async closeWatches(): Promise<number> {
    return (await post<{ closed: number }>(`${this.control}/close-watches`, "close watches", {})).closed;
  }

  info(): Promise<ClusterInfo> {
    return call<ClusterInfo>(`${this.control}`, "info");
  }

  /** The cluster's current revision. */
  async revision(): Promise<string> {
    return (await this.info()).resourceVersion;
  }

  /** Drops the cluster and its memory on the server (not allowed for "default"). */
  async dispose(): Promise<void> {
    await call(`${this.control}/cluster`, "dispose", { method: "DELETE" });
  }

  /** A raw Kubernetes API request to this cluster, e.g. `kube("/api/v1/pods?limit=2")`. */
  kube(path: string, init?: RequestInit): Promise<Response> {
    return fetch(`${this.url}${path}`, init);
  }
}
