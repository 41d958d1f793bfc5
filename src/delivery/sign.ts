/**
 * Signing webhook requests the Standard Webhooks way (https://www.standardwebhooks.com): headers
 * `webhook-id`, `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature` over
 * `{id}.{timestamp}.{body}`: `v1,` + base64 HMAC-SHA256 keyed by a `whsec_` secret, or `v1a,` +
 * base64 Ed25519 signature by a `whsk_` private key (asymmetric, issue 32: ed25519-keys.ts). The
 * kind of a stored secret is its prefix. This module fixes our secret format and the headers, and
 * takes the timestamp as an argument so every attempt signs its own time.
 *
 * Two implementations of the same signature:
 * - `DeliverySigner` (the delivery path): WebCrypto HMAC with the key imported once per secret. The
 *   `standardwebhooks` library decodes the secret and runs a pure-JavaScript SHA-256 on every call,
 *   ~10x the CPU of the native one on a 5 KB body (BENCHMARKS.md "Fan-out").
 * - `signDelivery` (synchronous): the library's, the reference the signer is tested against.
 */
import { Webhook } from "standardwebhooks";
import { toBase64 } from "../net/byte-encoding.ts";
import { importSigningKey, isSigningKey } from "./ed25519-keys.ts";

export const SECRET_PREFIX = "whsec_";
/** 24 random bytes: 192 bits, as Standard Webhooks recommends (at least 24, at most 64). */
export const SECRET_BYTES = 24;
/** The most a signer keeps for the bytes it signs (bodies up to ~21 KB of JSON). */
export const KEPT_SCRATCH_BYTES = 64 * 1024;

export interface SignedHeaders {
  /** `application/json`, or a CloudEvents structured type (cloudevents.ts). */
  "content-type": string;
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** A new subscription secret: `whsec_` + base64 of random bytes (shown to the user once). */
export function newSecret(randomBytes: (length: number) => Uint8Array): string {
  return SECRET_PREFIX + btoa(String.fromCharCode(...randomBytes(SECRET_BYTES)));
}

/**
 * Signs deliveries with the WebCrypto HMAC key of the last secret it saw (a subscription has one
 * secret; a changed one is imported again). The secret is checked as the library checks it, so a
 * secret it rejects fails here too.
 *
 * During a rotation's grace period a delivery is signed with the new secret and the previous one:
 * Standard Webhooks lets `webhook-signature` carry several space-separated signatures, and a
 * receiver accepts the request when any of them verifies, so one still holding the old secret keeps
 * working until it is given the new one. Either may be a `whsk_` key: a rotation from HMAC to
 * Ed25519 sends `v1a,…` and `v1,…` side by side.
 */
export class DeliverySigner {
  #current = new KeyCache();
  #previous = new KeyCache();
  /**
   * The signed bytes, reused up to KEPT_SCRATCH_BYTES: `subtle.sign` copies its input when called,
   * before any await below. A bigger body gets a buffer of its own, dropped after the call: one large
   * batch must not leave every subscription object of an isolate holding megabytes (issue 20).
   */
  #scratch: Uint8Array<ArrayBuffer> = new Uint8Array(16 * 1024);

  /** The bytes the signer keeps between calls (a budget tests assert). */
  get heldBytes(): number {
    return this.#scratch.byteLength;
  }

  /** UTF-8 of `prefix` + `body`, without building the joined string. */
  #signedBytes(prefix: string, body: string): Uint8Array<ArrayBuffer> {
    const most = (prefix.length + body.length) * 3; // UTF-8: at most 3 bytes per UTF-16 unit
    if (this.#scratch.length < most && most <= KEPT_SCRATCH_BYTES) this.#scratch = new Uint8Array(most);
    const into = most <= this.#scratch.length ? this.#scratch : new Uint8Array(most);
    const head = encoder.encodeInto(prefix, into).written;
    const tail = encoder.encodeInto(body, into.subarray(head)).written;
    return into.subarray(0, head + tail);
  }

  async sign(
    secret: string,
    id: string,
    timestampSeconds: number,
    body: string,
    previousSecret?: string,
    contentType = "application/json",
  ): Promise<SignedHeaders> {
    const timestamp = String(timestampSeconds);
    const keys = [await this.#current.key(secret), ...(previousSecret === undefined ? [] : [await this.#previous.key(previousSecret)])];
    // No await between filling the bytes and both signing calls: a concurrent sign (a redelivery)
    // cannot overwrite them before they are taken.
    const content = this.#signedBytes(`${id}.${timestamp}.`, body);
    const signatures = keys.map(async (key) => {
      const hmac = key.algorithm.name === "HMAC";
      const signed = await crypto.subtle.sign(hmac ? "HMAC" : "Ed25519", key, content);
      return `${hmac ? "v1" : "v1a"},${toBase64(new Uint8Array(signed))}`;
    });
    const signature = (await Promise.all(signatures)).join(" ");
    return {
      "content-type": contentType,
      "webhook-id": id,
      "webhook-timestamp": timestamp,
      "webhook-signature": signature,
    };
  }
}

/** The imported key of the last secret asked for: HMAC for `whsec_`, Ed25519 for `whsk_`. */
class KeyCache {
  #secret: string | undefined;
  #key: Promise<CryptoKey> | undefined;

  async key(secret: string): Promise<CryptoKey> {
    if (this.#secret !== secret || this.#key === undefined) {
      this.#key = isSigningKey(secret) ? importSigningKey(secret) : importSecret(secret);
      this.#secret = secret;
    }
    try {
      return await this.#key;
    } catch (error) {
      this.#key = undefined;
      throw error;
    }
  }
}

const encoder = new TextEncoder();

async function importSecret(secret: string): Promise<CryptoKey> {
  new Webhook(secret); // throws on a secret the library would not sign with
  const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = Uint8Array.from(atob(raw), (c) => c.charCodeAt(0));
  return crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/** The headers of one delivery attempt of `body` (the exact bytes that will be sent). */
export function signDelivery(secret: string, id: string, timestampSeconds: number, body: string): SignedHeaders {
  const signature = new Webhook(secret).sign(id, new Date(timestampSeconds * 1000), body);
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signature,
  };
}
