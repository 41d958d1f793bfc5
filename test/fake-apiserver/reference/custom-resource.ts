/**
 * The reference printer of custom resources (apiextensions-apiserver 1.32 tableconvertor): Name, then
 * one column per additionalPrinterColumn of the served version, or, for a CRD without any, an Age
 * column of type date. Each cell is the first match of the column's JSONPath (AllowMissingKeys: a
 * miss is null, which kubectl prints `<none>`):
 * - string: the match as jsonpath prints it: a string as is, a number or boolean as text, an object or
 *   array as Go's json.Marshal writes it (object keys sorted);
 * - integer, number, boolean: the JSON value when it has that type (a number is truncated for
 *   integer), else null;
 * - date: the short age since an RFC 3339 string, `<unknown>` for "", `<invalid>` for anything else
 *   that is a string, null for a non-string.
 * JSONPath here is what CRDs write: `.a.b`, `[n]`, `['key.with/dots']`.
 */
import { ageOf, nameOf, shortAge, type Json, type LabelledCell, type ReferenceCell, type ReferencePrinter } from "./cells.ts";

/** One additionalPrinterColumns entry as a CRD declares it. */
export interface CrdColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
  format?: string;
}

const STEP = /^(?:\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\])/;

/** The value at `path` in `obj`, or undefined when a step is missing. */
function find(obj: unknown, path: string): unknown {
  let rest = path;
  let current: unknown = obj;
  while (rest !== "") {
    const step = STEP.exec(rest);
    if (!step) throw new Error(`the fake's JSONPath reader does not handle ${JSON.stringify(path)}`);
    rest = rest.slice(step[0].length);
    const index = step[2];
    if (index !== undefined) current = Array.isArray(current) ? current[Number(index)] : undefined;
    else current = current && typeof current === "object" && !Array.isArray(current) ? (current as Json)[step[1] ?? step[3]!] : undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

/** encoding/json's Marshal of a decoded value: objects' keys in sorted order. */
const goJson = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));

function cell(type: string, value: unknown, nowMs: number): ReferenceCell {
  if (value === undefined || value === null) return null;
  switch (type) {
    case "string":
      return typeof value === "string" ? value : typeof value === "object" ? goJson(value) : String(value);
    case "integer":
    case "number":
      // A JSON number; float64 converted to int64 for an integer column.
      if (typeof value !== "number") return null;
      return type === "integer" ? Math.trunc(value) : value;
    case "boolean":
      return value === true || value === false ? value : null;
    case "date":
      if (typeof value !== "string") return null;
      if (value === "") return "<unknown>";
      return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) ? shortAge(nowMs - Date.parse(value)) : "<invalid>";
    default:
      return null;
  }
}

/** The printer of a custom resource whose CRD declares `columns` (none: Name and Age). */
export function customResourcePrinter(columns: readonly CrdColumn[]): ReferencePrinter {
  if (columns.length === 0) return (obj, now) => [nameOf(obj), { ...ageOf(obj, now), type: "date" }];
  return (obj, now) => [
    nameOf(obj),
    ...columns.map(
      (c): LabelledCell => ({
        column: c.name,
        type: c.type,
        priority: c.priority === 1 ? 1 : 0,
        value: cell(c.type, find(obj, c.jsonPath), now),
      }),
    ),
  ];
}
