/**
 * The informer's loop as its Durable Object runs it (`InformerLoop`): one slice per alarm, the next
 * alarm derived from durable state, the cron's healing; and the wiring under it — how the object
 * makes an Informer (cache/informer.ts) over its storage, clock, watchers and subscriptions, and
 * how it reaches the API server. The platform pieces (the alarm, `fetch`, the environment's
 * connection and sealer) are wired here; the logic is the engine's.
 *
 * Guarantees:
 * - Invariant 7: the alarm re-arms in `finally` whatever the slice did (alarm-slice.ts), from the
 *   slice's answer or else from durable state, never earlier than now + 1 ms; a deleted informer's
 *   loop ends there on purpose. `ensureRunning` re-arms a configured informer whose alarm is missing.
 * - A slice runs for at most SLICE_MS, and within its subrequest budget (net/subrequest-budget.ts):
 *   a spent budget stops it at its next step, as a reconfiguration does, keeping the stored
 *   position, and the slice answers "now" so the alarm re-arms at once in a fresh invocation. So
 *   does a slice whose nudges were cut short (delivery/feed-host.ts `owes`).
 * - A slice is marked durably while it runs, once the object is configured, so a killed one is
 *   counted and later slices shrink their work until slices finish again; one a deploy ended
 *   (started under another version of the Worker) is no kill (slice-kills.ts).
 * - A configuration problem (a connection that cannot be opened or resolved) is recorded as the
 *   informer's failure, shown in its status, and retried after FALLBACK_REARM_MS, never in a tight
 *   loop. Any other error is logged by the slice (alarm-slice.ts), which re-arms from durable state.
 */
import { Informer } from "../cache/informer.ts";
import { TRANSFORM_VERSION } from "../cache/transform.ts";
import type { Clock, Random } from "../clock.ts";
import { type ClusterConnection, defaultConnection, resolveConnection } from "../clusters/cluster.ts";
import { openConnection } from "../clusters/sealed-connection.ts";
import { informerSettings, type InformerSpec } from "../config/informer-spec.ts";
import type { SpecStore, StoredSpec } from "../config/spec-store.ts";
import type { ConfiguredInformer } from "../config/configured-informer.ts";
import type { FeedHost } from "../delivery/feed-host.ts";
import type { InformerWatchers } from "../k8s/informer-watchers.ts";
import { AlarmSlice } from "./alarm-slice.ts";
import { type SliceEnd, type SliceKillCounts, SliceKills } from "./slice-kills.ts";
import type { Env } from "../env.ts";
import { KubeClient } from "../kube/client.ts";
import { resolveResource } from "../kube/resources.ts";
import { logger } from "../log.ts";
import { informerIdentity } from "../log-identity.ts";
import { storageCeilingOf } from "../cache/storage-ceiling.ts";
import { SubrequestBudget, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import type { Db } from "../sql.ts";
import type { LogReaders } from "../cache/log-readers.ts";

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
  /** STORAGE_CEILING_MB, the operator's ceiling for that size (unset: 70% of the platform's limit). */
  storageCeilingMb?: string;
  /** Who still reads the log, which a shrink past the ceiling holds for (the object's own: it outlives each Informer). */
  readers?: LogReaders;
  /** After each applied batch and mark: the log's new tail. */
  grew: (tail: number) => void;
}

