/**
 * A queue producer binding that records what it is sent and fails as scripted: for tests of queue
 * subscriptions' sending side (src/delivery/queue-sender.ts) without miniflare's broker. It carries
 * the runtime's class tag, so queue-target.ts takes it for a producer binding.
 */
export type QueueAnswer = "ok" | "throw" | "hang";

export class FakeQueue implements Queue {
  /** What each `sendBatch` call carried, accepted or not. */
  readonly calls: MessageSendRequest[][] = [];
  /** Answers to give, in order; "ok" once it runs out. */
  script: QueueAnswer[] = [];

  get [Symbol.toStringTag](): string {
    return "WorkerQueue";
  }

  /** The bodies of the messages of accepted calls, in order. */
  get accepted(): unknown[] {
    return this.#accepted;
  }

  readonly #accepted: unknown[] = [];

  async sendBatch(messages: Iterable<MessageSendRequest>): Promise<QueueSendBatchResponse> {
    const batch = [...messages];
    this.calls.push(batch);
    const answer = this.script.shift() ?? "ok";
    if (answer === "throw") throw new Error("Queue sendBatch failed: 500 internal error");
    if (answer === "hang") return new Promise<never>(() => {});
    this.#accepted.push(...batch.map((m) => m.body));
    return { metadata: { metrics: { backlogCount: this.#accepted.length, backlogBytes: 0 } } };
  }

  async send(): Promise<QueueSendResponse> {
    throw new Error("edge-informer sends with sendBatch only");
  }

  async metrics(): Promise<QueueMetrics> {
    return { backlogCount: this.#accepted.length, backlogBytes: 0 };
  }
}
