/**
 * The checker's queue (a subscription's `queue` target): a producer binding whose sendBatch hands
 * the messages' events to the WebhookReceiver, which answers as scripted: "2xx" accepts them, "die"
 * accepts them and the sending process dies before it hears so, "hang" never answers (the kill comes
 * first), anything else ("5xx", "timeout", "410": a queue has no such answers) throws, a failed
 * send. Sends go through the real queue sender (src/delivery/queue-sender.ts).
 */
import type { WebhookEvent } from "../../src/client/types.ts";
import type { Clock } from "../../src/clock.ts";
import { type QueueSend, queueSender } from "../../src/delivery/queue-sender.ts";
import { queueTargets } from "../../src/delivery/queue-target.ts";
import { type Answer, ProcessDied, type WebhookReceiver } from "./webhook-receiver.ts";

export class CheckQueue implements Queue {
  static readonly BINDING = "EVENTS";
  readonly #receiver: WebhookReceiver;
  /** Called when a send hangs: the driver kills the process. */
  readonly #hang: () => void;
  /** The messages were accepted as the process died: the sender throws once it hears so. */
  #died = false;

  constructor(receiver: WebhookReceiver, hang: () => void) {
    this.#receiver = receiver;
    this.#hang = hang;
  }

  get [Symbol.toStringTag](): string {
    return "WorkerQueue";
  }

  /** The subscription's queue sender over this queue; a process that died mid-send throws ProcessDied. */
  sender(clock: Clock): QueueSend {
    const send = queueSender(clock, () => queueTargets({ WEBHOOK_QUEUES: CheckQueue.BINDING, [CheckQueue.BINDING]: this }), (call) => call());
    return async (request) => {
      const result = await send(request);
      if (this.#died) {
        this.#died = false;
        throw new ProcessDied();
      }
      return result;
    };
  }

  async sendBatch(messages: Iterable<MessageSendRequest>): Promise<QueueSendBatchResponse> {
    if (this.#receiver.script[0] === ("hang" as Answer)) {
      this.#receiver.script.shift();
      this.#hang();
      return new Promise<never>(() => {}); // no answer, ever: the kill comes first
    }
    const answer = this.#receiver.take([...messages].map((m) => m.body as WebhookEvent));
    if (answer === "die") this.#died = true;
    else if (answer !== "2xx") throw new Error(`the queue refused the batch (${answer})`);
    return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
  }

  async send(): Promise<QueueSendResponse> {
    throw new Error("edge-informer sends with sendBatch only");
  }

  async metrics(): Promise<QueueMetrics> {
    return { backlogCount: 0, backlogBytes: 0 };
  }
}
