/**
 * The fake API server's own Table printers: what kube-apiserver 1.32 prints for the kinds the fake
 * serves, written from printers.go and the CRD table convertor (column names, wide columns, cell
 * texts and JSON types), independently of src/k8s/printers, so that comparing the two means
 * something. The printers are in reference/, one file per API group; this module picks one.
 *
 * A printer returns the whole row as labelled cells; the column definitions are the labels of a
 * row printed from an empty object. Descriptions are left empty (kubectl never shows them).
 * Built-in kinds are looked up by group and kind, as the server registers its printers by type;
 * every other resource is a custom resource, printed from its CRD's additionalPrinterColumns.
 */
import { printerColumnsOf } from "./crd.ts";
import { horizontalPodAutoscaler } from "./reference/autoscaling.ts";
import { daemonSet, deployment, replicaSet, statefulSet } from "./reference/apps.ts";
import { cronJob, job } from "./reference/batch.ts";
import type { ReferencePrinter } from "./reference/cells.ts";
import { configMap, endpoints, event, namespace, node, persistentVolumeClaim, secret, service } from "./reference/core.ts";
import { customResourcePrinter } from "./reference/custom-resource.ts";
import { ingress } from "./reference/networking.ts";
import { pod } from "./reference/pod.ts";
import type { ResourceDef } from "./resources.ts";

export { type LabelledCell, type ReferenceCell, type ReferencePrinter } from "./reference/cells.ts";

/** By `group/kind` ("" for core). */
const BUILT_IN: Record<string, ReferencePrinter> = {
  "/ConfigMap": configMap,
  "/Secret": secret,
  "/Namespace": namespace,
  "/Node": node,
  "/Pod": pod,
  "/Service": service,
  "/Endpoints": endpoints,
  "/Event": event,
  "/PersistentVolumeClaim": persistentVolumeClaim,
  "apps/Deployment": deployment,
  "apps/ReplicaSet": replicaSet,
  "apps/StatefulSet": statefulSet,
  "apps/DaemonSet": daemonSet,
  "batch/Job": job,
  "batch/CronJob": cronJob,
  "networking.k8s.io/Ingress": ingress,
  "autoscaling/HorizontalPodAutoscaler": horizontalPodAutoscaler,
};

/** The reference printer of a resource, or undefined for a built-in kind the fake prints none for (its Tables are plain JSON). */
export function referencePrinter(def: ResourceDef): ReferencePrinter | undefined {
  return def.builtIn ? BUILT_IN[`${def.group}/${def.kind}`] : customResourcePrinter(printerColumnsOf(def));
}
