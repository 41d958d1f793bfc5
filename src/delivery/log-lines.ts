/**
 * A delivery attempt's notable outcomes as log lines (src/log.ts): the first failure of a streak,
 * a recovery, a dead letter, a subscription disabled by 410. Named by cluster, informer and subscription id;
 * never the URL (its path or query may hold a token), the secret, or an event body. The error is
 * the sender's short text (a status and the start of the answer, at most a few hundred characters).
 *
 * Volume: retries after the first failure of a streak are `debug`, so a dead endpoint writes one
 * `warn` per streak and one per dead-lettered batch, not one per retry.
 */
import { logger } from "../log.ts";
import { subscriptionIdentity } from "../log-identity.ts";
import type { SendResult } from "./sender.ts";

export type DeliveryDecision = "delivered" | "retry" | "dead-letter" | "disable";

export function logDelivery(
  who: { cluster: string; informer: string; id: string },
  decision: DeliveryDecision,
  result: SendResult,
  attempt: number,
  events: number,
): void {
  const fields = { ...subscriptionIdentity(who), status: result.status ?? null, attempt, events, error: result.error ?? null };
  switch (decision) {
    case "delivered":
      if (attempt > 1) logger.info("delivery recovered", fields);
      return;
    case "retry":
      if (attempt === 1) logger.warn("delivery failed", fields);
      else logger.debug("delivery retry failed", fields);
      return;
    case "dead-letter":
      logger.warn("dead-lettered", fields);
      return;
    case "disable":
      logger.error("subscription disabled: the endpoint answered 410 Gone", fields);
      return;
  }
}
