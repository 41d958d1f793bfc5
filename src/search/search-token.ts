/**
 * A search's continue token: opaque to clients (base64url JSON, like `/k8s` tokens), it holds for
 * each cluster whose list is not complete the position its next page starts at and the
 * resourceVersion its snapshot was read at, plus a fingerprint of the search it belongs to.
 *
 * A cluster that has not answered yet (a `partial` one on every page so far) has no position: its
 * next read starts its list. A position names its log's incarnation, so a cluster whose informer
 * was deleted and re-created since is continued after the same key from its new log (the informer
 * finds the position expired), never read at a position that means another state there. A cluster whose list is complete is absent. A token that does not parse,
 * or that belongs to another search (another resource, namespace, selectors or `clusters`), is a 400:
 * its positions would silently skip objects of the new one.
 */
import { isClusterName } from "../clusters/cluster.ts";
import type { Position } from "../cache/versioned-list.ts";
import { ValidationError } from "../errors.ts";
import { decodeTokenText, encodeTokenText } from "../net/token-text.ts";

const VERSION = "edge-informer/search/v1";

/** Where one cluster's list continues: its snapshot's resourceVersion and position. */
export interface ClusterCursor {
  rv: string;
  from: Position;
}

export interface SearchToken {
  /** `searchFingerprint` of the search the token continues. */
  search: string;
  /** Clusters still to read; null: not read yet. */
  clusters: Map<string, ClusterCursor | null>;
}

/** What a token must match: a short hash of the search's parameters (not a secret, only a check). */
export function searchFingerprint(parts: readonly (string | undefined)[]): string {
  let hash = 0x811c9dc5; // FNV-1a, 32 bits
  for (const char of JSON.stringify(parts)) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

type EncodedCursor = [rv: string, at: number, after: string, log?: string];

export function encodeSearchToken(token: SearchToken): string {
  const clusters: Record<string, EncodedCursor | 0> = {};
  for (const [name, cursor] of token.clusters) {
    if (cursor === null) clusters[name] = 0;
    else clusters[name] = cursor.from.log === undefined ? [cursor.rv, cursor.from.at, cursor.from.after] : [cursor.rv, cursor.from.at, cursor.from.after, cursor.from.log];
  }
  return encodeTokenText({ v: VERSION, s: token.search, c: clusters });
}

/** Throws a ValidationError (400) for anything but a token `encodeSearchToken` wrote for `search`. */
export function decodeSearchToken(text: string, search: string): SearchToken {
  const parsed = decodeTokenText(text) as { v?: unknown; s?: unknown; c?: unknown } | null | undefined;
  const invalid = () => new ValidationError("continue: not a continue token of a search of this API");
  if (parsed === null || parsed === undefined || typeof parsed !== "object" || parsed.v !== VERSION || typeof parsed.c !== "object" || parsed.c === null) throw invalid();
  if (parsed.s !== search) {
    throw new ValidationError("continue: the token belongs to another search: give the same resource, clusters, namespace and selectors as the first page");
  }
  const clusters = new Map<string, ClusterCursor | null>();
  for (const [name, cursor] of Object.entries(parsed.c)) {
    if (!isClusterName(name)) throw invalid();
    if (cursor === 0) clusters.set(name, null);
    else if (isCursor(cursor)) clusters.set(name, { rv: cursor[0], from: { at: cursor[1], after: cursor[2], ...(cursor[3] === undefined ? {} : { log: cursor[3] }) } });
    else throw invalid();
  }
  return { search, clusters };
}

/** A cursor of this release (with its log's incarnation) or of the one before (without). */
function isCursor(value: unknown): value is EncodedCursor {
  return (
    Array.isArray(value) &&
    (value.length === 3 || (value.length === 4 && typeof value[3] === "string")) &&
    typeof value[0] === "string" &&
    Number.isSafeInteger(value[1]) &&
    (value[1] as number) >= 0 &&
    typeof value[2] === "string"
  );
}
