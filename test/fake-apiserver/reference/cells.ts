/**
 * What the fake's reference printers are made of: the labelled cell a printer returns, and the
 * apimachinery and printers.go helpers several kinds share (HumanDuration, translateTimestampSince,
 * labels.FormatLabels, metav1.FormatLabelSelector, layoutContainerCells …), written here from their
 * documented behaviour, independently of src/k8s/printers.
 *
 * Objects are read as the API server stores them, as the internal Go types see them: an absent
 * field is the zero value ("" / 0 / empty), and only fields that are pointers in Go (marked where
 * read) tell absent from zero.
 */
import type { FakeObject } from "../types.ts";

export type ReferenceCell = string | number | boolean | null;

export interface LabelledCell {
  column: string;
  type: string;
  /** 1 for the columns `kubectl get -o wide` adds. */
  priority: 0 | 1;
  format?: "name";
  value: ReferenceCell;
}

export type ReferencePrinter = (obj: FakeObject, nowMs: number) => LabelledCell[];

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form test objects

/** kubectl's short age (duration.HumanDuration): 45s, 3m20s, 12m, 5h10m, 20h, 3d4h, 30d, 2y10d, 9y. */
export function shortAge(ms: number): string {
  const s = Math.trunc(ms / 1000);
  if (s < -1) return "<invalid>";
  if (s < 120) return `${Math.max(s, 0)}s`;
  const m = Math.trunc(s / 60);
  const h = Math.trunc(m / 60);
  const d = Math.trunc(h / 24);
  const y = Math.trunc(d / 365);
  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) => (small === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${small}${smallUnit}`);
  if (m < 10) return pair(m, "m", s % 60, "s");
  if (h < 3) return `${m}m`;
  if (h < 8) return pair(h, "h", m % 60, "m");
  if (h < 48) return `${h}h`;
  if (d < 8) return pair(d, "d", h % 24, "h");
  if (d < 730) return `${d}d`;
  if (y < 8) return pair(y, "y", d % 365, "d");
  return `${y}y`;
}

/** Whether a timestamp field holds a time (Go's zero time when absent). */
export const isTime = (timestamp: unknown): timestamp is string => typeof timestamp === "string" && timestamp !== "";

/** translateTimestampSince: the short age of a timestamp, `<unknown>` for the zero time. */
export function since(timestamp: unknown, nowMs: number): string {
  return isTime(timestamp) ? shortAge(nowMs - Date.parse(timestamp)) : "<unknown>";
}

export const str = (column: string, value: string, priority: 0 | 1 = 0): LabelledCell => ({ column, type: "string", priority, value });
/** A cell the Go printer appends as an int64 (a JSON number), under a column declared `type`. */
export const num = (column: string, value: number, type = "string", priority: 0 | 1 = 0): LabelledCell => ({ column, type, priority, value });
export const nameOf = (obj: FakeObject, priority: 0 | 1 = 0): LabelledCell => ({ column: "Name", type: "string", priority, format: "name", value: obj.metadata.name ?? "" });
export const ageOf = (obj: FakeObject, nowMs: number): LabelledCell => str("Age", since(obj.metadata.creationTimestamp, nowMs));

/** An object with its spec and status (each {} when absent), read as free-form JSON. */
export function parts(obj: FakeObject): { o: Json; spec: Json; status: Json } {
  const o = obj as Json;
  return { o, spec: o.spec ?? {}, status: o.status ?? {} };
}

/** The number of keys of a map field (0 when absent). */
export const keys = (value: unknown): number => (value && typeof value === "object" ? Object.keys(value).length : 0);
export const list = (value: unknown): Json[] => (Array.isArray(value) ? value : []);

/** labels.FormatLabels: `k=v` sorted by key, `<none>` for none. */
export function formatLabels(map: unknown): string {
  const entries = Object.entries((map ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${v}`).join(",");
}

const OPERATORS: Record<string, (key: string, values: string[]) => string> = {
  In: (key, values) => `${key} in (${values.join(",")})`,
  NotIn: (key, values) => `${key} notin (${values.join(",")})`,
  Exists: (key) => key,
  DoesNotExist: (key) => `!${key}`,
};

/**
 * metav1.LabelSelectorAsSelector(sel).String(): a requirement per matchLabels entry and per
 * expression, sorted by key, values sorted; "" for a nil or empty selector; undefined for an
 * unknown operator (the conversion's error).
 */
export function selectorString(selector: Json | undefined): string | undefined {
  const requirements: [key: string, text: string][] = [];
  for (const [key, value] of Object.entries((selector?.matchLabels ?? {}) as Record<string, string>)) requirements.push([key, `${key}=${value}`]);
  for (const expression of list(selector?.matchExpressions)) {
    const operator = OPERATORS[expression.operator];
    if (!operator) return undefined;
    requirements.push([expression.key, operator(expression.key, [...((expression.values ?? []) as string[])].sort())]);
  }
  return requirements
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, text]) => text)
    .join(",");
}

/** metav1.FormatLabelSelector: the selector text, `<none>` when empty, `<error>` when it does not convert. */
export function formatLabelSelector(selector: Json | undefined): string {
  const text = selectorString(selector);
  if (text === undefined) return "<error>";
  return text === "" ? "<none>" : text;
}

/** layoutContainerCells: names and images of a pod spec's containers, each joined by ",". */
export function containerCells(podSpec: Json | undefined, priority: 0 | 1 = 1): LabelledCell[] {
  const containers = list(podSpec?.containers);
  return [str("Containers", containers.map((c) => c.name ?? "").join(","), priority), str("Images", containers.map((c) => c.image ?? "").join(","), priority)];
}

/** loadBalancerStatusStringer (wide, so never clipped): each ingress point's IP, else hostname, as a sorted set. */
export function loadBalancerPoints(loadBalancer: Json | undefined): string {
  const points = new Set<string>();
  for (const ingress of list(loadBalancer?.ingress)) {
    if (ingress.ip) points.add(ingress.ip);
    else if (ingress.hostname) points.add(ingress.hostname);
  }
  return [...points].sort().join(",");
}

/** printers.go's "first `max`, then ` + N more...`" lists, N counted over all `items`. */
export function firstOf(items: string[], max: number, separator = ","): string {
  const shown = items.slice(0, max).join(separator);
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}
