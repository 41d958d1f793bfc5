/**
 * A webhook receiver that applies what it gets in the order it gets it (duplicates included), as
 * "in order" promises it may (DESIGN invariants 3, 4, 10), and checks:
 * - per key, resourceVersions never go back: a crash, a refusal or a timeout may resend an event,
 *   but never a key's older event after its newer one was accepted (answered 2xx);
 * - every event id stands for one event, always the same (type, key, RV), and one the log issued
 *   (a log event of that key at that RV, or a replay's add of the object as cached);
 * - sequence numbers never skip (one lost) and only go back to resend what had that number.
 * - every request is signed by a key it holds (verifyWebhook: HMAC `v1,` or Ed25519 `v1a,`, issue
 *   32), at the time the sender's clock says;
 * - a CloudEvents request (binary or structured, a batch too) passes a Knative-style check of the
 *   required attributes, and the CloudEvents SDK reads from it the events verifyWebhook returned,
 *   each with its id, key and type as attributes.
 * The final state (`state`) is compared with the cluster's by the driver. As a queue's consumer
 * (`take`), it gets the messages of each accepted sendBatch in the order they were sent: what is
 * checked is the producer's order, which a consumer restores by sequence (docs/api.md).
 */
import { HTTP } from "cloudevents";
import { vi } from "vitest";
import { verifyWebhook } from "../../src/client/verify.ts";
import type { WebhookEvent } from "../../src/client/types.ts";
import type { DeliveryRequest, SendResult } from "../../src/delivery/sender.ts";
import { brokerRefusal } from "../helpers/cloudevents-broker.ts";

export type Answer = "2xx" | "5xx" | "timeout" | "410" | "die";

/** What the receiver knows of the log, to tell an issued event from an invented one. */
export interface IssuedEvents {
  issued(key: string, resourceVersion: string): boolean;
}

/** How the receiver verifies: the keys it holds (a `whsec_` secret or `whpk_` public key each), and the sender's clock. */
export interface Verification {
  keys(): readonly string[];
  now(): number;
}

const CE_TYPES: Record<WebhookEvent["type"], string> = {
  add: "dev.edge-informer.added",
  update: "dev.edge-informer.updated",
  delete: "dev.edge-informer.deleted",
  sync: "dev.edge-informer.sync",
};

export class WebhookReceiver {
  /** Answers to give, in order; 2xx once it runs out. */
  readonly script: Answer[] = [];
  /** key → RV, as applied in arrival order (the requests it accepted). */
  readonly state = new Map<string, number>();
  readonly received: WebhookEvent[] = [];
  readonly violations: string[];
  readonly #log: IssuedEvents;
  readonly #verification: Verification;
  readonly #newest = new Map<string, number>();
  readonly #ids = new Map<string, string>();
  readonly #sequenceIds = new Map<number, string>();
  #sequence = 0;

  constructor(log: IssuedEvents, verification: Verification, violations: string[]) {
    this.#log = log;
    this.#verification = verification;
    this.violations = violations;
  }

  /**
   * The endpoint: checks the request's events, then answers as scripted. A request it answers 2xx
   * it has applied ("die" too: the sender's process dies before it hears that 2xx); one it refuses
   * or never answers it has not, and may get again.
   */
  async send(request: DeliveryRequest): Promise<SendResult> {
    const events = await this.#read(request);
    if (events === undefined) return { status: 401, durationMs: 1, error: "HTTP 401" };
    const answer = this.take(events);
    if (answer === "die") throw new ProcessDied();
    if (answer === "timeout") return { durationMs: 15_000, error: "timeout" };
    const status = answer === "2xx" ? 204 : answer === "5xx" ? 503 : 410;
    return { status, durationMs: 1, ...(status === 204 ? {} : { error: `HTTP ${status}` }) };
  }

