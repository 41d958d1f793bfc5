/**
 * The printers of kinds without a printers.go handler:
 * - `DEFAULT_PRINTER`: rest.NewDefaultTableConvertor, which kube-apiserver uses for built-ins such
 *   as Role, ClusterRole, LimitRange and CustomResourceDefinition: Name, "Created At" (type date,
 *   cell the RFC 3339 creationTimestamp in UTC).
 * - `customResourcePrinter(columns)`: apiextensions' CRD table convertor: Name, then the CRD's
 *   additionalPrinterColumns (Name/Age when it has none), each described by its description or,
 *   without one, "Custom resource definition column (in JSONPath format): <jsonPath>". Cells come
 *   from each column's JSONPath:
 *   null when nothing matches, typed per the column (integer, number, boolean, string; a "date"
 *   column prints HumanDuration since the time, `<unknown>` for "" and `<invalid>` for a string
 *   that is not RFC 3339; objects under a string column as Go's JSON, keys sorted), several
 *   matches joined by " ".
 *   Supported JSONPath: dotted fields and `[n]` indices, e.g. `.status.conditions[0].status`.
 */
import type { KubeObject } from "../../kube/types.ts";
import { humanDuration, parseTimestamp } from "../duration.ts";
import { ageCell, nameCell } from "./cells.ts";
import { column, CREATED_AT_COLUMN, CRD_AGE_COLUMN, NAME_COLUMN } from "./columns.ts";
import { cellPrinter, type Printer, type TableCell } from "./printer.ts";

function createdAtCell(object: KubeObject): string {
  const at = parseTimestamp(object.metadata.creationTimestamp);
  // Go's zero time formats as 0001-01-01T00:00:00Z.
  return at === undefined ? "0001-01-01T00:00:00Z" : new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z");
}

export const DEFAULT_PRINTER: Printer = cellPrinter([NAME_COLUMN, CREATED_AT_COLUMN], (object) => [nameCell(object), createdAtCell(object)]);

/** One CRD `additionalPrinterColumns` entry (apiextensions.k8s.io/v1 CustomResourceColumnDefinition). */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** Where CRD printer columns come from: `columnsFor("widgets.example.com")` is that CRD's served version's columns, if known. */
export interface PrinterColumnSource {
  columnsFor(resource: string): readonly PrinterColumn[] | undefined;
}

/** `.field`, `[index]`, or a quoted key (`['a.b/c']`, `["x"]`), as CRDs write label and annotation paths. */
const PATH_STEP = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/gy;

/** The value at a simple JSONPath, or undefined when a step is missing or the path is unsupported. */
export function jsonPathValue(object: unknown, path: string): unknown {
  const normalized = path.startsWith("{") && path.endsWith("}") ? path.slice(1, -1) : path;
  let current: unknown = object;
  PATH_STEP.lastIndex = 0;
  let consumed = 0;
  for (let match = PATH_STEP.exec(normalized); match !== null; match = PATH_STEP.exec(normalized)) {
    consumed = PATH_STEP.lastIndex;
    const key = match[1] ?? match[3] ?? match[4];
    if (key !== undefined) {
      current = typeof current === "object" && current !== null && !Array.isArray(current) ? (current as Record<string, unknown>)[key] : undefined;
    } else {
      current = Array.isArray(current) ? current[Number(match[2])] : undefined;
    }
    if (current === undefined) return undefined;
  }
  return consumed === normalized.length ? current : undefined;
}

/** The layout metav1.Time's UnmarshalQueryParameter reads (time.RFC3339, fractional seconds allowed). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** ConvertToHumanReadableDateType of a date column's string: "" is Go's zero time. */
function dateCell(value: string, now: number): string {
  if (value === "") return "<unknown>";
  const at = RFC3339.test(value) ? parseTimestamp(value) : undefined;
  return at === undefined ? "<invalid>" : humanDuration(now - at);
}

/** encoding/json's Marshal of a decoded JSON value: as JSON.stringify, with object keys sorted. */
function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${goJson((value as Record<string, unknown>)[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * cellForJSONValue: the JSON value as the column's type prints it; null when it does not fit. A
 * string column prints what jsonpath prints: a string as is, anything else as JSON.
 */
function typedCell(type: string, value: unknown, now: number): TableCell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case "integer":
      return typeof value === "number" ? Math.trunc(value) : null;
    case "number":
      return typeof value === "number" ? value : null;
    case "boolean":
      return typeof value === "boolean" ? value : null;
    case "date":
      return typeof value === "string" ? dateCell(value, now) : null;
    default:
      return typeof value === "string" ? value : goJson(value);
  }
}

/** The convertor's description of a CRD column that has none, followed by its JSONPath. */
const UNDESCRIBED_COLUMN = "Custom resource definition column (in JSONPath format): ";

/** The CRD table convertor for `columns` (the CRD's additionalPrinterColumns); Name/Age for none. */
export function customResourcePrinter(columns: readonly PrinterColumn[] = []): Printer {
  if (columns.length === 0) return cellPrinter([NAME_COLUMN, CRD_AGE_COLUMN], (object, now) => [nameCell(object), ageCell(object, now)]);
  return cellPrinter(
    [NAME_COLUMN, ...columns.map((c) => column(c.name, c.type, c.description || `${UNDESCRIBED_COLUMN}${c.jsonPath}`, c.priority ?? 0, c.format ?? ""))],
    (object, now) => [nameCell(object), ...columns.map((c) => typedCell(c.type, jsonPathValue(object, c.jsonPath), now))],
  );
}
