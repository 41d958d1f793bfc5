/**
 * Reads every informer's and subscription's metrics from their Durable Objects, for /metrics and
 * the status page: one RPC per informer, one per subscription, and one more per informer whose
 * subscriptions lag (when did the first event they have not handled happen).
 *
 * Each informer is read through its identity (log-identity.ts), which names its cluster; an
 * informer or subscription that cannot be read (deleted meanwhile, failing) is left out and counted
 * in `errors`, so one broken object never fails the whole scrape.
 *
 * Clusters (issue 12) come from the factory's registry in the same round trip as the informers:
 * their name, where they are configured and their API server's host, never a token, and no probe
 * of the API server (GET /clusters probes live; a scrape would otherwise cost a request to every
 * cluster and wait up to PROBE_TIMEOUT_MS on a dead one). Whether a cluster answers shows in its
 * informers' watch state and last error.
 */
import type { Env } from "../env.ts";
import { informerStub, subscriptionStub } from "../clusters/stubs.ts";
import { placementOf } from "../clusters/placement.ts";
import { type ClusterView, FACTORY_NAME } from "../objects/informer-factory.ts";
import type { InformerObjectMetrics } from "../objects/informer-object.ts";
import type { SubscriptionMetrics } from "../objects/subscription-object.ts";
import { type InformerIdentity, informerIdentity, type SubscriptionIdentity, subscriptionIdentity } from "../log-identity.ts";

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

/** A cluster as /metrics and the status page show it: never its URL's path, nor a credential. */
export interface ClusterSnapshot {
  name: string;
  source: ClusterView["source"];
  /** The API server's host (and port); empty when none is configured. */
  host: string;
  /** Informers registered in it. */
  informers: number;
}

export interface MetricsSnapshot {
  at: number;
  /** Every cluster, the default one first. */
  clusters: ClusterSnapshot[];
  informers: InformerSnapshot[];
  /** Objects that could not be read this time. */
  errors: number;
}

/** Every cluster's metrics, or (`visible`) those of the clusters a caller may read: no other object is asked. */
export async function collect(env: Env, now: () => number = Date.now, visible: (cluster: string) => boolean = () => true): Promise<MetricsSnapshot> {
  const factory = env.FACTORY.getByName(FACTORY_NAME);
  const [allInformers, allClusters] = await Promise.all([factory.list(), factory.clusters()]);
  const registered = allInformers.filter((informer) => visible(informer.cluster));
  const clusters = allClusters.filter((cluster) => visible(cluster.name));
  let errors = 0;
  const informers = await Promise.all(
    registered.map(async (address): Promise<InformerSnapshot | undefined> => {
      const identity = informerIdentity(address);
      const placement = placementOf(allClusters.find((cluster) => cluster.name === address.cluster));
      const stub = informerStub(env, address, placement);
      const read = await stub.metrics().catch(() => undefined);
      if (!read?.ok) {
        errors++;
        return undefined;
      }
      const metrics = read.value;
      const subscriptions = (
        await Promise.all(
          metrics.subscriptions.map(async (id) => {
            const sub = await subscriptionStub(env, id, placement).metrics().catch(() => undefined);
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
            identity: subscriptionIdentity(sub),
            metrics: sub,
            lagEvents,
            lagSeconds: lagEvents === 0 ? 0 : firstUnhandled === undefined ? null : Math.max(0, (at - firstUnhandled) / 1000),
          };
        }),
      };
    }),
  );
  return {
    at: now(),
    clusters: clusters.map((cluster) => ({ name: cluster.name, source: cluster.source, host: hostOf(cluster.server), informers: cluster.informers })),
    informers: informers.filter((i): i is InformerSnapshot => i !== undefined),
    errors,
  };
}

/** A URL's host: its path or query could carry something meant for the API server alone. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "";
  }
}
