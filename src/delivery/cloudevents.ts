/**
 * The body and headers of a delivery in a subscription's `format` (issue 32): today's edge-informer
 * JSON, or a CloudEvents 1.0 event (https://github.com/cloudevents/spec, HTTP protocol binding) in
 * binary or structured mode, for Knative Brokers, Argo Events and other event routers.
 *
 * The attributes:
 * - `id` = the event's id (`evt_…`), so a receiver dedupes on it exactly as on today's `id`;
 * - `source` = `/clusters/{cluster}/informers/{informer}`: a URI-reference naming where the event
 *   comes from, unique with `id`. The informer names one resource of one cluster; its API path
 *   would not (a resource may be watched by several informers with different selectors);
 * - `type` = `dev.edge-informer.added|updated|deleted|sync` (reverse-DNS prefix, then the change);
 * - `subject` = the object's key (`namespace/name` or `name`);
 * - `time` = when the informer logged the change (the API server gives no time of a change); for a
 *   replay's or resync's objects, when their page was read. Both are stored with, or rebuilt
 *   with, the delivery, so a resend carries the same `time` (invariant 10: byte for byte);
 * - `datacontenttype` = `application/json`, and `data` = the edge-informer event as today, byte for
 *   byte (the object, oldObject, resourceVersion, sequence...).
 *
 * Binary mode carries one event per request (CloudEvents has no binary batch): the body is the
 * event's JSON, the attributes `ce-*` headers. A subscription with `maxBatchSize` > 1 cannot use it
 * (subscription-spec.ts refuses it); a batch written before a declared subscription changed to it
 * goes out in structured mode, since a batch is resent whole. Structured mode sends `application/cloudevents+json`, and a
 * batch as `application/cloudevents-batch+json` (a JSON array of events): one request, signed once.
 * The Standard Webhooks headers go alongside, signed over the body as sent.
 */
import type { LogEventType } from "../cache/event-log.ts";

export const DELIVERY_FORMATS = ["edge-informer", "cloudevents-binary", "cloudevents-structured"] as const;
export type DeliveryFormat = (typeof DELIVERY_FORMATS)[number];
export const DEFAULT_FORMAT: DeliveryFormat = "edge-informer";

export const CLOUDEVENTS_TYPE_PREFIX = "dev.edge-informer.";
const CHANGE: Record<LogEventType, string> = { add: "added", update: "updated", delete: "deleted", sync: "sync" };

/** Today's body of a batch (`maxBatchSize` > 1): `{"events": [...]}`, oldest first. */
export const batchBody = (texts: readonly string[]) => `{"events":[${texts.join(",")}]}`;

/** One event of a delivery: what the attributes are made of, and its edge-informer JSON text. */
export interface EventToSend {
  eventId: string;
  type: LogEventType;
  key: string;
  /** The CloudEvent's `time` (ms). */
  time: number;
  text: string;
}

export interface ShapedBody {
  body: string;
  contentType: string;
  /** Headers beyond the signature's (the `ce-*` attributes of binary mode). */
  headers: Record<string, string>;
}

/**
 * The request body of `events` in `format`; `batched`: the subscription batches (`maxBatchSize` > 1),
 * so even one event goes as a batch, as today's `{"events": [...]}`.
 */
export function shapeBody(format: DeliveryFormat, origin: { cluster: string; informer: string }, events: readonly EventToSend[], batched: boolean): ShapedBody {
  if (format === "edge-informer") {
    return { body: batched ? batchBody(events.map((e) => e.text)) : events[0]!.text, contentType: "application/json", headers: {} };
  }
  const source = `/clusters/${encodeURIComponent(origin.cluster)}/informers/${encodeURIComponent(origin.informer)}`;
  if (format === "cloudevents-binary" && !batched && events.length === 1) {
    const event = events[0]!;
    const time = new Date(event.time).toISOString();
    const attributes = { specversion: "1.0", id: event.eventId, source, type: CLOUDEVENTS_TYPE_PREFIX + CHANGE[event.type], subject: event.key, time };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(attributes)) headers[`ce-${name}`] = percentEncoded(value);
    return { body: event.text, contentType: "application/json", headers };
  }
  const structured = events.map(
    (event) =>
      `{"specversion":"1.0","id":${JSON.stringify(event.eventId)},"source":${JSON.stringify(source)},` +
      `"type":"${CLOUDEVENTS_TYPE_PREFIX}${CHANGE[event.type]}","subject":${JSON.stringify(event.key)},"time":"${new Date(event.time).toISOString()}",` +
      `"datacontenttype":"application/json","data":${event.text}}`,
  );
  return batched
    ? { body: `[${structured.join(",")}]`, contentType: "application/cloudevents-batch+json", headers: {} }
    : { body: structured[0]!, contentType: "application/cloudevents+json", headers: {} };
}

/**
 * A header value as the CloudEvents HTTP binding writes it (§3.1.3.2): space, `"`, `%` and anything
 * outside printable ASCII percent-encoded as UTF-8.
 */
function percentEncoded(value: string): string {
  return value.replace(/[^\x21\x23\x24\x26-\x7e]/gu, (ch) => encodeURIComponent(ch));
}
