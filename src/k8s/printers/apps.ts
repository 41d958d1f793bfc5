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
import { AGE_COLUMN, column, CONTAINERS_COLUMN, fieldColumns, fieldDoc, IMAGES_COLUMN, NAME_COLUMN, READY_OF_DESIRED_COLUMN, TEMPLATE_WIDE_COLUMNS, wide } from "./columns.ts";
import { at, int, records, replicasOrDefault, specAndStatus, text } from "./json.ts";
import { labelSelectorString } from "./label-selector.ts";
import { nameAgePrinter, type NameAgeCells } from "./name-age-printer.ts";
import { cellPrinter, type Printer, type TableCell } from "./printer.ts";

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
    const [spec, status] = specAndStatus(deployment);
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

const REPLICA_COUNT_COLUMNS = fieldColumns("integer", "Desired", "Current", "Ready");

/** Desired, current and ready replicas, then the template's wide cells with `selector`. */
function replicaCountCells(object: KubeObject, selector: string): NameAgeCells {
  const [spec, status] = specAndStatus(object);
  return { own: [replicasOrDefault(spec.replicas), int(status.replicas), int(status.readyReplicas)], wide: templateWideCells(spec, selector) };
}

export const REPLICA_SET_PRINTER: Printer = nameAgePrinter(REPLICA_COUNT_COLUMNS, TEMPLATE_WIDE_COLUMNS, (rs) =>
  replicaCountCells(rs, formatLabelSelector(at(rs, "spec").selector)),
);

/** ReplicationController: a map selector (labels.FormatLabels); a nil template gives empty containers. */
export const REPLICATION_CONTROLLER_PRINTER: Printer = nameAgePrinter(REPLICA_COUNT_COLUMNS, TEMPLATE_WIDE_COLUMNS, (rc) =>
  replicaCountCells(rc, formatLabels(at(rc, "spec").selector)),
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

export const DAEMON_SET_PRINTER: Printer = nameAgePrinter(
  [...fieldColumns("integer", "Desired", "Current", "Ready", "Up-to-date", "Available"), column("Node Selector", "string", fieldDoc)],
  TEMPLATE_WIDE_COLUMNS,
  (ds) => {
    const [spec, status] = specAndStatus(ds);
    const counts = [status.desiredNumberScheduled, status.currentNumberScheduled, status.numberReady, status.updatedNumberScheduled, status.numberAvailable];
    return {
      own: [...counts.map(int), formatLabels(templatePodSpec(spec).nodeSelector)],
      wide: templateWideCells(spec, formatLabelSelector(spec.selector)),
    };
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
