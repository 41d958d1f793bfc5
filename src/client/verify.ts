/**
 * For webhook receivers: check that a request came from edge-informer (Standard Webhooks
 * signature, timestamp within 5 minutes) and get its events, typed. Works in Node, Workers,
 * Deno and browsers: it needs only the raw body text and the headers.
 */
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { WebhookBatch, WebhookEvent } from "./types.ts";

export { WebhookVerificationError };

/**
 * Verifies a delivery and returns its events (one, or a batch's), oldest first.
 * Throws WebhookVerificationError when the signature, the timestamp or the body is wrong.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from "edge-informer/client";
 * const events = verifyWebhook(process.env.WEBHOOK_SECRET!, rawBody, request.headers);
 * for (const event of events) if (!seen.has(event.id)) handle(event);
 * ```
 */
export function verifyWebhook(
  secret: string,
  body: string,
  headers: Headers | Record<string, string | string[] | undefined>,
): WebhookEvent[] {
  const payload = new Webhook(secret).verify(body, headerRecord(headers)) as WebhookEvent | WebhookBatch;
  const events = "events" in payload && Array.isArray(payload.events) ? payload.events : [payload as WebhookEvent];
  for (const event of events) {
    if (!event || typeof event.id !== "string" || typeof event.type !== "string" || typeof event.key !== "string") {
      throw new WebhookVerificationError("the body is not an edge-informer event");
    }
  }
  return events;
}

function headerRecord(headers: Headers | Record<string, string | string[] | undefined>): Record<string, string> {
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
