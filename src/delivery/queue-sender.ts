/**
 * One delivery attempt to a Cloudflare Queue (a subscription's `queue`, docs/api.md "Queue
 * subscriptions"): each event of the request becomes one message, sent with `sendBatch` in as few
 * calls as Queues' limits allow, and the outcome is reported in the retry schedule's terms, as an
 * HTTP attempt's is (sender.ts), so order, cursor, retries and dead letters follow the same rules.
 *
 * A message's body is the event as an HTTP delivery carries it (id, type, cluster, informer, key,
 * object, …, resourceVersion, sequence) plus `subscription`, the subscription's id: sequence
 * numbers are per subscription, and several subscriptions may share a queue. It is sent as JSON
 * (`contentType: "json"`), so a consumer reads `message.body.id`. Not signed: only Workers of the
 * account can produce to or consume from the queue.
 *
 * Guarantees:
 * - Accepted (reported as status 202) only once every `sendBatch` call resolved; any call that
 *   throws or does not answer within the attempt's timeout fails the whole attempt, which is sent
 *   again whole: messages of calls that succeeded arrive twice, with the same ids.
 * - A `sendBatch` carries at most QUEUE_BATCH_MESSAGES messages and QUEUE_BATCH_BYTES; an event
 *   whose message would exceed QUEUE_MESSAGE_BYTES is never sent: the attempt is `unsendable`, and
 *   the request dead-lettered at once (a retry would fail the same way).
 * - The queue is looked up, and the WEBHOOK_QUEUES list checked (queue-target.ts), before each
 *   attempt: a refusal fails the attempt with the reason, as an egress refusal does over HTTP.
 * - Each `sendBatch` is one subrequest of the slice's budget (`spend`); the platform's subrequest
 *   limit is thrown as a SubrequestLimitError, never charged to the queue.
 */
import type { Clock } from "../clock.ts";
import { isSubrequestLimit, SubrequestLimitError } from "../net/subrequest-budget.ts";
import type { QueueTargets } from "./queue-target.ts";
import { elapsed, errorMessage, type SendResult } from "./sender.ts";

/** Queues' limit on one message, metadata included (docs: queues/platform/limits; 1 KB = 1,000 B). */
export const QUEUE_MESSAGE_BYTES = 128_000;
/** What Queues counts per message besides its body (~100 B, docs: queues/platform/pricing). */
export const QUEUE_MESSAGE_METADATA_BYTES = 100;
/** Queues' limits on one `sendBatch` call: messages, and bytes of them all. */
export const QUEUE_BATCH_MESSAGES = 100;
export const QUEUE_BATCH_BYTES = 256_000;

export interface QueueDeliveryRequest {
  /** The producer binding's name. */
  queue: string;
  /** The subscription's id, carried in each message. */
  subscription: string;
  /** The events' JSON texts, in order: one message each. */
  texts: readonly string[];
  timeoutMs: number;
}

export type QueueSend = (request: QueueDeliveryRequest) => Promise<SendResult>;

/** What a queue's acceptance is reported as, in the delivery log and the counters (2xx). */
export const QUEUE_ACCEPTED_STATUS = 202;

const encoder = new TextEncoder();

/** `targets`: the queues as the settings are now, asked before every attempt. */
export function queueSender(clock: Clock, targets: () => QueueTargets, spend: <T>(call: () => Promise<T>) => Promise<T>): QueueSend {
  return async ({ queue: name, subscription, texts, timeoutMs }) => {
    const started = clock.now();
    const target = targets().resolve(name);
    if ("refusal" in target) return { durationMs: 0, error: `not sent: ${target.refusal}` };
    const chunks = queueChunks(texts, subscription);
    if ("tooLarge" in chunks) {
      const { index, bytes } = chunks.tooLarge;
      return {
        durationMs: 0,
        unsendable: true,
        error: `not sent: event ${index + 1} of ${texts.length} makes a ${bytes}-byte queue message, past Queues' limit of ${QUEUE_MESSAGE_BYTES}`,
      };
    }
    try {
      for (const chunk of chunks.batches) await withTimeout(spend(() => target.queue.sendBatch(chunk)), timeoutMs);
      return { status: QUEUE_ACCEPTED_STATUS, durationMs: elapsed(clock, started) };
    } catch (error) {
      // Our invocation's limit, not the queue's failure: the slice ends and this is sent again.
      if (isSubrequestLimit(error)) throw error instanceof SubrequestLimitError ? error : new SubrequestLimitError(errorMessage(error), { cause: error });
      const timedOut = error instanceof QueueTimeout;
      return { durationMs: elapsed(clock, started), error: timedOut ? `no answer within ${timeoutMs / 1000} s` : `queue '${name}' refused the batch: ${errorMessage(error)}` };
    }
  };
}

/**
 * The events as messages, in `sendBatch` calls within Queues' limits, in order; or the first event
 * whose message alone is past the limit.
 */
export function queueChunks(
  texts: readonly string[],
  subscription: string,
): { batches: MessageSendRequest[][] } | { tooLarge: { index: number; bytes: number } } {
  const batches: MessageSendRequest[][] = [];
  let batch: MessageSendRequest[] = [];
  let batchBytes = 0;
  // The message is the event's object with `subscription` added: its JSON is the stored text and
  // this member, so its size is counted without serializing it again (the runtime does, to send it).
  const added = encoder.encode(`,"subscription":${JSON.stringify(subscription)}`).byteLength + QUEUE_MESSAGE_METADATA_BYTES;
  for (const [index, text] of texts.entries()) {
    const body = { ...(JSON.parse(text) as object), subscription };
    const bytes = encoder.encode(text).byteLength + added;
    if (bytes > QUEUE_MESSAGE_BYTES) return { tooLarge: { index, bytes } };
    if (batch.length === QUEUE_BATCH_MESSAGES || batchBytes + bytes > QUEUE_BATCH_BYTES) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push({ body, contentType: "json" });
    batchBytes += bytes;
  }
  if (batch.length > 0) batches.push(batch);
  return { batches };
}

class QueueTimeout extends Error {}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new QueueTimeout()), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer as Parameters<typeof clearTimeout>[0]);
  }
}
