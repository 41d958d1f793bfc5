/**
 * `/k8s` continue tokens: opaque to clients (base64url JSON, as the API server's are), they carry
 * the list's resourceVersion and the position its pages are served at (versioned-list.ts), so every
 * page of one list reports and holds the same snapshot.
 */
import type { Position } from "../cache/versioned-list.ts";
import { decodeTokenText, encodeTokenText } from "../net/token-text.ts";

export interface ListToken {
  rv: string;
  from: Position;
}

export function encodeListToken(token: ListToken): string {
  return encodeTokenText({ v: "edge-informer/v1", rv: token.rv, at: token.from.at, start: token.from.after });
}

/** Throws an Error saying what is wrong with a token that is not ours. */
export function decodeListToken(text: string): ListToken {
  const token = decodeTokenText(text) as { v?: unknown; rv?: unknown; at?: unknown; start?: unknown } | null | undefined;
  if (
    token === null ||
    token === undefined ||
    typeof token !== "object" ||
    token.v !== "edge-informer/v1" ||
    typeof token.rv !== "string" ||
    typeof token.start !== "string" ||
    !Number.isSafeInteger(token.at) ||
    (token.at as number) < 0
  ) {
    throw new Error("not a continue token of this server");
  }
  return { rv: token.rv, from: { at: token.at as number, after: token.start } };
}
