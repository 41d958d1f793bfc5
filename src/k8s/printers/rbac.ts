/**
 * rbac.authorization.k8s.io/v1 binding printers (KK printers.go 1.32 printRoleBinding,
 * printClusterRoleBinding): Name Role Age | wide: Users Groups ServiceAccounts. ROLE is
 * `kind/name` of the roleRef; the wide cells list subjects by kind (rbac.SubjectsStrings, service
 * accounts as `namespace/name`), joined by ", ". Roles and ClusterRoles have no printer: the
 * server's default convertor prints them (default.ts).
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, fieldColumn, NAME_COLUMN, wide } from "./columns.ts";
import { at, records, text } from "./json.ts";
import { cellPrinter, type Printer, type TableCell } from "./printer.ts";

function bindingCells(binding: KubeObject, now: number): TableCell[] {
  const roleRef = at(binding, "roleRef");
  const byKind: Record<string, string[]> = { User: [], Group: [], ServiceAccount: [] };
  for (const subject of records(binding.subjects)) {
    const kind = text(subject.kind);
    const name = kind === "ServiceAccount" ? `${text(subject.namespace)}/${text(subject.name)}` : text(subject.name);
    byKind[kind]?.push(name);
  }
  return [
    nameCell(binding),
    `${text(roleRef.kind)}/${text(roleRef.name)}`,
    ageCell(binding, now),
    (byKind.User ?? []).join(", "),
    (byKind.Group ?? []).join(", "),
    (byKind.ServiceAccount ?? []).join(", "),
  ];
}

function bindingPrinter(of: "roleBinding" | "clusterRoleBinding"): Printer {
  return cellPrinter(
    [
      NAME_COLUMN,
      fieldColumn("Role", "string", of === "roleBinding" ? "rbacv1beta1.RoleBinding.roleRef" : "rbacv1beta1.ClusterRoleBinding.roleRef"),
      AGE_COLUMN,
      wide("Users", "string", `Users in the ${of}`),
      wide("Groups", "string", `Groups in the ${of}`),
      wide("ServiceAccounts", "string", `ServiceAccounts in the ${of}`),
    ],
    bindingCells,
  );
}

export const ROLE_BINDING_PRINTER = bindingPrinter("roleBinding");
export const CLUSTER_ROLE_BINDING_PRINTER = bindingPrinter("clusterRoleBinding");
