/**
 * The server-side Table printer: what kube-apiserver 1.32 answers to
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, built from plain JSON objects.
 *
 * Contract:
 * - Pure and synchronous: no I/O, no clock (the caller passes `now`), inputs are never mutated.
 *   Rows share the caller's metadata / object references (no deep copy), so serialize before
 *   changing the objects.
 * - Columns are those of KK `pkg/printers/internalversion/printers.go` (1.32 line) with their
 *   descriptions (the swagger docs of k8s.io/api and apimachinery v0.32):
 *     Pod         Name Ready Status Restarts Age | wide: IP Node "Nominated Node" "Readiness Gates"
 *     Deployment  Name Ready Up-to-date Available Age | wide: Containers Images Selector
 *     other kinds Name Age — the shape the CRD table convertor serves for a resource without
 *                 additionalPrinterColumns (Age has type "date"; its cells are HumanDuration text).
 *   Like the real server (printers/storage `Wide: true`), the wide (priority 1) columns are always
 *   generated; kubectl hides them unless `-o wide`.
 * - Cells are strings except Deployment UP-TO-DATE and AVAILABLE, which are JSON integers (the
 *   printer appends int64s although the columns are declared "string").
 * - Cell rules follow printPod / printDeployment branch for branch, reading the v1 JSON as the
 *   server reads the internal type: an absent field is Go's zero value, `spec.replicas` absent is
 *   the v1 default 1, and the pod IP is `status.podIP`, else `status.podIPs[0].ip` (core/v1
 *   conversion makes podIP authoritative).
 * - Row `object` follows `includeObject` (AS `endpoints/handlers/response.go` asTable):
 *   "Metadata" (the default) → `{kind:"PartialObjectMetadata", apiVersion:<Table apiVersion>,
 *   metadata:<the full ObjectMeta>}`; "Object" → the full object with its `kind` and `apiVersion`
 *   set (list items arrive without them); "None" → `null`, because the server's RawExtension
 *   marshals to `null` and `omitempty` never drops a struct, so the key is present.
 * - Row `conditions` appear only for Succeeded / Failed pods.
 * - `table()` always has `metadata` (possibly `{}`) and a `rows` array; `columnDefinitions` is
 *   `null` when `withColumns` is false, as in every watch event after the first.
 *
 * Not covered: the per-kind printers of other built-ins (ConfigMap's DATA, Service's TYPE …) and
 * CRD additionalPrinterColumns; those kinds get Name/Age. The server checks `includeObject` only
 * while converting rows, so a bad value with zero rows is not an error there; parseIncludeObject
 * rejects it up front.
 */

import { ValidationError } from "../errors.ts";
import type { KubeObject, ObjectMeta } from "../kube/types.ts";
import { humanDuration, parseTimestamp, timestampAge } from "./duration.ts";

/** Which object each row embeds (`?includeObject=`). */
export type IncludeObject = "None" | "Metadata" | "Object";

/** The negotiated Table group/version (`v=v1` or `v=v1beta1` in the Accept header). */
export type TableApiVersion = "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";

export interface TableOptions {
  /** The time ages are measured at, in milliseconds since the epoch. */
  now: number;
  includeObject: IncludeObject;
  apiVersion: TableApiVersion;
  /**
   * With includeObject "Object": the apiVersion written into an object that lacks one (list items
   * have none), e.g. "v1" or "apps/v1". Without it such an object gets only its `kind`.
   */
  objectApiVersion?: string;
  /** A custom resource's columns (its CRD's additionalPrinterColumns), printed instead of the kind's. */
  custom?: CustomColumns | undefined;
}

/** Columns defined outside this file (k8s/printer-columns.ts): their definitions and each object's cells. */
export interface CustomColumns {
  definitions: ColumnDefinition[];
  cells(object: KubeObject, now: number): TableCell[];
}

/** metav1.TableColumnDefinition; every field is always serialized. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** `null` and booleans come only from custom columns (a CRD column whose path is absent, a boolean field). */
export type TableCell = string | number | boolean | null;

