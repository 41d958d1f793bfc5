/**
 * A subscription's Ed25519 signing key (Standard Webhooks v1.0 asymmetric signatures, issue 32):
 * the formats and the WebCrypto calls, nothing stored.
 *
 * Formats, as Standard Webhooks names them: `whsk_` + base64 of the raw 32-byte private key (the
 * RFC 8032 seed) and `whpk_` + base64 of the raw 32-byte public key. The private key is stored
 * sealed in the subscription's secret column like an HMAC secret (stored-secrets.ts) and never
 * leaves the Worker; the public key is derived from it, so nothing else needs storing.
 */
import { fromBase64url, toBase64 } from "../net/byte-encoding.ts";

export const SIGNING_KEY_PREFIX = "whsk_";
export const PUBLIC_KEY_PREFIX = "whpk_";
/** A `whsk_` key as an operator writes it into a Worker secret (a declared subscription). */
export const SIGNING_KEY_PATTERN = /^whsk_[A-Za-z0-9+/]{43}=$/;

const ED25519 = { name: "Ed25519" } as const;
/** The PKCS #8 DER header of an Ed25519 private key (RFC 8410): WebCrypto imports no raw private key. */
const PKCS8_HEADER = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
const KEY_BYTES = 32;

/** An Ed25519 `whsk_`/`whpk_` pair, made with the platform's random source. */
export async function newSigningKeyPair(): Promise<{ signingKey: string; publicKey: string }> {
  const pair = (await crypto.subtle.generateKey(ED25519, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  const raw = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return { signingKey: SIGNING_KEY_PREFIX + toBase64(pkcs8.subarray(PKCS8_HEADER.length)), publicKey: PUBLIC_KEY_PREFIX + toBase64(raw) };
}

/** True for a `whsk_` text (the kind of key a stored secret is). */
export const isSigningKey = (secret: string) => secret.startsWith(SIGNING_KEY_PREFIX);

/** The WebCrypto key that signs with `whsk_…`; throws on anything else. */
export async function importSigningKey(signingKey: string, extractable = false): Promise<CryptoKey> {
  const seed = keyBytes(signingKey, SIGNING_KEY_PREFIX);
  return crypto.subtle.importKey("pkcs8", Uint8Array.from([...PKCS8_HEADER, ...seed]), ED25519, extractable, ["sign"]);
}

/** The `whpk_` public key of `whsk_…` (its JWK's `x`: WebCrypto derives it on import). */
export async function publicKeyOf(signingKey: string): Promise<string> {
  const jwk = (await crypto.subtle.exportKey("jwk", await importSigningKey(signingKey, true))) as JsonWebKey;
  return PUBLIC_KEY_PREFIX + toBase64(fromBase64url(jwk.x!));
}

function keyBytes(text: string, prefix: string): Uint8Array {
  if (!text.startsWith(prefix)) throw new Error(`not a ${prefix} key`);
  const bytes = fromBase64url(text.slice(prefix.length));
  if (bytes.length !== KEY_BYTES) throw new Error(`a ${prefix} key is ${KEY_BYTES} bytes, base64`);
  return bytes;
}