  /**
   * Events as they arrive (a request's, or the messages of a queue's sendBatch): checks each, takes
   * the next scripted answer and, if that accepts them ("2xx", "die"), applies them in order.
   */
  take(events: WebhookEvent[]): Answer {
    const resent = events.map((event) => this.#receive(event));
    const answer = this.script.shift() ?? "2xx";
    if (answer === "2xx" || answer === "die") events.forEach((event, i) => this.#accept(event, resent[i]!));
    return answer;
  }

  /** The request's events, verified with any key held (and read as CloudEvents too); undefined: refused. */
  async #read(request: DeliveryRequest): Promise<WebhookEvent[] | undefined> {
    const headers = request.headers as unknown as Record<string, string>;
    const failures: string[] = [];
    for (const key of this.#verification.keys()) {
      // verifyWebhook reads the time before its first await: the sender's (fake) clock, then real time again.
      vi.useFakeTimers({ toFake: ["Date"], now: this.#verification.now() });
      const verifying = verifyWebhook(key, request.body, headers);
      vi.useRealTimers();
      try {
        const events = await verifying;
        this.#checkCloudEvents(headers, request.body, events);
        return events;
      } catch (error) {
        failures.push(`${key.slice(0, 5)}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.violations.push(`request ${headers["webhook-id"]} verifies with no key held (${failures.join("; ")})`);
    return undefined;
  }

  #checkCloudEvents(headers: Record<string, string>, body: string, events: WebhookEvent[]): void {
    const cloudEvent = headers["ce-specversion"] !== undefined || headers["content-type"]!.startsWith("application/cloudevents");
    if (!cloudEvent) return;
    const refusal = brokerRefusal(headers, body);
    if (refusal) this.violations.push(`a broker refuses request ${headers["webhook-id"]}: ${refusal}`);
    const read = HTTP.toEvent({ headers, body });
    const cloudEvents = Array.isArray(read) ? read : [read];
    const expected = events.map((e) => JSON.stringify([e.id, e.key, CE_TYPES[e.type], e]));
    const got = cloudEvents.map((c) => JSON.stringify([c.id, c.subject, c.type, c.data]));
    if (JSON.stringify(got) !== JSON.stringify(expected)) this.violations.push(`the CloudEvents SDK reads ${got.join(", ")}, not ${expected.join(", ")}`);
  }

  /** Checks one event as it arrives; answers whether its id came before (a resend). */
  #receive(event: WebhookEvent): boolean {
    this.received.push(event);
    const what = `${event.type} ${event.key}@${event.resourceVersion}`;
    const known = this.#ids.get(event.id);
    if (known !== undefined && known !== what) this.violations.push(`event id ${event.id} was ${known}, now ${what}`);
    this.#ids.set(event.id, what);
    if (!this.#log.issued(event.key, event.resourceVersion)) this.violations.push(`${what} (id ${event.id}) is no event the log issued`);
    if (event.sequence > this.#sequence + 1) this.violations.push(`sequence jumped from ${this.#sequence} to ${event.sequence} at ${what}`);
    if (event.sequence <= this.#sequence && this.#sequenceIds.get(event.sequence) !== event.id) {
      this.violations.push(`sequence went back from ${this.#sequence} to ${event.sequence} with a new event ${what}`);
    }
    this.#sequenceIds.set(event.sequence, event.id);
    this.#sequence = event.sequence;
    return known !== undefined;
  }

  /** Applies an event of a request it accepted, in order: never behind a newer one it accepted (invariant 10). */
  #accept(event: WebhookEvent, resent: boolean): void {
    const rv = Number(event.resourceVersion);
    const newest = this.#newest.get(event.key);
    if (newest !== undefined && rv < newest) {
      this.violations.push(`${event.type} ${event.key}@${rv} (id ${event.id}${resent ? ", a resend" : ""}) after ${event.key}@${newest} was accepted`);
      return;
    }
    this.#newest.set(event.key, rv);
    if (event.type === "delete") this.state.delete(event.key);
    else this.state.set(event.key, rv);
  }
}

/** Thrown by the endpoint for "die": the subscription's instance is gone mid-send. */
export class ProcessDied extends Error {
  constructor() {
    super("the process died before the answer was stored");
  }
}
