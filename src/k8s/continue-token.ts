/**
 * `/k8s` continue tokens: opaque to clients (base64url JSON, as the API server's are), they carry
 * the list's resourceVersion and the position its pages are served at (versioned-list.ts), so every
 * page of one list reports and holds the same snapshot. A position means something only in one
 * informer's log, in one incarnation of it: the token names both, and a token of another informer
 * or incarnation is expired (410), as the API server answers a continue it can no longer serve.
 */
import type { Position } from "../cache/versioned-list.ts";
import { decodeTokenText, encodeTokenText } from "../net/token-text.ts";

export interface ListToken {
  rv: string;
  /** The informer whose log `from` is in; absent in tokens made before tokens named it. */
  informer?: string;
  from: Position;
  /** How many objects of the list follow the page before this token (`remainingItemCount`), when known. */
  left?: number;
}

export function encodeListToken(token: ListToken): string {
  return encodeTokenText({ v: "edge-informer/v1", rv: token.rv, at: token.from.at, start: token.from.after, informer: token.informer, log: token.from.log, left: token.left });
}

/** Throws an Error saying what is wrong with a token that is not ours. */
export function decodeListToken(text: string): ListToken {
  const token = decodeTokenText(text) as { v?: unknown; rv?: unknown; at?: unknown; start?: unknown; informer?: unknown; log?: unknown; left?: unknown } | null | undefined;
  if (
    token === null ||
    token === undefined ||
    typeof token !== "object" ||
    token.v !== "edge-informer/v1" ||
    typeof token.rv !== "string" ||
    typeof token.start !== "string" ||
    !Number.isSafeInteger(token.at) ||
    (token.at as number) < 0 ||
    !optionalString(token.informer) ||
    !optionalString(token.log) ||
    (token.left !== undefined && (!Number.isSafeInteger(token.left) || (token.left as number) < 0))
  ) {
    throw new Error("not a continue token of this server");
  }
  return {
    rv: token.rv,
    ...(token.informer === undefined ? {} : { informer: token.informer }),
    ...(token.left === undefined ? {} : { left: token.left as number }),
    from: { at: token.at as number, after: token.start, ...(token.log === undefined ? {} : { log: token.log }) },
  };
}

function optionalString(value: unknown): value is string | undefined {
  return value === undefined || typeof value === "string";
}
