/**
 * For webhook receivers: check that a request came from edge-informer (Standard Webhooks
 * signature, timestamp within 5 minutes) and get its events, typed. Works in Node, Workers,
 * Deno and browsers: it needs only the raw body text and the headers.
 *
 * Both kinds of subscription signing (docs/api.md "Signatures"):
 * - `hmac`: a `whsec_` secret, checked by the `standardwebhooks` library (`v1,` signatures);
 * - `ed25519`: a `whpk_` public key, checked with WebCrypto Ed25519 (`v1a,` signatures), since the
 *   Standard Webhooks JavaScript library has no asymmetric support (1.1.1).
 * Every body format is read: today's JSON (one event or `{"events": [...]}`) and CloudEvents in
 * binary or structured mode (one event, or a `application/cloudevents-batch+json` batch), whose
 * `data` is the same event.
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { WebhookBatch, WebhookEvent } from "./types.ts";

export { WebhookVerificationError };

/** Standard Webhooks' tolerance for a request's timestamp, either way. */
const TOLERANCE_SECONDS = 5 * 60;
const PUBLIC_KEY_PREFIX = "whpk_";

type HeaderInput = Headers | Record<string, string | string[] | undefined>;

/**
 * Verifies a delivery and returns its events (one, or a batch's), oldest first. `key` is the
 * subscription's `whsec_` secret or its `whpk_` public key. Rejects with WebhookVerificationError
 * when the signature, the timestamp or the body is wrong.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from "edge-informer/client";
 * const events = await verifyWebhook(process.env.WEBHOOK_KEY!, rawBody, request.headers);
 * for (const event of events) if (!seen.has(event.id)) handle(event);
 * ```
 */
export async function verifyWebhook(key: string, body: string, headers: HeaderInput): Promise<WebhookEvent[]> {
  const record = headerRecord(headers);
  const payload: unknown = key.startsWith(PUBLIC_KEY_PREFIX) ? await verifyEd25519(key, body, record) : new Webhook(key).verify(body, record);
  const events = eventsOf(payload, record);
  for (const event of events) {
    if (!event || typeof event.id !== "string" || typeof event.type !== "string" || typeof event.key !== "string") {
      throw new WebhookVerificationError("the body is not an edge-informer event");
    }
  }
  return events;
}

/** The events a verified body carries, in whichever format the subscription chose. */
function eventsOf(payload: unknown, headers: Record<string, string>): WebhookEvent[] {
  const contentType = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (contentType === "application/cloudevents-batch+json") {
    if (!Array.isArray(payload)) throw new WebhookVerificationError("a CloudEvents batch is a JSON array");
    return payload.map((event) => cloudEventData(event));
  }
  if (contentType === "application/cloudevents+json") return [cloudEventData(payload)];
  if (headers["ce-id"] !== undefined) {
    // Binary mode: the attributes are headers, the body the event; they must name the same event.
    const event = payload as WebhookEvent;
    if (event?.id !== headers["ce-id"]) throw new WebhookVerificationError("ce-id does not name the body's event");
    return [event];
  }
  const batch = payload as WebhookEvent | WebhookBatch;
  return batch && "events" in batch && Array.isArray(batch.events) ? batch.events : [payload as WebhookEvent];
}

function cloudEventData(envelope: unknown): WebhookEvent {
  const event = envelope as { id?: unknown; data?: WebhookEvent } | null;
  if (!event || typeof event !== "object" || event.data?.id !== event.id) {
    throw new WebhookVerificationError("a CloudEvent whose data is not its edge-informer event");
  }
  return event.data!;
}

/** Standard Webhooks' asymmetric check: any `v1a,` signature of `{id}.{timestamp}.{body}` by `key`. */
async function verifyEd25519(key: string, body: string, headers: Record<string, string>): Promise<unknown> {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError("Missing required headers");
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds)) throw new WebhookVerificationError("Invalid Signature Headers");
  const now = Math.floor(Date.now() / 1000);
  if (seconds < now - TOLERANCE_SECONDS) throw new WebhookVerificationError("Message timestamp too old");
  if (seconds > now + TOLERANCE_SECONDS) throw new WebhookVerificationError("Message timestamp too new");
  let publicKey: CryptoKey;
  try {
    publicKey = await crypto.subtle.importKey("raw", base64Bytes(key.slice(PUBLIC_KEY_PREFIX.length)), { name: "Ed25519" }, false, ["verify"]);
  } catch {
    throw new WebhookVerificationError("the key is not a whpk_ Ed25519 public key");
  }
  const content = new TextEncoder().encode(`${id}.${timestamp}.${body}`);
  for (const entry of signatures.split(" ")) {
    const [version, signature] = entry.split(",");
    if (version !== "v1a" || !signature) continue;
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = base64Bytes(signature);
    } catch {
      continue;
    }
    if (await crypto.subtle.verify({ name: "Ed25519" }, publicKey, bytes, content)) {
      try {
        return JSON.parse(body) as unknown;
      } catch {
        throw new WebhookVerificationError("the body is not JSON");
      }
    }
  }
  throw new WebhookVerificationError("No matching signature found");
}

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function headerRecord(headers: HeaderInput): Record<string, string> {
  const record: Record<string, string> = {};
  if (headers instanceof Headers) {
    headers.forEach((value, name) => (record[name.toLowerCase()] = value));
    return record;
  }
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) record[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return record;
}
