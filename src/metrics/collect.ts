/**
 * Reads every informer's and subscription's metrics from their Durable Objects, for /metrics and
 * the status page: one RPC per informer, one per subscription, and one more per informer whose
 * subscriptions lag (when did the first event they have not handled happen).
 *
 * Each informer is read through its identity (metrics/identity.ts); an informer or subscription
 * that cannot be read (deleted meanwhile, failing) is left out and counted in `errors`, so one
 * broken object never fails the whole scrape.
 */
import type { Env } from "../env.ts";
import { DEFAULT_CLUSTER } from "../clusters/cluster.ts";
import { informerStub } from "../clusters/stubs.ts";
import { FACTORY_NAME } from "../objects/informer-factory.ts";
import type { InformerObjectMetrics } from "../objects/informer-object.ts";
import type { SubscriptionMetrics } from "../objects/subscription-object.ts";
import type { InformerIdentity, SubscriptionIdentity } from "./identity.ts";

export interface SubscriptionSnapshot {
  identity: SubscriptionIdentity;
  metrics: SubscriptionMetrics;
  /** Log events after the subscription's cursor. */
  lagEvents: number;
  /** How long ago the first event it has not handled was appended; 0 when caught up, null when unknown. */
  lagSeconds: number | null;
}

export interface InformerSnapshot {
  identity: InformerIdentity;
  metrics: InformerObjectMetrics;
  subscriptions: SubscriptionSnapshot[];
}

export interface MetricsSnapshot {
  at: number;
  informers: InformerSnapshot[];
  /** Objects that could not be read this time. */
  errors: number;
}

export async function collect(env: Env, now: () => number = Date.now): Promise<MetricsSnapshot> {
  const registered = await env.FACTORY.getByName(FACTORY_NAME).list();
  let errors = 0;
  const informers = await Promise.all(
    registered.map(async (address): Promise<InformerSnapshot | undefined> => {
      const identity: InformerIdentity = { informer: address.name, ...(address.cluster === DEFAULT_CLUSTER ? {} : { cluster: address.cluster }) };
      const stub = informerStub(env, address);
      const read = await stub.metrics().catch(() => undefined);
      if (!read?.ok) {
        errors++;
        return undefined;
      }
      const metrics = read.value;
      const subscriptions = (
        await Promise.all(
          metrics.subscriptions.map(async (id) => {
            const sub = await env.SUBSCRIPTION.getByName(id).metrics().catch(() => undefined);
            if (!sub?.ok) errors++;
            return sub?.ok ? sub.value : undefined;
          }),
        )
      ).filter((sub): sub is SubscriptionMetrics => sub !== undefined);
      const tail = metrics.progress.eventLog.tail;
      const behind = subscriptions.filter((sub) => sub.cursor < tail).map((sub) => sub.cursor + 1);
      let times: Record<number, number> = {};
      if (behind.length > 0) {
        const read = await stub.eventTimes([...new Set(behind)]).catch(() => undefined);
        if (read?.ok) times = read.value;
      }
      const at = now();
      return {
        identity,
        metrics,
        subscriptions: subscriptions.map((sub) => {
          const lagEvents = Math.max(0, tail - sub.cursor);
          const firstUnhandled = times[sub.cursor + 1];
          return {
            identity: { ...identity, subscription: sub.id },
            metrics: sub,
            lagEvents,
            lagSeconds: lagEvents === 0 ? 0 : firstUnhandled === undefined ? null : Math.max(0, (at - firstUnhandled) / 1000),
          };
        }),
      };
    }),
  );
  return { at: now(), informers: informers.filter((i): i is InformerSnapshot => i !== undefined), errors };
}
