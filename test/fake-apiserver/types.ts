/**
 * Wire types of the fake API server's control API (`/__control/…`), shared by the Node server and the
 * fetch-based client that also runs inside workerd. Types only: importing this file pulls in no code.
 * Resource versions are decimal strings, as on the Kubernetes wire.
 */

/** A Kubernetes object as JSON. The fake stores it verbatim apart from the metadata it stamps. */
export interface FakeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** Plural resource names the fake serves; "deployments.apps" and "widgets.example.com" are accepted too. */
export type ResourceName = "pods" | "configmaps" | "namespaces" | "nodes" | "deployments" | "widgets" | (string & {});

export interface ObjectOp {
  /** create: fails (409) if it exists; update: fails (404) if missing, or (409) on a stale metadata.resourceVersion;
   * upsert: create or update without a version check; delete: fails (404) if missing. */
  op: "create" | "update" | "delete" | "upsert";
  resource: ResourceName;
  /** For delete only `metadata.name` (and `metadata.namespace`) are read. */
  object: FakeObject;
}

export interface ApplyResult {
  /** Cluster revision after the last op. */
  resourceVersion: string;
  /** One per op, as a LIST would return it (built-ins without kind/apiVersion); a deleted object carries its deletion RV. */
  objects: FakeObject[];
}

export interface SeedOptions {
  /** Namespaces `ns-0`, `ns-1`, … (default 1); existing ones are reused. */
  namespaces?: number;
  /** Pods per namespace (default 10), spread over the namespace's deployments. */
  podsPerNamespace?: number;
  /** Deployments per namespace (default 2). */
  deployments?: number;
  /** Approximate JSON size of each pod in bytes (default 3000). */
  podBytes?: number;
  /** PRNG seed for names and placement (default 1). */
  seed?: number;
}

export interface SeedResult {
  resourceVersion: string;
  namespaces: string[];
  created: { namespaces: number; nodes: number; deployments: number; pods: number };
}

export interface ChurnOptions {
  /** PRNG seed: the same seed on the same starting state gives the same operations. */
  seed: number;
  operations: number;
  resource?: ResourceName;
}

export interface ChurnResult {
  resourceVersion: string;
  created: number;
  updated: number;
  deleted: number;
}

export interface StateResult {
  resourceVersion: string;
  /** Every current object in key order, as a LIST would return it. */
  items: FakeObject[];
}

export interface RecordedRequest {
  method: string;
  /** Kubernetes path without the `/clusters/{id}` prefix, e.g. `/api/v1/namespaces/demo/pods`. */
  path: string;
  /** Query parameters (first value of each). */
  query: Record<string, string>;
  /** Epoch milliseconds when the request arrived. */
  time: number;
  verb: "list" | "watch" | "get" | "create" | "update" | "delete" | "discovery" | "unknown";
  resource?: string;
  namespace?: string;
  /** HTTP status of the response head (0 until it is written). */
  status: number;
  /** Kinds of the faults that shaped this response. */
  faults?: string[];
}

export interface CompactResult {
  compactedRevision: string;
  resourceVersion: string;
}

interface FaultBase {
  /** How many matching requests the fault affects (default 1). */
  count?: number;
  /** Only requests for this resource (plural name) are affected. */
  resource?: ResourceName;
}

/** Answer an HTTP error Status instead of the list or watch. */
export interface StatusFault extends FaultBase {
  kind: "status";
  /** Omitted: the next list or watch, whichever comes first. */
  on?: "list" | "watch";
  code: number;
  reason?: string;
  message?: string;
  /** Sets `details.retryAfterSeconds` and the Retry-After header. */
  retryAfterSeconds?: number;
}

/** Watch: after `afterEvents` event lines, write half of the next line and destroy the socket. */
export interface DropStreamFault extends FaultBase {
  kind: "dropStream";
  afterEvents?: number;
}

/** Watch: after `afterEvents` event lines, write one line that is not JSON, then carry on. */
export interface MalformedLineFault extends FaultBase {
  kind: "malformedLine";
  afterEvents?: number;
}

