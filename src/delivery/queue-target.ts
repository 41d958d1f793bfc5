/**
 * Which Cloudflare Queue a subscription may send to (`{"queue": "EVENTS"}`, docs/api.md "Queue
 * subscriptions"): a producer binding of this Worker (wrangler.toml `[[queues.producers]]`) that the
 * operator lists in WEBHOOK_QUEUES. A binding is the Worker's capability, and an API credential
 * chooses the target: without the list, an admin (or one scoped to a single cluster) could pour
 * events into a queue the Worker holds for something else, whose consumer trusts what arrives
 * (there is no signature inside the account). Unset, no queue may be named.
 *
 * Guarantees:
 * - A name is refused, saying why, unless it is listed, bound, and bound to a queue producer (not a
 *   variable, a secret, a service or a Durable Object namespace of the same name); the same check
 *   runs when a subscription is made and before each send, so a binding or a list changed since
 *   fails the attempt with the reason (retried, then dead-lettered) instead of sending.
 */

/** A binding's name, as wrangler accepts it. */
export const QUEUE_BINDING_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const SETTING = "WEBHOOK_QUEUES";

export interface QueueTargets {
  /** The producer binding `name` names, or why a subscription may not send to it. */
  resolve(name: string): { queue: Queue } | { refusal: string };
}

/** The queues `env` lets subscriptions name (WEBHOOK_QUEUES: comma-separated binding names). */
export function queueTargets(env: object): QueueTargets {
  const bindings = env as Record<string, unknown>;
  const setting = typeof bindings[SETTING] === "string" ? (bindings[SETTING] as string) : "";
  const listed = new Set(setting.split(",").map((name) => name.trim()).filter((name) => name !== ""));
  return {
    resolve(name) {
      if (listed.size === 0) return { refusal: `queue '${name}': ${SETTING} is unset, so no queue may be named (list the producer bindings subscriptions may use)` };
      if (!listed.has(name)) return { refusal: `queue '${name}' is not listed in ${SETTING}` };
      const binding = bindings[name];
      if (binding === undefined) return { refusal: `queue '${name}': the Worker has no binding of that name (wrangler.toml [[queues.producers]])` };
      if (!isQueueProducer(binding)) return { refusal: `queue '${name}': the binding is not a queue producer` };
      return { queue: binding };
    },
  };
}

/**
 * A queue producer binding, told by the runtime's own class tag: duck typing would not do, since a
 * service binding answers any method name (`send`, `sendBatch`) as an RPC call.
 */
function isQueueProducer(binding: unknown): binding is Queue {
  return Object.prototype.toString.call(binding) === "[object WorkerQueue]";
}
