/**
 * core/v1 Node printer (KK printers.go 1.32 printNode):
 *   Name Status Roles Age Version | wide: Internal-IP External-IP OS-Image Kernel-Version Container-Runtime
 * STATUS is Ready / NotReady from the Ready condition (the last one listed wins), Unknown without
 * it, then ",SchedulingDisabled" when cordoned. ROLES are the sorted, distinct suffixes of
 * `node-role.kubernetes.io/<role>` labels and values of a `kubernetes.io/role` label, `<none>`
 * without any. Missing wide node-info fields are `<unknown>`, missing addresses `<none>`.
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, record, records, text } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

const ROLE_LABEL_PREFIX = "node-role.kubernetes.io/";
const ROLE_LABEL = "kubernetes.io/role";

function statusCell(node: KubeObject): string {
  let ready: string | undefined;
  for (const condition of records(at(node, "status").conditions)) {
    if (condition.type === "Ready") ready = condition.status === "True" ? "Ready" : "NotReady";
  }
  const states = [ready ?? "Unknown"];
  if (at(node, "spec").unschedulable === true) states.push("SchedulingDisabled");
  return states.join(",");
}

function rolesCell(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [key, value] of Object.entries(record(node.metadata.labels) ?? {})) {
    if (key.startsWith(ROLE_LABEL_PREFIX) && key.length > ROLE_LABEL_PREFIX.length) roles.add(key.slice(ROLE_LABEL_PREFIX.length));
    else if (key === ROLE_LABEL && text(value) !== "") roles.add(text(value));
  }
  return roles.size === 0 ? "<none>" : [...roles].sort().join(",");
}

function addressCell(node: KubeObject, type: string): string {
  return text(records(at(node, "status").addresses).find((a) => a.type === type)?.address) || "<none>";
}

export const NODE_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    AGE_COLUMN,
    fieldColumn("Version", "string", "apiv1.NodeSystemInfo.kubeletVersion"),
    fieldColumn("Internal-IP", "string", "apiv1.NodeStatus.addresses", 1),
    fieldColumn("External-IP", "string", "apiv1.NodeStatus.addresses", 1),
    fieldColumn("OS-Image", "string", "apiv1.NodeSystemInfo.osImage", 1),
    fieldColumn("Kernel-Version", "string", "apiv1.NodeSystemInfo.kernelVersion", 1),
    fieldColumn("Container-Runtime", "string", "apiv1.NodeSystemInfo.containerRuntimeVersion", 1),
  ],
  (node, now) => {
    const info = at(node, "status", "nodeInfo");
    return [
      nameCell(node),
      statusCell(node),
      rolesCell(node),
      ageCell(node, now),
      text(info.kubeletVersion),
      addressCell(node, "InternalIP"),
      addressCell(node, "ExternalIP"),
      text(info.osImage) || "<unknown>",
      text(info.kernelVersion) || "<unknown>",
      text(info.containerRuntimeVersion) || "<unknown>",
    ];
  },
);
