/**
 * Kubernetes field selectors (apimachinery fields.ParseSelector, the apiserver's selectable
 * fields); selectors.ts states what every selector guarantees.
 *
 * Guarantees:
 * - Terms are `path=value`, `path==value` or `path!=value`; in a value `\\`, `\,` and `\=` are
 *   escapes and a bare `=` is an error; empty terms are skipped, as the apiserver skips them.
 * - A field is read as the API server reads its selectable fields: from the typed object, so a
 *   built-in's omitted bool or count has its Go zero value (`spec.unschedulable` of a Node is "false")
 *   and a few fields are derived (SELECTABLE_FIELDS); any other missing field compares as "".
 */
import { SelectorError } from "./selector-error.ts";

export interface FieldRequirement {
  /** Dotted path as written, e.g. "spec.nodeName". */
  readonly path: string;
  readonly operator: "=" | "!=";
  /** Unescaped value. */
  readonly value: string;
}

export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/** Parses a field selector such as `spec.nodeName=node-1,status.phase!=Running`. */
export function parseFieldSelector(text: string): FieldSelector {
  const requirements: FieldRequirement[] = [];
  for (const { term, column } of splitUnescaped(text, ",")) {
    if (term.trim() === "") continue; // the apiserver skips empty terms ("a=b,,c=d")
    const op = findOperator(term);
    if (!op) {
      throw new SelectorError(
        `field selector "${text}": term '${term}' at column ${column} has no operator; expected path=value, path==value or path!=value`,
      );
    }
    // Paths never contain whitespace, so surrounding blanks are forgiven; values are kept verbatim.
    const path = term.slice(0, op.index).trim();
    if (path === "") throw new SelectorError(`field selector "${text}": term '${term}' at column ${column} has no field path`);
    if (!/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/.test(path)) {
      throw new SelectorError(
        `field selector "${text}": invalid field path '${path}' at column ${column}: expected dot-separated names such as spec.nodeName`,
      );
    }
    const raw = term.slice(op.index + op.text.length);
    const value = unescapeFieldValue(text, raw, column + op.index + op.text.length);
    requirements.push({ path, operator: op.text === "!=" ? "!=" : "=", value });
  }
  return { requirements };
}

/** Splits on `separator` where it is not escaped by a backslash; escapes are kept for the value parser. */
function splitUnescaped(text: string, separator: string): { term: string; column: number }[] {
  const terms: { term: string; column: number }[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") {
      i++;
      continue;
    }
    if (text[i] === separator) {
      terms.push({ term: text.slice(start, i), column: start + 1 });
      start = i + 1;
    }
  }
  terms.push({ term: text.slice(start), column: start + 1 });
  return terms;
}

/** First unescaped operator, trying `!=` and `==` before `=` at each position (fields.splitTerm). */
function findOperator(term: string): { index: number; text: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === "\\") {
      i++;
      continue;
    }
    for (const text of ["!=", "==", "="]) {
      if (term.startsWith(text, i)) return { index: i, text };
    }
  }
  return undefined;
}

function unescapeFieldValue(selector: string, raw: string, column: number): string {
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === "\\") {
      const escaped = raw[i + 1];
      if (escaped === undefined) {
        throw new SelectorError(`field selector "${selector}": value ends with a lone '\\' at column ${column + i}`);
      }
      if (escaped !== "\\" && escaped !== "," && escaped !== "=") {
        throw new SelectorError(
          `field selector "${selector}": invalid escape sequence '\\${escaped}' at column ${column + i}; only \\\\, \\, and \\= are allowed`,
        );
      }
      out += escaped;
      i++;
      continue;
    }
    if (ch === "=") {
      throw new SelectorError(`field selector "${selector}": unescaped '=' in a value at column ${column + i}; write it as \\=`);
    }
    out += ch;
  }
  return out;
}

/** The value at a dotted path, through own properties only (`constructor`, `__proto__` are absent). */
function readPath(obj: unknown, path: string): unknown {
  let current: unknown = obj;
  for (const segment of path.split(".")) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** A bool field: fmt.Sprint of the Go value, so absent is "false". */
const flagAt = (path: string) => (obj: unknown) => String(readPath(obj, path) === true);
/** A count field: strconv.Itoa of the Go value, so absent is "0". */
const countAt = (path: string) => (obj: unknown) => {
  const value = readPath(obj, path);
  return typeof value === "number" ? String(value) : "0";
};
const textAt = (path: string) => (obj: unknown) => {
  const value = readPath(obj, path);
  return typeof value === "string" ? value : "";
};

/**
 * The selectable fields of built-ins whose value is not "the string at that path, or ''": keyed by
 * `group/Kind` ("" for core), read as the API server's `*ToSelectableFields` build them from the
 * typed object (kubernetes pkg/registry/<group>/<resource>/strategy.go).
 */
const SELECTABLE_FIELDS: Record<string, Record<string, (obj: unknown) => string>> = {
  "/Node": { "spec.unschedulable": flagAt("spec.unschedulable") },
  "/Pod": { "spec.hostNetwork": flagAt("spec.hostNetwork") },
  "/ReplicationController": { "status.replicas": countAt("status.replicas") },
  "apps/ReplicaSet": { "status.replicas": countAt("status.replicas") },
  "batch/Job": { "status.successful": countAt("status.succeeded") },
  "/Event": {
    source: (obj) => textAt("source.component")(obj) || textAt("reportingController")(obj),
    reportingComponent: textAt("reportingController"),
  },
};

/**
 * Whether some built-in derives `path`'s selector value from its typed object rather than reading
 * the string at the path (an absent `spec.hostNetwork` selects as "false"): an index of the path's
 * raw values cannot answer a selector on it.
 */
export function isDerivedField(path: string): boolean {
  return Object.values(SELECTABLE_FIELDS).some((fields) => Object.hasOwn(fields, path));
}

function selectableField(obj: unknown, path: string): ((obj: unknown) => string) | undefined {
  const apiVersion = readPath(obj, "apiVersion");
  const kind = readPath(obj, "kind");
  if (typeof apiVersion !== "string" || typeof kind !== "string") return undefined;
  const slash = apiVersion.indexOf("/");
  const fields = SELECTABLE_FIELDS[`${slash === -1 ? "" : apiVersion.slice(0, slash)}/${kind}`];
  return fields && Object.hasOwn(fields, path) ? fields[path] : undefined;
}

/**
 * Reads a field as the API server would: a built-in's selectable field from its typed value (see
 * SELECTABLE_FIELDS), otherwise the dotted path with strings as they are, numbers and booleans as
 * text, anything else (or absence) as "".
 */
export function fieldValue(obj: unknown, path: string): string {
  const derived = selectableField(obj, path);
  if (derived) return derived(obj);
  const current = readPath(obj, path);
  if (typeof current === "string") return current;
  if (typeof current === "number" || typeof current === "boolean" || typeof current === "bigint") return String(current);
  return "";
}

/** Whether `obj` satisfies every field requirement. */
export function matchesFields(sel: FieldSelector, obj: unknown): boolean {
  for (const r of sel.requirements) {
    const equal = fieldValue(obj, r.path) === r.value;
    if (r.operator === "=" ? !equal : equal) return false;
  }
  return true;
}

function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Canonical text with values re-escaped. */
export function fieldSelectorToString(sel: FieldSelector): string {
  return sel.requirements.map((r) => `${r.path}${r.operator}${escapeFieldValue(r.value)}`).join(",");
}
