/**
 * The reference Pod printer (printers.go 1.32 printPod), read from the function's steps:
 *   Name Ready Status Restarts Age IP* Node* "Nominated Node"* "Readiness Gates"*
 * READY counts ready running containers and started ready sidecars (init containers with
 * restartPolicy Always) over containers plus sidecars. STATUS starts at the phase (or status.reason,
 * or SchedulingGated), is overridden by the first init container still in the way, else by the
 * container statuses walked last to first, and ends as Terminating / Unknown for a deleted pod.
 * RESTARTS adds `(<age> ago)` of the latest lastState.terminated.finishedAt. Rows of Succeeded and
 * Failed pods carry a Completed condition; the fake's Table drops row conditions, as kubectl
 * prints none of them.
 */
import { ageOf, isTime, type Json, list, nameOf, parts, type ReferencePrinter, shortAge, str } from "./cells.ts";

interface Tally {
  restarts: number;
  /** The latest finishedAt, ms; 0 for Go's zero time. */
  lastRestart: number;
}

function count(tally: Tally, status: Json): void {
  tally.restarts += status.restartCount ?? 0;
  const finished = status.lastState?.terminated?.finishedAt;
  if (isTime(finished)) tally.lastRestart = Math.max(tally.lastRestart, Date.parse(finished));
}

/** The reason a terminated container gives: its reason, else its signal or exit code. */
const terminatedReason = (terminated: Json, prefix: string): string =>
  terminated.reason || (terminated.signal ? `${prefix}Signal:${terminated.signal}` : `${prefix}ExitCode:${terminated.exitCode ?? 0}`);

export const pod: ReferencePrinter = (obj, now) => {
  const { spec, status } = parts(obj);
  const conditions = list(status.conditions);
  const initSpecs = list(spec.initContainers);
  const sidecars = new Set(initSpecs.filter((c) => c.restartPolicy === "Always").map((c) => c.name as string));

  const total = list(spec.containers).length + sidecars.size;
  let ready = 0;
  let reason: string = status.reason || status.phase || "";
  if (conditions.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) reason = "SchedulingGated";

  const all: Tally = { restarts: 0, lastRestart: 0 };
  const sidecar: Tally = { restarts: 0, lastRestart: 0 };
  let initializing = false;
  for (const [i, container] of list(status.initContainerStatuses).entries()) {
    count(all, container);
    const isSidecar = sidecars.has(container.name);
    if (isSidecar) count(sidecar, container);
    const state = (container.state ?? {}) as Json;
    if (state.terminated && (state.terminated.exitCode ?? 0) === 0) continue;
    if (isSidecar && container.started === true) {
      if (container.ready) ready++;
      continue;
    }
    if (state.terminated) reason = `Init:${terminatedReason(state.terminated, "")}`;
    else if (state.waiting?.reason && state.waiting.reason !== "PodInitializing") reason = `Init:${state.waiting.reason}`;
    else reason = `Init:${i}/${initSpecs.length}`;
    initializing = true;
    break;
  }

  let tally = all;
  if (!initializing || conditions.some((c) => c.type === "Initialized" && c.status === "True")) {
    tally = { ...sidecar };
    let running = false;
    const statuses = list(status.containerStatuses);
    for (let i = statuses.length - 1; i >= 0; i--) {
      const container = statuses[i]!;
      count(tally, container);
      const state = (container.state ?? {}) as Json;
      if (state.waiting?.reason) reason = state.waiting.reason;
      else if (state.terminated) reason = terminatedReason(state.terminated, "");
      else if (container.ready && state.running) {
        running = true;
        ready++;
      }
    }
    if (reason === "Completed" && running) reason = conditions.some((c) => c.type === "Ready" && c.status === "True") ? "Running" : "NotReady";
  }

  if (obj.metadata.deletionTimestamp) {
    if (status.reason === "NodeLost") reason = "Unknown";
    else if (status.phase !== "Succeeded" && status.phase !== "Failed") reason = "Terminating";
  }

  const restarts = tally.restarts !== 0 && tally.lastRestart !== 0 ? `${tally.restarts} (${shortAge(now - tally.lastRestart)} ago)` : String(tally.restarts);
  const gates = list(spec.readinessGates);
  const gatesTrue = gates.filter((gate) => conditions.find((c) => c.type === gate.conditionType)?.status === "True").length;
  return [
    nameOf(obj),
    str("Ready", `${ready}/${total}`),
    str("Status", reason),
    str("Restarts", restarts),
    ageOf(obj, now),
    // The v1 conversion makes status.podIP the internal PodIPs[0] when set.
    str("IP", status.podIP || list(status.podIPs)[0]?.ip || "<none>", 1),
    str("Node", spec.nodeName || "<none>", 1),
    str("Nominated Node", status.nominatedNodeName || "<none>", 1),
    str("Readiness Gates", gates.length ? `${gatesTrue}/${gates.length}` : "<none>", 1),
  ];
};
