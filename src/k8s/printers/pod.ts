/**
 * Pod (KK printers.go printPod, 1.32): Name Ready Status Restarts Age | wide: IP Node
 * "Nominated Node" "Readiness Gates". The status walk is kubernetes-api-server-facts.md §2.
 * Rows of Succeeded / Failed pods carry a Completed condition. The pod IP is `status.podIP`, else
 * `status.podIPs[0].ip` (core/v1 conversion makes podIP authoritative).
 */
import type { KubeObject } from "../../kube/types.ts";
import { humanDuration, parseTimestamp } from "../duration.ts";
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { int, record, records, text, type JsonRecord } from "./json.ts";
import type { ColumnDefinition, PrintedRow, Printer, TableCell, TableRowCondition } from "./printer.ts";

const POD_COLUMNS: readonly ColumnDefinition[] = [
  NAME_COLUMN,
  column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
  column("Status", "string", "The aggregate status of the containers in this pod."),
  column(
    "Restarts",
    "string",
    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
  ),
  AGE_COLUMN,
  fieldColumn("IP", "string", "apiv1.PodStatus.podIP", 1),
  fieldColumn("Node", "string", "apiv1.PodSpec.nodeName", 1),
  fieldColumn("Nominated Node", "string", "apiv1.PodStatus.nominatedNodeName", 1),
  fieldColumn("Readiness Gates", "string", "apiv1.PodSpec.readinessGates", 1),
];

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

function printPod(pod: KubeObject, now: number): PrintedRow {
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
    nameCell(pod),
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsCell,
    ageCell(pod, now),
    ip || "<none>",
    text(spec.nodeName) || "<none>",
    text(status.nominatedNodeName) || "<none>",
    readinessGatesCell,
  ];
  return conditions ? { cells, conditions } : { cells };
}

export const POD_PRINTER: Printer = { columns: POD_COLUMNS, print: printPod };