/** metav1.TableRowCondition as the pod printer sets it. */
export interface TableRowCondition {
  type: "Completed";
  status: "True";
  reason: string;
  message: string;
}

export interface PartialObjectMetadata {
  kind: "PartialObjectMetadata";
  apiVersion: TableApiVersion;
  metadata: ObjectMeta;
}

export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  /** Per includeObject; `null` for "None". */
  object: PartialObjectMetadata | KubeObject | null;
}

/** The Table's ListMeta: a list's resourceVersion/continue/remainingItemCount, or an object's resourceVersion. */
export interface TableMetadata {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface Table {
  kind: "Table";
  apiVersion: TableApiVersion;
  metadata: TableMetadata;
  columnDefinitions: ColumnDefinition[] | null;
  rows: TableRow[];
}

/**
 * Parses the `includeObject` query parameter: absent or "" is "Metadata".
 * Throws ValidationError (a 400) `unrecognized includeObject value: "x"` for anything else.
 */
export function parseIncludeObject(value: string | undefined): IncludeObject {
  switch (value) {
    case undefined:
    case "":
    case "Metadata":
      return "Metadata";
    case "Object":
    case "None":
      return value;
    default:
      throw new ValidationError(`unrecognized includeObject value: ${JSON.stringify(value)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Column definitions
// ---------------------------------------------------------------------------------------------

// metav1.ObjectMeta{}.SwaggerDoc() (apimachinery v0.32).
const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_TIMESTAMP_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

function column(name: string, type: string, description: string, priority = 0, format = ""): ColumnDefinition {
  return { name, type, format, description, priority };
}

const POD_COLUMNS: readonly ColumnDefinition[] = [
  column("Name", "string", NAME_DESCRIPTION, 0, "name"),
  column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
  column("Status", "string", "The aggregate status of the containers in this pod."),
  column(
    "Restarts",
    "string",
    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
  ),
  column("Age", "string", CREATION_TIMESTAMP_DESCRIPTION),
  // core/v1 PodStatus / PodSpec swagger docs (k8s.io/api v0.32).
  column("IP", "string", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1),
  column(
    "Node",
    "string",
    "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
    1,
  ),
  column(
    "Nominated Node",
    "string",
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
    1,
  ),
  column(
    "Readiness Gates",
    "string",
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    1,
  ),
];

const DEPLOYMENT_COLUMNS: readonly ColumnDefinition[] = [
  column("Name", "string", NAME_DESCRIPTION, 0, "name"),
  column("Ready", "string", "Number of the pod with ready state"),
  // extensions/v1beta1 DeploymentStatus / DeploymentSpec swagger docs (k8s.io/api v0.32).
  column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
  column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
  column("Age", "string", CREATION_TIMESTAMP_DESCRIPTION),
  column("Containers", "string", "Names of each container in the template.", 1),
  column("Images", "string", "Images referenced by each container in the template.", 1),
  column(
    "Selector",
    "string",
    "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
    1,
  ),
];

// apiextensions-apiserver serveDefaultColumnsIfEmpty + the Name column its table convertor prepends.
const DEFAULT_COLUMNS: readonly ColumnDefinition[] = [
  column("Name", "string", NAME_DESCRIPTION, 0, "name"),
  column("Age", "date", CREATION_TIMESTAMP_DESCRIPTION),
];

/** The column definitions (wide ones included) for objects of `kind`; a fresh array each call. */
export function columnDefinitions(kind: string, custom?: CustomColumns): ColumnDefinition[] {
  if (custom) return custom.definitions.map((c) => ({ ...c }));
  const columns = kind === "Pod" ? POD_COLUMNS : kind === "Deployment" ? DEPLOYMENT_COLUMNS : DEFAULT_COLUMNS;
  return columns.map((c) => ({ ...c }));
}

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/** One row for `object` of `kind`: its cells, pod conditions, and the embedded object per includeObject. */
export function tableRow(kind: string, object: KubeObject, options: TableOptions): TableRow {
  const printed = options.custom
    ? { cells: options.custom.cells(object, options.now) }
    : kind === "Pod"
      ? printPod(object, options.now)
      : kind === "Deployment"
        ? { cells: printDeployment(object, options.now) }
        : { cells: [nameOf(object), timestampAge(object.metadata.creationTimestamp, options.now)] };
  // Key order as the server writes a row: cells, conditions (only when set), object.
  const embedded = embeddedObject(kind, object, options);
  return printed.conditions
    ? { cells: printed.cells, conditions: printed.conditions, object: embedded }
    : { cells: printed.cells, object: embedded };
}

/**
 * A Table of `objects` (in the order given). `metadata` is the list's ListMeta, or for a single
 * object (a get, a watch event) `{ resourceVersion: <the object's> }`. `withColumns` false gives
 * `columnDefinitions: null`, for watch events after the first.
 */
export function table(
  kind: string,
  objects: readonly KubeObject[],
  metadata: TableMetadata,
  options: TableOptions,
  withColumns = true,
): Table {
  const listMeta: TableMetadata = {};
  // ListMeta's omitempty: "" strings are dropped; remainingItemCount is a pointer, so 0 stays.
  if (metadata.resourceVersion) listMeta.resourceVersion = metadata.resourceVersion;
  if (metadata.continue) listMeta.continue = metadata.continue;
  if (metadata.remainingItemCount !== undefined) listMeta.remainingItemCount = metadata.remainingItemCount;
  return {
    kind: "Table",
    apiVersion: options.apiVersion,
    metadata: listMeta,
    columnDefinitions: withColumns ? columnDefinitions(kind, options.custom) : null,
    rows: objects.map((o) => tableRow(kind, o, options)),
  };
}

function embeddedObject(kind: string, object: KubeObject, options: TableOptions): TableRow["object"] {
  switch (options.includeObject) {
    case "None":
      return null;
    case "Metadata":
      return { kind: "PartialObjectMetadata", apiVersion: options.apiVersion, metadata: object.metadata };
    case "Object": {
      const { kind: ownKind, apiVersion: ownApiVersion, ...rest } = object;
      const apiVersion = ownApiVersion ?? options.objectApiVersion;
      // TypeMeta first, as the server encodes it.
      return apiVersion === undefined ? { kind: ownKind ?? kind, ...rest } : { kind: ownKind ?? kind, apiVersion, ...rest };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// JSON readers: a missing or mistyped field reads as Go's zero value.
// ---------------------------------------------------------------------------------------------

type JsonRecord = Record<string, unknown>;

function record(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

function records(value: unknown): JsonRecord[] {
  return Array.isArray(value) ? value.map((v) => record(v) ?? {}) : [];
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function int(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : 0;
}

function nameOf(object: KubeObject): string {
  return text(object.metadata.name);
}

// ---------------------------------------------------------------------------------------------
// Pod (printPod)
// ---------------------------------------------------------------------------------------------

const POD_SUCCEEDED_CONDITIONS: readonly TableRowCondition[] = [
  { type: "Completed", status: "True", reason: "Succeeded", message: "The pod has completed successfully." },
];
const POD_FAILED_CONDITIONS: readonly TableRowCondition[] = [
  { type: "Completed", status: "True", reason: "Failed", message: "The pod failed." },
];

/** node.NodeUnreachablePodReason: the node controller's reason for pods on a lost node. */
const NODE_LOST_REASON = "NodeLost";

/** A sidecar: an init container with `restartPolicy: Always` (podutil.IsRestartableInitContainer). */
function isRestartableInitContainer(container: JsonRecord | undefined): boolean {
  return container?.restartPolicy === "Always";
}

/** `lastState.terminated.finishedAt` in ms, or undefined (Go's zero time) when absent. */
function lastTerminationFinishedAt(status: JsonRecord): number | undefined {
  const terminated = record(record(status.lastState)?.terminated);
  return terminated ? parseTimestamp(terminated.finishedAt) : undefined;
}

/** The later of two optional instants (metav1.Time.Before against a zero time). */
function later(current: number | undefined, candidate: number | undefined): number | undefined {
  if (candidate === undefined) return current;
  return current === undefined || current < candidate ? candidate : current;
}

function conditionStatus(conditions: JsonRecord[], type: string): string | undefined {
  return conditions.find((c) => c.type === type)?.status as string | undefined;
}

function printPod(pod: KubeObject, now: number): { cells: TableCell[]; conditions?: TableRowCondition[] } {
  const spec = record(pod.spec) ?? {};
  const status = record(pod.status) ?? {};
  const podConditions = records(status.conditions);
  const initContainerSpecs = records(spec.initContainers);

  let restarts = 0;
  let sidecarRestarts = 0;
  let totalContainers = records(spec.containers).length;
  let readyContainers = 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;

  const phase = text(status.phase);
  let reason = text(status.reason) || phase;

  for (const condition of podConditions) {
    if (condition.type === "PodScheduled" && condition.reason === "SchedulingGated") reason = "SchedulingGated";
  }

  const conditions =
    phase === "Succeeded" ? [...POD_SUCCEEDED_CONDITIONS] : phase === "Failed" ? [...POD_FAILED_CONDITIONS] : undefined;

  // By name, a later duplicate winning, as the printer's map does.
  const initContainers = new Map<string, JsonRecord>();
  for (const container of initContainerSpecs) {
    initContainers.set(text(container.name), container);
    if (isRestartableInitContainer(container)) totalContainers++;
  }

  // Init containers in order: those done (exit 0) and started sidecars are skipped; the first
  // other one names the status and ends the walk.
  let initializing = false;
  const initStatuses = records(status.initContainerStatuses);
  for (const [i, container] of initStatuses.entries()) {
    restarts += int(container.restartCount);
    lastRestart = later(lastRestart, lastTerminationFinishedAt(container));
    const sidecar = isRestartableInitContainer(initContainers.get(text(container.name)));
    if (sidecar) {
      sidecarRestarts += int(container.restartCount);
      lastSidecarRestart = later(lastSidecarRestart, lastTerminationFinishedAt(container));
    }
    const state = record(container.state) ?? {};
    const terminated = record(state.terminated);
    const waiting = record(state.waiting);
    if (terminated && int(terminated.exitCode) === 0) continue;
    if (sidecar && container.started === true) {
      if (container.ready === true) readyContainers++;
      continue;
    }
    if (terminated) {
      const terminatedReason = text(terminated.reason);
      if (terminatedReason === "") {
        const signal = int(terminated.signal);
        reason = signal !== 0 ? `Init:Signal:${signal}` : `Init:ExitCode:${int(terminated.exitCode)}`;
      } else {
        reason = `Init:${terminatedReason}`;
      }
    } else if (waiting && text(waiting.reason) !== "" && waiting.reason !== "PodInitializing") {
      reason = `Init:${text(waiting.reason)}`;
    } else {
      reason = `Init:${i}/${initContainerSpecs.length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || conditionStatus(podConditions, "Initialized") === "True") {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = records(status.containerStatuses);
    // Last to first, so the first container with a waiting/terminated reason has the last word.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i] ?? {};
      restarts += int(container.restartCount);
      lastRestart = later(lastRestart, lastTerminationFinishedAt(container));
      const state = record(container.state) ?? {};
      const waiting = record(state.waiting);
      const terminated = record(state.terminated);
      if (waiting && text(waiting.reason) !== "") {
        reason = text(waiting.reason);
      } else if (terminated && text(terminated.reason) !== "") {
        reason = text(terminated.reason);
      } else if (terminated) {
        const signal = int(terminated.signal);
        reason = signal !== 0 ? `Signal:${signal}` : `ExitCode:${int(terminated.exitCode)}`;
      } else if (container.ready === true && record(state.running)) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // A completed container next to one still running: the pod is not done.
    if (reason === "Completed" && hasRunning) {
      reason = podConditions.some((c) => c.type === "Ready" && c.status === "True") ? "Running" : "NotReady";
    }
  }

  const deleting = pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
  if (deleting && status.reason === NODE_LOST_REASON) {
    reason = "Unknown";
  } else if (deleting && phase !== "Succeeded" && phase !== "Failed") {
    reason = "Terminating";
  }

  const restartsCell =
    restarts !== 0 && lastRestart !== undefined ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : String(restarts);

  const podIPs = records(status.podIPs);
  const ip = text(status.podIP) || text(podIPs[0]?.ip);
  const readinessGates = records(spec.readinessGates);
  let readinessGatesCell = "<none>";
  if (readinessGates.length > 0) {
    let trueConditions = 0;
    for (const gate of readinessGates) {
      if (conditionStatus(podConditions, text(gate.conditionType)) === "True") trueConditions++;
    }
    readinessGatesCell = `${trueConditions}/${readinessGates.length}`;
  }

  const cells: TableCell[] = [
    nameOf(pod),
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsCell,
    timestampAge(pod.metadata.creationTimestamp, now),
    ip || "<none>",
    text(spec.nodeName) || "<none>",
    text(status.nominatedNodeName) || "<none>",
    readinessGatesCell,
  ];
  return conditions ? { cells, conditions } : { cells };
}

// ---------------------------------------------------------------------------------------------
// Deployment (printDeployment)
// ---------------------------------------------------------------------------------------------

function printDeployment(deployment: KubeObject, now: number): TableCell[] {
  const spec = record(deployment.spec) ?? {};
  const status = record(deployment.status) ?? {};
  // v1 defaulting (SetDefaults_Deployment) makes an absent spec.replicas 1.
  const desired = typeof spec.replicas === "number" ? int(spec.replicas) : 1;
  const containers = records(record(record(spec.template)?.spec)?.containers);
  return [
    nameOf(deployment),
    `${int(status.readyReplicas)}/${desired}`,
    int(status.updatedReplicas),
    int(status.availableReplicas),
    timestampAge(deployment.metadata.creationTimestamp, now),
    containers.map((c) => text(c.name)).join(","),
    containers.map((c) => text(c.image)).join(","),
    labelSelectorString(spec.selector),
  ];
}

// ---------------------------------------------------------------------------------------------
// metav1.LabelSelectorAsSelector(...).String()
// ---------------------------------------------------------------------------------------------

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** validation.IsQualifiedName: `[prefix/]name`, prefix a DNS-1123 subdomain (≤253), name ≤63. */
function isQualifiedName(key: string): boolean {
  const parts = key.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? "";
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix === "" || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  } else {
    return false;
  }
  return name !== "" && name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}

function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

interface SelectorRequirement {
  key: string;
  text: string;
}

/**
 * The selector text the Deployment printer shows: requirements sorted by key (stable: matchLabels
 * before matchExpressions on a tie), `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, values
 * sorted, joined by ",". An absent or empty selector gives "", an invalid one "<invalid>".
 */
export function labelSelectorString(selector: unknown): string {
  const sel = record(selector);
  if (!sel) return "";
  const matchLabels = record(sel.matchLabels) ?? {};
  const matchExpressions = records(sel.matchExpressions);
  const requirements: SelectorRequirement[] = [];
  for (const [key, value] of Object.entries(matchLabels)) {
    const v = text(value);
    if (!isQualifiedName(key) || !isLabelValue(v)) return "<invalid>";
    requirements.push({ key, text: `${key}=${v}` });
  }
  for (const expression of matchExpressions) {
    const key = text(expression.key);
    const values = Array.isArray(expression.values) ? expression.values.map(text) : [];
    if (!isQualifiedName(key) || !values.every(isLabelValue)) return "<invalid>";
    switch (expression.operator) {
      case "In":
      case "NotIn": {
        if (values.length === 0) return "<invalid>";
        const op = expression.operator === "In" ? "in" : "notin";
        requirements.push({ key, text: `${key} ${op} (${[...values].sort().join(",")})` });
        break;
      }
      case "Exists":
      case "DoesNotExist":
        if (values.length !== 0) return "<invalid>";
        requirements.push({ key, text: expression.operator === "Exists" ? key : `!${key}` });
        break;
      default:
        return "<invalid>";
    }
  }
  return requirements
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(",");
}
