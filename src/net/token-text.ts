/**
 * The text of every continue token this API hands out (`/informers/…/objects`, `/k8s`, `/search`,
 * subscription pages): JSON as unpadded base64url of its UTF-8 bytes, opaque to clients as the API
 * server's own tokens are. Each token module checks the shape; this one only turns text into a value.
 */

import { fromBase64url, toBase64url } from "./byte-encoding.ts";

export function encodeTokenText(value: unknown): string {
  return toBase64url(new TextEncoder().encode(JSON.stringify(value)));
}

/** The JSON value a token holds, or undefined when the text is not one (the caller says why it is a 400). */
export function decodeTokenText(text: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64url(text)));
  } catch {
    return undefined;
  }
}
