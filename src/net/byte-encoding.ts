/**
 * Bytes as text: unpadded base64url (RFC 4648 §5), the encoding of everything this Worker hands out
 * or stores as opaque text (continue tokens, token-text.ts; sealed secrets, secrets/), and lower-case
 * hex (random ids, token hashes).
 */

export function toBase64url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
}

/** Standard padded base64 (RFC 4648 §4): what Standard Webhooks signatures and keys are written in. */
export function toBase64(bytes: Uint8Array): string {
  // In slices: one spread of megabytes would overflow the stack.
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The bytes of base64url text (padded or not); throws on text that is not base64. */
export function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
