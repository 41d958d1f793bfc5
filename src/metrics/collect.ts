/**
 * Reads every informer's and subscription's metrics from their Durable Objects, for /metrics and
 * the status page: one RPC per informer, one per subscription, and one more per informer whose
 * subscriptions lag (when did the first event they have not handled happen).
 *
 * Each informer is read through its identity (log-identity.ts), which names its cluster; an
 * informer or subscription that cannot be read (deleted meanwhile, failing, or not answering within
 * COLLECT_CALL_TIMEOUT_MS) is left out and counted in `errors`, so one broken object never fails
 * the whole scrape, and a blocked one costs it that long at most. At most COLLECT_CONCURRENCY calls
 * are in flight at once (review B6(c)): a scrape of a large deployment no longer asks every object
 * at the same moment.
 *
 * Clusters (issue 12) come from the factory's registry in the same round trip as the informers:
 * their name, where they are configured and their API server's host, never a token, and no probe
 * of the API server (GET /clusters probes live; a scrape would otherwise cost a request to every
 * cluster and wait up to PROBE_TIMEOUT_MS on a dead one). Whether a cluster answers shows in its
 * informers' watch state and last error.
 */
import type { Env } from "../env.ts";
import type { Result } from "../errors.ts";
import { informerStub, subscriptionStub } from "../clusters/stubs.ts";
import { placementOf } from "../clusters/placement.ts";
import type { ClusterView } from "../objects/informer-factory.ts";
import { factoryStub } from "../objects/factory-stub.ts";
import type { InformerObjectMetrics } from "../objects/informer-object.ts";
import type { SubscriptionMetrics } from "../objects/subscription-object.ts";
import { type InformerIdentity, informerIdentity, type SubscriptionIdentity, subscriptionIdentity } from "../log-identity.ts";
import { eachWithin } from "../objects/fan-out.ts";

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

/** Object calls a collection has in flight at once (review B6(c): every informer and subscription at once, before). */
export const COLLECT_CONCURRENCY = 6;
/** How long a collection waits for one object's answer: one that does not answer in time is left out and counted in `errors`. */
export const COLLECT_CALL_TIMEOUT_MS = 5_000;

/** How a collection fans out (tests shorten the timeout). */
export interface CollectLimits {
  concurrency: number;
  callTimeoutMs: number;
}

/**
 * Every cluster's metrics, or (`visible`) those of the clusters a caller may read: no other object
 * is asked. Three rounds (informers, their subscriptions, the event times of lagging ones), each
 * with at most COLLECT_CONCURRENCY calls in flight, each call given COLLECT_CALL_TIMEOUT_MS.
 */
export async function collect(
  env: Env,
  now: () => number = Date.now,
  visible: (cluster: string) => boolean = () => true,
  limits: Partial<CollectLimits> = {},
): Promise<MetricsSnapshot> {
  const fanOut = { concurrency: limits.concurrency ?? COLLECT_CONCURRENCY, timeoutMs: limits.callTimeoutMs ?? COLLECT_CALL_TIMEOUT_MS };
  const factory = factoryStub(env);
  const [allInformers, allClusters] = await Promise.all([factory.list(), factory.clusters()]);
  const registered = allInformers.filter((informer) => visible(informer.cluster));
  const clusters = allClusters.filter((cluster) => visible(cluster.name));
  let errors = 0;
  const read = registered.map((address) => {
    const placement = placementOf(allClusters.find((cluster) => cluster.name === address.cluster));
    return { address, placement, stub: informerStub(env, address, placement) };
  });
  const informerMetrics = await eachWithin(
    read.map(({ stub }) => async (): Promise<Result<InformerObjectMetrics>> => await stub.metrics()),
    fanOut,
  );
  const answered = read.flatMap((informer, i) => {
    const metrics = informerMetrics[i];
    if (!metrics?.ok) {
      errors++;
      return [];
    }
    return [{ ...informer, metrics: metrics.value }];
  });
  const subscriptionReads = answered.flatMap(({ metrics, placement }, informer) => metrics.subscriptions.map((id) => ({ informer, id, placement })));
  const subscriptionMetrics = await eachWithin(
    subscriptionReads.map(({ id, placement }) => async (): Promise<Result<SubscriptionMetrics>> => await subscriptionStub(env, id, placement).metrics()),
    fanOut,
  );
  const subscriptionsOf = answered.map((): SubscriptionMetrics[] => []);
  subscriptionReads.forEach(({ informer }, i) => {
    const sub = subscriptionMetrics[i];
    if (sub?.ok) subscriptionsOf[informer]!.push(sub.value);
    else errors++;
  });
  // When the first event each lagging subscription has not handled was appended: one call per informer.
  const eventTimes = await eachWithin(
    answered.map(({ metrics, stub }, informer) => async (): Promise<Record<number, number>> => {
      const tail = metrics.progress.eventLog.tail;
      const behind = subscriptionsOf[informer]!.filter((sub) => sub.cursor < tail).map((sub) => sub.cursor + 1);
      if (behind.length === 0) return {};
      const times = await stub.eventTimes([...new Set(behind)]);
      return times.ok ? times.value : {};
    }),
    fanOut,
  );
  const at = now();
  const informers = answered.map(({ address, metrics }, informer): InformerSnapshot => {
    const tail = metrics.progress.eventLog.tail;
    const times: Record<number, number> = eventTimes[informer] ?? {};
    return {
      identity: informerIdentity(address),
      metrics,
      subscriptions: subscriptionsOf[informer]!.map((sub) => {
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
  });
  return {
    at: now(),
    clusters: clusters.map((cluster) => ({ name: cluster.name, source: cluster.source, host: hostOf(cluster.server), informers: cluster.informers })),
    informers,
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