export function wireInformer(db: Db, spec: InformerSpec, wiring: InformerWiring): Informer {
  const settings = informerSettings(spec);
  const ceiling = storageCeilingOf(wiring.storageCeilingMb);
  if (ceiling.error) logger.error("storage ceiling setting refused", { ...informerIdentity(spec), cause: "config", error: ceiling.error });
  return new Informer(
    db,
    {
      ...settings,
      reflector: { ...settings.reflector, keepAwake: wiring.watched, listInPages: wiring.listInPages },
      storage: { bytes: wiring.databaseBytes, ceilingBytes: ceiling.ceilingBytes, ...(wiring.readers ? { readers: wiring.readers } : {}) },
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
    // The informer's transform drops them: a list or watch need not parse them (list-decoder.ts, kube/object-text.ts).
    dropManagedFields: spec.transform.dropManagedFields,
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

/**
 * When to set the alarm after a slice that answered `answer` (undefined: it threw, or asks durable
 * state): that answer, else the informer's own `wakeAt`; now when watchers want a sleeping
 * informer awake; FALLBACK_REARM_MS from now when even durable state could not be read. Never
 * before now + 1 ms: setAlarm(now) from inside alarm() can be dropped (workerd #6866). Undefined:
 * the informer is deleted, and the loop ends there on purpose.
 */
export function nextAlarmAt<S>(
  answer: number | undefined,
  loop: { stored(): S | undefined; wakeAt(stored: S): number; wakeForWatchers(): boolean },
  clock: Clock,
): number | undefined {
  let next = answer;
  try {
    const stored = loop.stored();
    if (!stored) return undefined;
    next ??= loop.wakeAt(stored);
    if (loop.wakeForWatchers()) next = clock.now();
  } catch {
    next = clock.now() + FALLBACK_REARM_MS;
  }
  return Math.max(next, clock.now() + 1);
}

/**
 * A cache of Secrets made by an older transform (one that kept their data, before issue 17, or
 * dropped it without counting its keys, before issue 18 F19) is made again: the relist of a
 * transform change, which rewrites every body. Once per object and upgrade; an informer whose
 * transform drops no secret data only records the version.
 */
export async function retransformOutdated(
  stored: StoredSpec | undefined,
  specs: Pick<SpecStore, "markTransformCurrent">,
  informerOf: (spec: InformerSpec) => Informer,
  armNow: () => Promise<void>,
): Promise<void> {
  if (!stored || stored.transformVersion >= TRANSFORM_VERSION) return;
  if (informerSettings(stored.spec).transform.dropSecretData) {
    informerOf(stored.spec).restart({ transformChanged: true });
    await armNow();
    logger.info("relist", { ...informerIdentity(stored.spec), cause: "retransform", reason: `the cache's Secrets were made by transform version ${stored.transformVersion}, not ${TRANSFORM_VERSION}` });
  }
  specs.markTransformCurrent();
}

/** The object's storage, as far as its loop needs it: its one alarm and its synchronous key-value store. */
export type LoopStorage = Pick<DurableObjectStorage, "getAlarm" | "setAlarm" | "kv">;

export interface InformerLoopDeps {
  state: ConfiguredInformer;
  informerOf: (spec: InformerSpec) => Informer;
  feed: Pick<FeedHost, "sendOwed" | "owes" | "nudgeAll">;
  watchers: Pick<InformerWatchers, "wakeForWatchers">;
  storage: LoopStorage;
  env: Env;
  clock: Clock;
}

export class InformerLoop {
  readonly #deps: InformerLoopDeps;
  /** The running slice, so configuration changes and deletion can stop it and wait. */
  readonly #slice = new AlarmSlice();
  /** The running slice's subrequest budget; none between slices. */
  #budget: SubrequestBudget | undefined;

  constructor(deps: InformerLoopDeps) {
    this.#deps = deps;
  }

  /** Stops the running slice and waits for its end; it does not re-arm (alarm-slice.ts). */
  stop(): Promise<void> {
    return this.#slice.stop();
  }

  /** The running slice's budget; outside a slice (the cron's ensureRunning) a fresh one for the invocation. */
  budget(): SubrequestBudget {
    return this.#budget ?? new SubrequestBudget(subrequestLimitOf(this.#deps.env));
  }

  /** The slices killed so far (review B9): marked durably around each slice, with the Worker's version (a deploy's end is no kill). */
  get kills(): SliceKills {
    return new SliceKills(this.#deps.storage.kv, this.#deps.env.CF_VERSION_METADATA?.id);
  }

  async alarm(): Promise<void> {
    const { state, clock } = this.#deps;
    await this.#slice.run(
      "informer",
      // Marked only once configured: an unconfigured object stores nothing.
      (signal) => (state.configured ? this.kills.during(clock.now(), () => this.#tick(signal), (end, counts) => this.#ended(end, counts)) : this.#tick(signal)),
      (wakeAt) => this.#rearm(wakeAt),
      () => {
        const stored = state.stored();
        return stored && informerIdentity(stored.spec);
      },
    );
  }

  /**
   * Self-healing (invariant 7): re-arms the alarm of a configured informer whose alarm is missing,
   * and nudges its subscriptions, which re-arms theirs.
   */
  async ensureRunning(): Promise<boolean> {
    const { state, informerOf, storage, clock } = this.#deps;
    const stored = state.stored();
    if (!stored) return false;
    // Subscriptions heal the same way: a nudge re-arms a subscription whose alarm is missing.
    this.#deps.feed.nudgeAll(informerOf(stored.spec).log.bounds().tail);
    if (this.#slice.running) return false;
    if ((await storage.getAlarm()) !== null) return false;
    const wakeAt = informerOf(stored.spec).progress().wakeAt;
    await storage.setAlarm(Math.max(wakeAt, clock.now()));
    return true;
  }

  /** The previous slice never reached its end: killed, or reset by a deploy (slice-kills.ts). */
  #ended(end: Exclude<SliceEnd, "finished">, counts: SliceKillCounts): void {
    const stored = this.#deps.state.stored();
    const who = stored && informerIdentity(stored.spec);
    if (end === "deploy") logger.info("alarm slice ended by a deploy", { ...who, cause: "deploy" });
    else logger.warn("alarm slice killed", { ...who, kills: counts.kills, listsInPages: counts.shrunk });
  }

  /** One slice of the loop; answers when the next is due (undefined: deleted, or ask durable state). */
  async #tick(signal: AbortSignal): Promise<number | undefined> {
    const { state, informerOf, feed, env, clock } = this.#deps;
    const stored = state.stored();
    if (!stored) return undefined; // deleted: #rearm finds no spec and the loop ends here on purpose
    const informer = informerOf(stored.spec);
    const budget = (this.#budget = new SubrequestBudget(subrequestLimitOf(env)));
    feed.sendOwed();
    const connect = async () => kubeClient(stored.spec, await clusterConnection(stored.spec.cluster, stored.connection, env), env, budget);
    const client = await connectOrRetry(informer, connect, clock);
    if ("retryAt" in client) return client.retryAt;
    try {
      return await runSlice(informer, client, budget, () => feed.owes, signal, clock);
    } finally {
      this.#budget = undefined;
    }
  }

  async #rearm(answer: number | undefined): Promise<void> {
    const { state, informerOf, watchers, storage, clock } = this.#deps;
    const loop = { stored: () => state.stored(), wakeAt: (stored: StoredSpec) => informerOf(stored.spec).progress().wakeAt, wakeForWatchers: () => watchers.wakeForWatchers() };
    const at = nextAlarmAt(answer, loop, clock);
    if (at !== undefined) await storage.setAlarm(at);
  }
}
