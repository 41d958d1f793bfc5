/**
 * Signing webhook requests the Standard Webhooks way (https://www.standardwebhooks.com): headers
 * `webhook-id`, `webhook-timestamp` (unix seconds of this attempt) and `webhook-signature`
 * (`v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed by the subscription's secret).
 * Signing is the `standardwebhooks` library's; this module fixes our secret format and the
 * headers, and takes the timestamp as an argument so every attempt signs its own time.
 */
import { Webhook } from "standardwebhooks";

export const SECRET_PREFIX = "whsec_";
/** 24 random bytes: 192 bits, as Standard Webhooks recommends (at least 24, at most 64). */
export const SECRET_BYTES = 24;

export interface SignedHeaders {
  "content-type": "application/json";
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** A new subscription secret: `whsec_` + base64 of random bytes (shown to the user once). */
export function newSecret(randomBytes: (length: number) => Uint8Array): string {
  return SECRET_PREFIX + btoa(String.fromCharCode(...randomBytes(SECRET_BYTES)));
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
