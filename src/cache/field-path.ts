/**
 * Field paths name a value inside an object for indexers and transforms: dot-separated segments,
 * with bracket-quoted segments for keys that contain dots or slashes:
 * `spec.nodeName`, `metadata.labels.app`, `metadata.labels['app.kubernetes.io/name']`.
 *
 * Paths walk objects parsed from the API server's JSON, so they follow own properties only: the
 * segments `__proto__`, `constructor` and `prototype` are refused when a path is parsed, and reads
 * and deletes never step onto a prototype (a `dropFields` entry must not reach Object.prototype).
 */
import { ValidationError } from "../errors.ts";

const SEGMENT = /^[A-Za-z0-9_$-]+$/;
/** Segments that name JavaScript's object machinery rather than a field. */
const PROTOTYPE_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);

export function parseFieldPath(path: string): string[] {
  const segments: string[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === "[") {
      const quote = path[i + 1];
      if (quote !== "'" && quote !== '"') throw new ValidationError(`field path '${path}': expected a quote after '['`);
      const close = path.indexOf(`${quote}]`, i + 2);
      if (close === -1) throw new ValidationError(`field path '${path}': unterminated [${quote}…${quote}]`);
      segments.push(path.slice(i + 2, close));
      i = close + 2;
      if (i < path.length && path[i] === ".") i++;
    } else {
      let end = i;
      while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
      const segment = path.slice(i, end);
      if (!SEGMENT.test(segment)) throw new ValidationError(`field path '${path}': invalid segment '${segment}'`);
      segments.push(segment);
      i = path[end] === "." ? end + 1 : end;
      if (path[end] === "." && i === path.length) throw new ValidationError(`field path '${path}' ends with '.'`);
    }
  }
  if (segments.length === 0) throw new ValidationError("field path is empty");
  const reserved = segments.find((segment) => PROTOTYPE_SEGMENTS.has(segment));
  if (reserved !== undefined) {
    throw new ValidationError(`field path '${path}': the segment '${reserved}' is not allowed (it names JavaScript's object machinery, not a field)`);
  }
  return segments;
}

export function getAtPath(object: unknown, segments: readonly string[]): unknown {
  let current = object;
  for (const segment of segments) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Removes the value at the path, if present. Returns whether anything was removed. */
export function deleteAtPath(object: unknown, segments: readonly string[]): boolean {
  const parent = getAtPath(object, segments.slice(0, -1));
  if (parent === null || typeof parent !== "object") return false;
  const last = segments[segments.length - 1]!;
  if (!Object.hasOwn(parent, last)) return false;
  delete (parent as Record<string, unknown>)[last];
  return true;
}

/** Index values at a path: a string or number gives one value, an array of them several, anything else none. */
export function indexValuesAt(object: unknown, segments: readonly string[]): string[] {
  const value = getAtPath(object, segments);
  const scalar = (v: unknown): v is string | number | boolean =>
    typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  if (scalar(value)) return [String(value)];
  if (Array.isArray(value)) return [...new Set(value.filter(scalar).map(String))];
  return [];
}
