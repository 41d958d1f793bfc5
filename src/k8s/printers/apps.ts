/**
 * apps/v1 printers (KK printers.go 1.32 printDeployment, printReplicaSet, printStatefulSet,
 * printDaemonSet, printControllerRevision), plus core/v1 ReplicationController, which prints as a
 * ReplicaSet does with a map selector:
 *   Deployment          Name Ready Up-to-date Available Age | wide: Containers Images Selector
 *   ReplicaSet, RC      Name Desired Current Ready Age      | wide: Containers Images Selector
 *   StatefulSet         Name Ready Age                      | wide: Containers Images
 *   DaemonSet           Name Desired Current Ready Up-to-date Available "Node Selector" Age
 *                       | wide: Containers Images Selector
 *   ControllerRevision  Name Controller Revision Age
 * Counts are JSON integers (the Go printers append int64s, whatever the declared type); READY of
 * Deployment and StatefulSet is "ready/desired". An absent `spec.replicas` is the v1 default 1.
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, containerCells, formatLabels, formatLabelSelector, nameCell, templatePodSpec } from "./cells.ts";
import { AGE_COLUMN, column, CONTAINERS_COLUMN, fieldDoc, IMAGES_COLUMN, NAME_COLUMN, READY_OF_DESIRED_COLUMN, wide } from "./columns.ts";
import { at, int, records, replicasOrDefault, text } from "./json.ts";
import { labelSelectorString } from "./label-selector.ts";
import { cellPrinter, type Printer, type TableCell } from "./printer.ts";

const SELECTOR_COLUMN = wide("Selector", "string", fieldDoc);

/** The wide cells Containers, Images and Selector of a workload whose pod template is `spec.template`. */
function templateWideCells(spec: Record<string, unknown>, selector: string): TableCell[] {
  return [...containerCells(templatePodSpec(spec)), selector];
}

export const DEPLOYMENT_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    READY_OF_DESIRED_COLUMN,
    // extensions/v1beta1 DeploymentStatus / DeploymentSpec swagger docs (k8s.io/api v0.32).
    column("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
    column("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    wide("Selector", "string", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."),
  ],
  (deployment, now) => {
    const spec = at(deployment, "spec");
    const status = at(deployment, "status");
    return [
      nameCell(deployment),
      `${int(status.readyReplicas)}/${replicasOrDefault(spec.replicas)}`,
      int(status.updatedReplicas),
      int(status.availableReplicas),
      ageCell(deployment, now),
      // LabelSelectorAsSelector(...).String(): "" for an empty selector, unlike FormatLabelSelector.
      ...templateWideCells(spec, labelSelectorString(spec.selector)),
    ];
  },
);

const REPLICA_COUNT_COLUMNS = [
  NAME_COLUMN,
  column("Desired", "integer", fieldDoc),
  column("Current", "integer", fieldDoc),
  column("Ready", "integer", fieldDoc),
  AGE_COLUMN,
  CONTAINERS_COLUMN,
  IMAGES_COLUMN,
  SELECTOR_COLUMN,
] as const;

/** Desired, current and ready replicas, age, then the template's wide cells with `selector`. */
function replicaCountCells(object: KubeObject, now: number, selector: string): TableCell[] {
  const spec = at(object, "spec");
  const status = at(object, "status");
  return [
    nameCell(object),
    replicasOrDefault(spec.replicas),
    int(status.replicas),
    int(status.readyReplicas),
    ageCell(object, now),
    ...templateWideCells(spec, selector),
  ];
}

export const REPLICA_SET_PRINTER: Printer = cellPrinter(REPLICA_COUNT_COLUMNS, (rs, now) =>
  replicaCountCells(rs, now, formatLabelSelector(at(rs, "spec").selector)),
);

/** ReplicationController: a map selector (labels.FormatLabels); a nil template gives empty containers. */
export const REPLICATION_CONTROLLER_PRINTER: Printer = cellPrinter(REPLICA_COUNT_COLUMNS, (rc, now) =>
  replicaCountCells(rc, now, formatLabels(at(rc, "spec").selector)),
);

export const STATEFUL_SET_PRINTER: Printer = cellPrinter(
  [NAME_COLUMN, READY_OF_DESIRED_COLUMN, AGE_COLUMN, CONTAINERS_COLUMN, IMAGES_COLUMN],
  (sts, now) => {
    const spec = at(sts, "spec");
    return [
      nameCell(sts),
      `${int(at(sts, "status").readyReplicas)}/${replicasOrDefault(spec.replicas)}`,
      ageCell(sts, now),
      ...containerCells(templatePodSpec(spec)),
    ];
  },
);

export const DAEMON_SET_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Desired", "integer", fieldDoc),
    column("Current", "integer", fieldDoc),
    column("Ready", "integer", fieldDoc),
    column("Up-to-date", "integer", fieldDoc),
    column("Available", "integer", fieldDoc),
    column("Node Selector", "string", fieldDoc),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  (ds, now) => {
    const spec = at(ds, "spec");
    const status = at(ds, "status");
    return [
      nameCell(ds),
      int(status.desiredNumberScheduled),
      int(status.currentNumberScheduled),
      int(status.numberReady),
      int(status.updatedNumberScheduled),
      int(status.numberAvailable),
      formatLabels(templatePodSpec(spec).nodeSelector),
      ageCell(ds, now),
      ...templateWideCells(spec, formatLabelSelector(spec.selector)),
    ];
  },
);

/** `kind.group/name` lower-cased (formatResourceName of the controller's GroupKind), `<none>` without a controller. */
function controllerCell(revision: KubeObject): string {
  const owner = records(revision.metadata.ownerReferences).find((ref) => ref.controller === true);
  if (!owner) return "<none>";
  const apiVersion = text(owner.apiVersion);
  const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
  const kind = text(owner.kind);
  if (kind === "" && group === "") return text(owner.name);
  return `${(group === "" ? kind : `${kind}.${group}`).toLowerCase()}/${text(owner.name)}`;
}

export const CONTROLLER_REVISION_PRINTER: Printer = cellPrinter(
  [NAME_COLUMN, column("Controller", "string", "Controller of the object"), column("Revision", "string", fieldDoc), AGE_COLUMN],
  (revision, now) => [nameCell(revision), controllerCell(revision), int(revision.revision), ageCell(revision, now)],
);
