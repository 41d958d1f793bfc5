/**
 * The informer's loop as its Durable Object runs it: how the object wires an Informer
 * (cache/informer.ts) to its storage, clock, watchers and subscriptions, how it reaches the API
 * server, and what one alarm's slice does. The platform pieces (the alarm, `fetch`, the
 * environment's connection and sealer) are wired here; the logic is the engine's.
 *
 * Guarantees:
 * - A slice runs for at most SLICE_MS, and within its subrequest budget (net/subrequest-budget.ts):
 *   a spent budget stops it at its next step, as a reconfiguration does, keeping the stored
 *   position, and the slice answers "now" so the alarm re-arms at once in a fresh invocation. So
 *   does a slice whose nudges were cut short (delivery/feed-host.ts `owes`).
 * - A configuration problem (a connection that cannot be opened or resolved) is recorded as the
 *   informer's failure, shown in its status, and retried after FALLBACK_REARM_MS, never in a tight
 *   loop. Any other error is the caller's (alarm-slice.ts logs it and re-arms from durable state).
 */
import { Informer } from "../cache/informer.ts";
import type { Clock, Random } from "../clock.ts";
import { type ClusterConnection, defaultConnection, resolveConnection } from "../clusters/cluster.ts";
import { openConnection } from "../clusters/sealed-connection.ts";
import { informerSettings, type InformerSpec } from "../config/informer-spec.ts";
import type { Env } from "../env.ts";
import { KubeClient } from "../kube/client.ts";
import { resolveResource } from "../kube/resources.ts";
import { informerIdentity } from "../log-identity.ts";
import type { SubrequestBudget } from "../net/subrequest-budget.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import type { Db } from "../sql.ts";

/** One alarm's slice: room for a full watch session (≤ 600 s + margin) under the 15 min alarm limit. */
export const SLICE_MS = 12 * 60_000;
/** Re-arm delay when even reading durable state failed, or the API server cannot be reached as configured. */
export const FALLBACK_REARM_MS = 30_000;

/** What the object tells its Informer beside the spec. */
export interface InformerWiring {
  clock: Clock;
  random: Random;
  /** Whether `/k8s` watchers want live events: the informer then stays awake (cache/watch-windows.ts). */
  watched: () => boolean;
  /** Killed slices in a row: list in pages from then on (slice-kills.ts, reflector.ts listInPages). */
  listInPages: boolean;
  /** The database's size, which bounds retention (cache/storage-ceiling.ts). */
  databaseBytes: () => number;
  /** After each applied batch and mark: the log's new tail. */
  grew: (tail: number) => void;
}

export function wireInformer(db: Db, spec: InformerSpec, wiring: InformerWiring): Informer {
  const settings = informerSettings(spec);
  return new Informer(
    db,
    {
      ...settings,
      reflector: { ...settings.reflector, keepAwake: wiring.watched, listInPages: wiring.listInPages },
      storage: { bytes: wiring.databaseBytes },
    },
    wiring.clock,
    wiring.random,
    wiring.grew,
    informerIdentity(spec),
  );
}

/** How to reach the informer's cluster: the connection the factory stored, its token unsealed, or the default cluster's. */
export async function clusterConnection(cluster: string, stored: ClusterConnection | null, env: Env): Promise<ClusterConnection> {
  return stored ? await openConnection(sealerFor(env), cluster, stored) : defaultConnection(env);
}

/** The API server's client for `spec`, its requests counted in the slice's budget. */
export function kubeClient(spec: InformerSpec, connection: ClusterConnection, env: Env, budget: SubrequestBudget): KubeClient {
  const { apiUrl, token, headers } = resolveConnection(spec.cluster, connection, env);
  return new KubeClient({
    apiUrl,
    fetch: budget.fetch((input, init) => fetch(input, init)),
    ...(token === undefined ? {} : { token }),
    headers,
    resource: resolveResource(spec.resource, spec.apiVersion),
    ...(spec.namespace === undefined ? {} : { namespace: spec.namespace }),
    ...(spec.labelSelector === undefined ? {} : { labelSelector: spec.labelSelector }),
    ...(spec.fieldSelector === undefined ? {} : { fieldSelector: spec.fieldSelector }),
  });
}

/** The client `connect` makes, or, when it cannot (a configuration problem), when to try again. */
export async function connectOrRetry(informer: Informer, connect: () => Promise<KubeClient>, clock: Clock): Promise<KubeClient | { retryAt: number }> {
  try {
    return await connect();
  } catch (error) {
    // A configuration problem: say so in the status and retry later, never in a tight loop.
    const retryAt = clock.now() + FALLBACK_REARM_MS;
    informer.recordFailure(error instanceof Error ? error.message : String(error), retryAt);
    return { retryAt };
  }
}

/**
 * One slice of the loop on `client`: answers when the next is due — now when the budget ended or
 * nudges are owed (`owes`), so the work goes on in a fresh invocation.
 */
export async function runSlice(
  informer: Informer,
  client: KubeClient,
  budget: SubrequestBudget,
  owes: () => boolean,
  signal: AbortSignal,
  clock: Clock,
): Promise<number> {
  try {
    // A spent budget stops the slice at its next step, as a reconfiguration does, keeping the stored position.
    const next = await informer.tick(client, clock.now() + SLICE_MS, AbortSignal.any([signal, budget.signal]));
    return budget.ended || owes() ? clock.now() : next;
  } catch (error) {
    if (budget.ended && !signal.aborted) return clock.now();
    throw error;
  }
}