/** Watch: after `afterEvents` event lines, send one ERROR event with a Status of `code`, then end the stream. */
export interface ErrorEventFault extends FaultBase {
  kind: "errorEvent";
  code: number;
  afterEvents?: number;
  reason?: string;
  message?: string;
}

/** Watch: end the stream cleanly after `events` event lines (0 = right after the response head). */
export interface CloseAfterFault extends FaultBase {
  kind: "closeAfter";
  events: number;
}

/** List: the next request carrying `continue` gets 410 Expired. */
export interface ExpireContinueFault extends FaultBase {
  kind: "expireContinue";
}

/** List: the next request with resourceVersion ∉ {"", "0"} gets 504 "Too large resource version". */
export interface TooLargeRvFault extends FaultBase {
  kind: "tooLargeRv";
}

/** Hold the response head for `ms` (the list snapshot is still taken on arrival). */
export interface DelayFault extends FaultBase {
  kind: "delay";
  on?: "list" | "watch";
  ms: number;
}

/**
 * List: write the first `afterItems` items of the response, flush them, then hold the rest of the
 * body for `ms` (default 30000) or until the client goes away, so a test can interrupt the reader in
 * the middle of one response at a known point. `page`: only page 1 ("first": no continue token) or
 * only continuation pages ("continue"); default any list. A response with no more than `afterItems`
 * items is not held (the fault is still used up).
 */
export interface StallListFault extends FaultBase {
  kind: "stallList";
  afterItems: number;
  ms?: number;
  page?: "first" | "continue";
}

/** Which request a whole-response fault answers: a list, a watch, or the `/version` probe. */
export type ResponseFaultTarget = "list" | "watch" | "version";

/**
 * Answer `code` (default 302) with `location` instead of the request, as a misconfigured ingress,
 * tunnel or aggregated API server might. `on` omitted: the next list, watch or /version request.
 */
export interface RedirectFault extends FaultBase {
  kind: "redirect";
  on?: ResponseFaultTarget;
  location: string;
  code?: number;
}

/**
 * Answer with a body whose one JSON value is `bytes` long, streamed with back-pressure (so an endless
 * body costs the server nothing once the client stops reading): with `code` 200 (default), a watch
 * line (`on: "watch"`), a list item (`on: "list"`) or a /version answer (`on: "version"`); with an
 * error `code`, a Status whose message is that long.
 */
export interface OversizedBodyFault extends FaultBase {
  kind: "oversizedBody";
  on: ResponseFaultTarget;
  bytes: number;
  code?: number;
}

export type ResponseFault = RedirectFault | OversizedBodyFault;

export type Fault =
  | RedirectFault
  | OversizedBodyFault
  | StatusFault
  | DropStreamFault
  | MalformedLineFault
  | ErrorEventFault
  | CloseAfterFault
  | ExpireContinueFault
  | TooLargeRvFault
  | DelayFault
  | StallListFault;

export interface Settings {
  /** Interval of periodic BOOKMARK events (default 60000). */
  bookmarkIntervalMs?: number;
  /** How long before a watch's timeout the last BOOKMARK is sent (default 2000, as the watch cache). */
  bookmarkBeforeTimeoutMs?: number;
  /** Bearer token Kubernetes requests must carry; null or "" turns auth off. */
  token?: string | null;
  /** WatchList feature gate (default true): watch-list streams and the defaulting of RV ""/"0" watches. */
  watchList?: boolean;
  /** Watch cache on (default true): a LIST at RV "0" ignores `limit`. Off: RV "0" lists are paginated
   * like any other (reference §1.2.2), which is how a reflector learns to keep paginating. */
  watchCache?: boolean;
}

export interface ClusterInfo {
  id: string;
  url: string;
  resourceVersion: string;
  compactedRevision: string;
  openWatches: number;
  settings: Required<Omit<Settings, "token">> & { token: string | null };
  faults: Fault[];
}
