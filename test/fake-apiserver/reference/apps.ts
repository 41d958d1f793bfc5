/**
 * Reference printers of apps/v1 workloads (printers.go 1.32 printDeployment, printReplicaSet,
 * printStatefulSet, printDaemonSet); wide columns marked *:
 *   Deployment   Name Ready Up-to-date Available Age Containers* Images* Selector*
 *   ReplicaSet   Name Desired Current Ready Age Containers* Images* Selector*
 *   StatefulSet  Name Ready Age Containers* Images*
 *   DaemonSet    Name Desired Current Ready Up-to-date Available "Node Selector" Age Containers* Images* Selector*
 * Counts are int64 cells (JSON numbers), whatever type the column declares. `spec.replicas` is
 * read as the server stores it, defaulted to 1 (apps/v1 SetDefaults_*) when a client left it out.
 */
import { ageOf, containerCells, formatLabels, formatLabelSelector, type Json, nameOf, num, parts, type ReferencePrinter, selectorString, str } from "./cells.ts";

const replicas = (spec: Json): number => spec.replicas ?? 1;
const podSpec = (spec: Json): Json | undefined => spec.template?.spec;

export const deployment: ReferencePrinter = (obj, now) => {
  const { spec, status } = parts(obj);
  return [
    nameOf(obj),
    str("Ready", `${status.readyReplicas ?? 0}/${replicas(spec)}`),
    num("Up-to-date", status.updatedReplicas ?? 0),
    num("Available", status.availableReplicas ?? 0),
    ageOf(obj, now),
    ...containerCells(podSpec(spec)),
    // LabelSelectorAsSelector(...).String(), not FormatLabelSelector: "" when empty.
    str("Selector", selectorString(spec.selector) ?? "<invalid>", 1),
  ];
};

export const replicaSet: ReferencePrinter = (obj, now) => {
  const { o, spec } = parts(obj);
  return [
    nameOf(obj),
    num("Desired", replicas(spec), "integer"),
    num("Current", o.status?.replicas ?? 0, "integer"),
    num("Ready", o.status?.readyReplicas ?? 0, "integer"),
    ageOf(obj, now),
    ...containerCells(podSpec(spec)),
    str("Selector", formatLabelSelector(spec.selector), 1),
  ];
};

export const statefulSet: ReferencePrinter = (obj, now) => {
  const { o, spec } = parts(obj);
  return [nameOf(obj), str("Ready", `${o.status?.readyReplicas ?? 0}/${replicas(spec)}`), ageOf(obj, now), ...containerCells(podSpec(spec))];
};

export const daemonSet: ReferencePrinter = (obj, now) => {
  const { spec, status } = parts(obj);
  return [
    nameOf(obj),
    num("Desired", status.desiredNumberScheduled ?? 0, "integer"),
    num("Current", status.currentNumberScheduled ?? 0, "integer"),
    num("Ready", status.numberReady ?? 0, "integer"),
    num("Up-to-date", status.updatedNumberScheduled ?? 0, "integer"),
    num("Available", status.numberAvailable ?? 0, "integer"),
    str("Node Selector", formatLabels(podSpec(spec)?.nodeSelector)),
    ageOf(obj, now),
    ...containerCells(podSpec(spec)),
    str("Selector", formatLabelSelector(spec.selector), 1),
  ];
};
