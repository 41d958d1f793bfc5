/**
 * The text of every continue token this API hands out (`/informers/…/objects`, `/k8s`, `/search`,
 * subscription pages): JSON as unpadded base64url of its UTF-8 bytes, opaque to clients as the API
 * server's own tokens are. Each token module checks the shape; this one only turns text into a value.
 */

export function encodeTokenText(value: unknown): string {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  // In slices: a token may hold a long index value, and one spread of megabytes overflows the stack.
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/** The JSON value a token holds, or undefined when the text is not one (the caller says why it is a 400). */
export function decodeTokenText(text: string): unknown {
  try {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
  } catch {
    return undefined;
  }
}
