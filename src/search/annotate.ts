/**
 * The cluster annotation of a search's items (issue 12): every object a search answers carries its
 * cluster's name in `metadata.annotations["edge-informer/cluster"]`.
 *
 * Objects stay the JSON text the cache holds, so the annotation is spliced in: the text is scanned
 * only as far as `metadata.annotations` (near the start of an object), never parsed or re-encoded.
 * Anything the splice cannot place with certainty — no `metadata` object, `annotations` that is not
 * an object, the annotation already present — goes through JSON.parse and JSON.stringify instead,
 * so the answer is the same either way: the object's own members and values, plus the annotation
 * (ours replacing any the object had, so a client never sees two values).
 */

import { closingQuote } from "../kube/list-decoder.ts";

export const CLUSTER_ANNOTATION = "edge-informer/cluster";
const QUOTED = JSON.stringify(CLUSTER_ANNOTATION);

/** `body` (a JSON object's text) with `cluster` in its cluster annotation. */
export function withClusterAnnotation(body: string, cluster: string): string {
  const entry = `${QUOTED}:${JSON.stringify(cluster)}`;
  if (!body.includes(QUOTED)) {
    const spliced = splice(body, entry);
    if (spliced !== undefined) return spliced;
  }
  const object = JSON.parse(body) as { metadata?: { annotations?: Record<string, string> | null } };
  object.metadata ??= {};
  object.metadata.annotations = { ...object.metadata.annotations, [CLUSTER_ANNOTATION]: cluster };
  return JSON.stringify(object);
}

function splice(body: string, entry: string): string | undefined {
  const root = skipSpace(body, 0);
  if (body[root] !== "{") return undefined;
  const metadata = memberValue(body, root, "metadata");
  if (metadata === undefined || body[metadata] !== "{") return undefined;
  const annotations = memberValue(body, metadata, "annotations");
  if (annotations === undefined) {
    const empty = body[skipSpace(body, metadata + 1)] === "}";
    return insert(body, metadata + 1, `"annotations":{${entry}}${empty ? "" : ","}`);
  }
  if (body[annotations] !== "{") return undefined;
  const empty = body[skipSpace(body, annotations + 1)] === "}";
  return insert(body, annotations + 1, empty ? entry : `${entry},`);
}

const insert = (text: string, at: number, what: string) => text.slice(0, at) + what + text.slice(at);

/**
 * Where the value of member `name` of the object opening at `open` starts, or undefined when the
 * object has no such member. Member names are compared as JSON text: a name written with escapes
 * is not found, and the caller falls back to parsing.
 */
function memberValue(text: string, open: number, name: string): number | undefined {
  const quoted = `"${name}"`;
  let i = skipSpace(text, open + 1);
  if (text[i] === "}") return undefined;
  for (;;) {
    if (text[i] !== '"') return undefined;
    const keyEnd = skipString(text, i);
    const colon = skipSpace(text, keyEnd);
    if (text[colon] !== ":") return undefined;
    const value = skipSpace(text, colon + 1);
    if (keyEnd - i === quoted.length && text.startsWith(quoted, i)) return value;
    i = skipSpace(text, skipValue(text, value));
    if (text[i] !== ",") return undefined;
    i = skipSpace(text, i + 1);
  }
}

/** Index just past the value starting at `i`. */
function skipValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return skipString(text, i);
  if (first !== "{" && first !== "[") {
    while (i < text.length && !",}] \n\r\t".includes(text[i]!)) i++;
    return i;
  }
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = skipString(text, i) - 1;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (--depth === 0) return i + 1;
    }
  }
  return text.length;
}

/** Index just past the string whose opening quote is at `i` (the list decoder's scan; an escaped quote does not end it). */
function skipString(text: string, i: number): number {
  const close = closingQuote(text, i + 1);
  return close < 0 ? text.length : close + 1;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  return i;
}
