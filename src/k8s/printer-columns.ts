/**
 * Table columns of a custom resource from its CRD's additionalPrinterColumns, as the
 * apiextensions-apiserver's table convertor prints them (KK staging/src/k8s.io/
 * apiextensions-apiserver/pkg/registry/customresource/tableconvertor): a `Name` column first, then
 * each declared column; a cell is the value at the column's JSONPath — a `date` column as the age
 * since that timestamp, an absent value `null` (kubectl prints `<none>`). Handed to the Table
 * code through `CustomColumns` (k8s/table.ts).
 *
 * Where we differ: JSONPath is the simple form CRDs use (`.a.b`, `.a[0].b`, `.a['x.y']`); filters
 * and wildcards answer `null`.
 */
import type { KubeObject } from "../kube/types.ts";
import { timestampAge } from "./duration.ts";
import type { PrinterColumn } from "./resource-description.ts";
import type { ColumnDefinition, CustomColumns, TableCell } from "./table.ts";

// metav1.ObjectMeta{}.SwaggerDoc()["name"], as the convertor describes its Name column.
const NAME_COLUMN: ColumnDefinition = {
  name: "Name",
  type: "string",
  format: "name",
  description: "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
  priority: 0,
};

/** The columns of a custom resource, or undefined when its CRD declares none (the built-in default applies). */
export function customColumns(columns: readonly PrinterColumn[]): CustomColumns | undefined {
  if (columns.length === 0) return undefined;
  return {
    definitions: [NAME_COLUMN, ...columns.map(({ name, type, format, description, priority }) => ({ name, type, format, description, priority }))],
    cells: (object, now) => [object.metadata.name ?? "", ...columns.map((column) => cell(object, column, now))],
  };
}

function cell(object: KubeObject, column: PrinterColumn, now: number): TableCell {
  const value = valueAt(object, column.jsonPath);
  if (value === undefined || value === null) return null;
  if (column.type === "date") return timestampAge(value, now);
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  return JSON.stringify(value);
}

/** The value at a simple JSONPath (`.spec.color`, `.status.conditions[0].type`, `.metadata.labels['a.b/c']`). */
export function valueAt(object: unknown, path: string): unknown {
  const steps = [...path.matchAll(/\.([A-Za-z0-9_-]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g)];
  if (steps.map((m) => m[0]).join("") !== path.replace(/^\{|\}$/g, "")) return undefined;
  let at: unknown = object;
  for (const step of steps) {
    if (at === null || typeof at !== "object") return undefined;
    const key = step[1] ?? step[3] ?? step[4];
    at = key !== undefined ? (at as Record<string, unknown>)[key] : (at as unknown[])[Number(step[2])];
  }
  return at;
}
