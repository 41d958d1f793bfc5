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
import { AGE_COLUMN, column, CONTAINERS_COLUMN, fieldColumn, IMAGES_COLUMN, NAME_COLUMN, READY_OF_DESIRED_COLUMN, templateWideColumns } from "./columns.ts";
import { at, int, records, replicasOrDefault, specAndStatus, text } from "./json.ts";
import { labelSelectorString } from "./label-selector.ts";
import { nameAgePrinter, type NameAgeCells } from "./name-age-printer.ts";
import { cellPrinter, type ColumnDefinition, type Printer, type TableCell } from "./printer.ts";

/** The wide cells Containers, Images and Selector of a workload whose pod template is `spec.template`. */
function templateWideCells(spec: Record<string, unknown>, selector: string): TableCell[] {
  return [...containerCells(templatePodSpec(spec)), selector];
}

export const DEPLOYMENT_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    READY_OF_DESIRED_COLUMN,
    fieldColumn("Up-to-date", "string", "extensionsv1beta1.DeploymentStatus.updatedReplicas"),
    fieldColumn("Available", "string", "extensionsv1beta1.DeploymentStatus.availableReplicas"),
    AGE_COLUMN,
    ...templateWideColumns("extensionsv1beta1.DeploymentSpec.selector"),
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

/** Desired, Current and Ready, described by the swagger docs of `type`'s spec and status. */
function replicaCountColumns(type: "extensionsv1beta1.ReplicaSet" | "apiv1.ReplicationController"): ColumnDefinition[] {
  return [
    fieldColumn("Desired", "integer", `${type}Spec.replicas`),
    fieldColumn("Current", "integer", `${type}Status.replicas`),
    fieldColumn("Ready", "integer", `${type}Status.readyReplicas`),
  ];
}

/** Desired, current and ready replicas, then the template's wide cells with `selector`. */
function replicaCountCells(object: KubeObject, selector: string): NameAgeCells {
  const [spec, status] = specAndStatus(object);
  return { own: [replicasOrDefault(spec.replicas), int(status.replicas), int(status.readyReplicas)], wide: templateWideCells(spec, selector) };
}

export const REPLICA_SET_PRINTER: Printer = nameAgePrinter(replicaCountColumns("extensionsv1beta1.ReplicaSet"), templateWideColumns("extensionsv1beta1.ReplicaSetSpec.selector"), (rs) =>
  replicaCountCells(rs, formatLabelSelector(at(rs, "spec").selector)),
);

/** ReplicationController: a map selector (labels.FormatLabels); a nil template gives empty containers. */
export const REPLICATION_CONTROLLER_PRINTER: Printer = nameAgePrinter(replicaCountColumns("apiv1.ReplicationController"), templateWideColumns("apiv1.ReplicationControllerSpec.selector"), (rc) =>
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
  [
    fieldColumn("Desired", "integer", "extensionsv1beta1.DaemonSetStatus.desiredNumberScheduled"),
    fieldColumn("Current", "integer", "extensionsv1beta1.DaemonSetStatus.currentNumberScheduled"),
    fieldColumn("Ready", "integer", "extensionsv1beta1.DaemonSetStatus.numberReady"),
    fieldColumn("Up-to-date", "integer", "extensionsv1beta1.DaemonSetStatus.updatedNumberScheduled"),
    fieldColumn("Available", "integer", "extensionsv1beta1.DaemonSetStatus.numberAvailable"),
    fieldColumn("Node Selector", "string", "apiv1.PodSpec.nodeSelector"),
  ],
  templateWideColumns("extensionsv1beta1.DaemonSetSpec.selector"),
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
  [NAME_COLUMN, column("Controller", "string", "Controller of the object"), fieldColumn("Revision", "string", "appsv1beta1.ControllerRevision.revision"), AGE_COLUMN],
  (revision, now) => [nameCell(revision), controllerCell(revision), int(revision.revision), ageCell(revision, now)],
);
