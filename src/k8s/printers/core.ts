/**
 * core/v1 printers for configuration and namespaces (KK printers.go 1.32 printConfigMap,
 * printSecret, printNamespace, printServiceAccount, printPodTemplate, printResourceQuota):
 *   ConfigMap       Name Data Age            (DATA: data + binaryData keys, an integer)
 *   Secret          Name Type Data Age       (DATA: data ∪ stringData keys, an integer)
 *   Namespace       Name Status Age
 *   ServiceAccount  Name Secrets Age         (SECRETS: an integer)
 *   PodTemplate     Name Containers Images "Pod Labels"   (no Age)
 *   ResourceQuota   Name Request Limit Age   ("name: used/hard, …", names sorted; `limits.*` in Limit)
 * Secret DATA counts the keys of the object as cached, plus those an informer dropped (without
 * keepSecretData its transform drops `data` and `stringData` and keeps their number in the
 * `edge-informer.dev/secret-data-keys` annotation, cache/sensitive-resources.ts), so it is the
 * API server's count either way.
 */
import { SECRET_DATA_KEYS_ANNOTATION } from "../../cache/sensitive-resources.ts";
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, containerCells, formatLabels, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, CONTAINERS_COLUMN, fieldColumn, IMAGES_COLUMN, NAME_COLUMN } from "./columns.ts";
import { at, entryCount, record, records, text } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

export const CONFIG_MAP_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Data", "string", "apiv1.ConfigMap.data"), AGE_COLUMN], (cm, now) => [
  nameCell(cm),
  entryCount(cm.data) + entryCount(cm.binaryData),
  ageCell(cm, now),
]);

/**
 * The internal Secret's `data` keys: the v1 conversion writes `stringData` into `data`, and an
 * informer that drops them keeps their number in SECRET_DATA_KEYS_ANNOTATION.
 */
function secretDataCount(secret: KubeObject): number {
  const keys = new Set([...Object.keys(record(secret.data) ?? {}), ...Object.keys(record(secret.stringData) ?? {})]);
  const dropped = text(record(secret.metadata.annotations)?.[SECRET_DATA_KEYS_ANNOTATION]);
  return keys.size + (/^\d+$/.test(dropped) ? Number(dropped) : 0);
}

export const SECRET_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Type", "string", "apiv1.Secret.type"), fieldColumn("Data", "string", "apiv1.Secret.data"), AGE_COLUMN], (secret, now) => [
  nameCell(secret),
  text(secret.type),
  secretDataCount(secret),
  ageCell(secret, now),
]);

export const NAMESPACE_PRINTER: Printer = cellPrinter(
  [NAME_COLUMN, column("Status", "string", "The status of the namespace"), AGE_COLUMN],
  (namespace, now) => [nameCell(namespace), text(at(namespace, "status").phase), ageCell(namespace, now)],
);

export const SERVICE_ACCOUNT_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Secrets", "string", "apiv1.ServiceAccount.secrets"), AGE_COLUMN], (sa, now) => [
  nameCell(sa),
  records(sa.secrets).length,
  ageCell(sa, now),
]);

export const POD_TEMPLATE_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    // The template's containers are this kind's main columns, not wide ones.
    { ...CONTAINERS_COLUMN, priority: 0 },
    { ...IMAGES_COLUMN, priority: 0 },
    column("Pod Labels", "string", "The labels for the pod template."),
  ],
  (template) => [nameCell(template), ...containerCells(at(template, "template", "spec")), formatLabels(at(template, "template", "metadata").labels)],
);

function quotaCells(status: Record<string, unknown>): [request: string, limit: string] {
  const hard = record(status.hard) ?? {};
  const used = record(status.used) ?? {};
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of Object.keys(hard).sort()) {
    const pieces = name.split(".");
    const target = pieces.length > 1 && pieces[0] === "limits" ? limit : request;
    target.push(`${name}: ${text(used[name]) || "0"}/${text(hard[name])}`);
  }
  return [request.join(", "), limit.join(", ")];
}

export const RESOURCE_QUOTA_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Request", "string", "Request represents a minimum amount of cpu/memory that a container may consume."),
    column("Limit", "string", "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
    AGE_COLUMN,
  ],
  (quota, now) => [nameCell(quota), ...quotaCells(at(quota, "status")), ageCell(quota, now)],
);
