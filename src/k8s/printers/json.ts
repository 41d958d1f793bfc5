/**
 * Readers for the plain JSON objects the printers see. The API server prints its internal Go
 * types, where an absent field is the zero value; these readers give the same answer for an
 * absent or mistyped field ({} , [], "", 0, false), so a printer never branches on `undefined`.
 */

export type JsonRecord = Record<string, unknown>;

/** An object, or undefined when the value is absent or not an object. */
export function record(value: unknown): JsonRecord | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

/** The object at `path` below `value` (each step an object), or {} when any step is missing. */
export function at(value: unknown, ...path: string[]): JsonRecord {
  let current = record(value);
  for (const key of path) current = record(current?.[key]);
  return current ?? {};
}

/** An array of objects ({} for a non-object element), or [] when absent. */
export function records(value: unknown): JsonRecord[] {
  return Array.isArray(value) ? value.map((v) => record(v) ?? {}) : [];
}

/** An array of strings ("" for a non-string element), or [] when absent. */
export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(text) : [];
}

export function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** An integer as Go's int conversion sees it: truncated; 0 when absent. */
export function int(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : 0;
}

/** The v1 default of an optional replica count: absent means 1 (SetDefaults_* of apps/v1, core/v1). */
export function replicasOrDefault(value: unknown): number {
  return typeof value === "number" ? int(value) : 1;
}

/** A string map's entry count (ConfigMap data, Secret data): 0 when absent. */
export function entryCount(value: unknown): number {
  return Object.keys(record(value) ?? {}).length;
}

/** An object's `spec` and `status`, each {} when absent. */
export function specAndStatus(object: unknown): [spec: JsonRecord, status: JsonRecord] {
  return [at(object, "spec"), at(object, "status")];
}
