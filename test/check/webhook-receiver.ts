/**
 * A webhook receiver that applies what it gets in the order it gets it (duplicates included), as
 * "in order" promises it may (DESIGN invariants 3, 4, 10), and checks:
 * - per key, resourceVersions never go back: a crash, a refusal or a timeout may resend an event,
 *   but never a key's older event after its newer one was accepted (answered 2xx);
 * - every event id stands for one event, always the same (type, key, RV), and one the log issued
 *   (a log event of that key at that RV, or a replay's add of the object as cached);
 * - sequence numbers never skip (one lost) and only go back to resend what had that number.
 * The final state (`state`) is compared with the cluster's by the driver. As a queue's consumer
 * (`take`), it gets the messages of each accepted sendBatch in the order they were sent: what is
 * checked is the producer's order, which a consumer restores by sequence (docs/api.md).
 */
import type { WebhookEvent } from "../../src/client/types.ts";
import type { DeliveryRequest, SendResult } from "../../src/delivery/sender.ts";

export type Answer = "2xx" | "5xx" | "timeout" | "410" | "die";

/** What the receiver knows of the log, to tell an issued event from an invented one. */
export interface IssuedEvents {
  issued(key: string, resourceVersion: string): boolean;
}

export class WebhookReceiver {
  /** Answers to give, in order; 2xx once it runs out. */
  readonly script: Answer[] = [];
  /** key → RV, as applied in arrival order (the requests it accepted). */
  readonly state = new Map<string, number>();
  readonly received: WebhookEvent[] = [];
  readonly violations: string[];
  readonly #log: IssuedEvents;
  readonly #newest = new Map<string, number>();
  readonly #ids = new Map<string, string>();
  readonly #sequenceIds = new Map<number, string>();
  #sequence = 0;

  constructor(log: IssuedEvents, violations: string[]) {
    this.#log = log;
    this.violations = violations;
  }

  /**
   * The endpoint: checks the request's events, then answers as scripted. A request it answers 2xx
   * it has applied ("die" too: the sender's process dies before it hears that 2xx); one it refuses
   * or never answers it has not, and may get again.
   */
  async send(request: DeliveryRequest): Promise<SendResult> {
    const payload = JSON.parse(request.body) as WebhookEvent | { events: WebhookEvent[] };
    const answer = this.take("events" in payload ? payload.events : [payload]);
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
