/**
 * SubscriptionObject: one Durable Object per webhook subscription, a thin shell over
 * delivery/subscription.ts. Its own storage holds the cursor, so a slow or dead endpoint delays
 * only itself. It reads its informer's log over RPC, is nudged by the informer when events arrive,
 * and runs its delivery loop (delivery/step-loop.ts) from the alarm. What an RPC changes is
 * decided in src/delivery (subscription-admin.ts, subscription.ts); this class wires the informer's
 * RPCs, the clock, the secret's randomness and the alarm.
 *
 * Invariant 7 holds here too: `alarm()` re-arms in `finally` from durable state.
 *
 * Each alarm's slice has its own subrequest budget (net/subrequest-budget.ts): every delivery and
 * every read of the informer's log (and every `sendBatch` to a queue) spends one, and a slice that reaches the budget's margin, or
 * meets the platform's limit, ends and re-arms at once, so delivery goes on in a fresh invocation.
 *
 * Guarantees:
 * - An object that holds no subscription stores nothing: the tables are created by `create` and
 *   `declare`, so a request for an unknown id answers NotFound and leaves no storage (#7.17).
 * - Once `destroy` starts, nothing is sent and no alarm is armed: the running slice is stopped
 *   (a request already in flight finishes before the DELETE answers), and an alarm or nudge that
 *   arrives meanwhile does nothing. Afterwards the object holds no storage and no alarm.
 */
import { DurableObject } from "cloudflare:workers";
import { asAddress, type InformerAddress } from "../clusters/cluster.ts";
import { ownPlacement, type Placement } from "../clusters/placement.ts";
import { informerStub } from "../clusters/stubs.ts";
import { systemClock, systemRandom } from "../clock.ts";
import type { Feed } from "../delivery/feed.ts";
import { httpSender } from "../delivery/sender.ts";
import { queueSender } from "../delivery/queue-sender.ts";
import { queueTargets } from "../delivery/queue-target.ts";
import { egressRule } from "../net/egress.ts";
import { runSlice } from "../delivery/step-loop.ts";
import { Subscription } from "../delivery/subscription.ts";
import {
  addressOf,
  createSubscription,
  declareSubscription,
  newSigningSecret,
  type Register,
  sealSecret,
  type ShownSecret,
} from "../delivery/subscription-admin.ts";
import type { ParsedSpec, SigningKind } from "../delivery/subscription-spec.ts";
import type { DeadLetter, DeliveryAttempt, DeliveryMetrics, ListAnswer, SubscriptionStatus } from "../delivery/subscription-views.ts";
import type { Env } from "../env.ts";
import { ApiError, attempt, attemptAsync, fail, ok, type Result, unwrap } from "../errors.ts";
import { sealerFor } from "../secrets/secret-sealer.ts";
import { Db } from "../sql.ts";
import type { RowCounts, RowTally } from "../sql-rows.ts";
import { AlarmSlice } from "./alarm-slice.ts";
import { SliceKills } from "./slice-kills.ts";
import { SubrequestBudget, subrequestLimitOf } from "../net/subrequest-budget.ts";
import { errorText, logger, setLogLevel } from "../log.ts";
import { subscriptionIdentity } from "../log-identity.ts";

/** What /metrics and the status page read of a subscription (src/metrics); never its secret or URL. */
export type SubscriptionMetrics = DeliveryMetrics & {
  /** Rows its statements read and wrote since it was loaded (sql-rows.ts: in memory, reset by an eviction). */
  sqlRows: RowCounts;
  /** Alarm slices killed before their end (objects/slice-kills.ts). */
  sliceKills: number;
};

/** One alarm's slice of deliveries; the rest continues in the next alarm. */
const SLICE_MS = 5 * 60_000;
const FALLBACK_REARM_MS = 30_000;

export type CreatedSubscription = SubscriptionStatus & ShownSecret;

/** `GET /subscriptions/{id}/signing-key`: an Ed25519 subscription's public key(s). */
export interface SigningKeyAnswer {
  id: string;
  signing: "ed25519";
  publicKey: string;
  /** A previous Ed25519 key still signing during a rotation's grace period. */
  previous?: { publicKey: string; expiresAt: string };
}

export class SubscriptionObject extends DurableObject<Env> {
  readonly #db: Db;
  #subscription!: Subscription;
  readonly #slice = new AlarmSlice();
  /** A nudge came in while the loop was running: look at the log again before sleeping. */
  #nudged = false;
  /** `destroy` is under way: alarms, nudges and the loop do nothing. */
  #destroying = false;
  /** The running slice's subrequest budget; none outside an alarm (an RPC's few calls are not counted). */
  #budget: SubrequestBudget | undefined;
  /** Registers this subscription with an informer (its object's `addSubscriber`). */
  readonly #register: Register = (informer, id) => informerStub(this.env, informer, ownPlacement(this.ctx.id)).addSubscriber(id);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = new Db(ctx.storage);
    setLogLevel(env.LOG_LEVEL);
    ctx.blockConcurrencyWhile(async () => {
      this.#migrate();
      // Waking is the cheap occasion to seal what an earlier release or key left (stored-secrets.ts).
      await this.#subscription.resealSecrets().catch((error: unknown) => {
        const record = this.#subscription.store.get();
        logger.error("re-encrypting a stored webhook secret failed", { ...(record && subscriptionIdentity(record)), cause: "config", error: errorText(error) });
      });
    });
  }

  /**
   * Creates this subscription on `informer` with a new secret of its `signing` kind (an HMAC secret
   * answered this once, or an Ed25519 key whose public half is answered), and starts delivering.
   */
  async create(id: string, target: InformerAddress | string, spec: ParsedSpec): Promise<Result<CreatedSubscription>> {
    const { secret, shown } = await newSigningSecret(spec.signing ?? "hmac");
    const created = await createSubscription(this.#subscription, this.#register, { id, informer: asAddress(target), spec, secret, declared: false });
    if (!created.ok) return created;
    await this.ctx.storage.setAlarm(Date.now());
    return ok({ ...this.#subscription.status()!, ...shown });
  }

  /** Brings a subscription declared in INFORMERS in line with its declaration (subscription-admin.ts). */
  async declare(id: string, target: InformerAddress | string, spec: ParsedSpec, secret: string): Promise<Result<"created" | "updated" | "unchanged">> {
    const declared = await declareSubscription(this.#subscription, this.#register, { id, informer: asAddress(target), spec, secret });
    if (declared.ok && declared.value === "created") await this.ctx.storage.setAlarm(Date.now());
    if (declared.ok && declared.value === "updated") await this.#wake();
    return declared;
  }

  /**
   * The subscription's status. `tail` is the informer's log tail when the caller knows it (a list
   * of an informer's subscriptions asks the informer once, not once per subscription).
   */
  async status(tail?: number): Promise<Result<SubscriptionStatus>> {
    const record = this.#subscription.store.get();
    if (record && tail === undefined) {
      // A failing or idle subscription does not read the log: ask for its tail, so `lag` is true.
      const informer = await informerStub(this.env, addressOf(record), ownPlacement(this.ctx.id)).status();
      if (informer.ok) this.#subscription.noteTail(informer.value.eventLog.tail);
    }
    if (tail !== undefined) this.#subscription.noteTail(tail);
    return this.#with((subscription) => subscription.status()!);
  }

  /** The informer, and so the cluster, this subscription follows: what an access check needs, and nothing it writes. */
  async address(): Promise<Result<InformerAddress>> {
    return this.#with((subscription) => addressOf(subscription.store.get()!));
  }

  /** The subscription's counters, brought up to date first (delivery/delivery-counters.ts). */
  async metrics(): Promise<Result<SubscriptionMetrics>> {
    return this.#with((subscription) => ({
      ...subscription.metrics(),
      sqlRows: this.#db.rows.totals(),
      sliceKills: new SliceKills(this.ctx.storage.kv).counts().kills,
    }));
  }

  /** The rows this object's statements read and wrote (what /metrics reports; the cost tests read it in place). */
  get sqlRows(): RowTally {
    return this.#db.rows;
  }

  async deliveries(limit: number, token?: string): Promise<Result<ListAnswer<DeliveryAttempt>>> {
    return this.#with((subscription) => subscription.deliveries(limit, token));
  }

  async deadLetters(limit: number, token?: string): Promise<Result<ListAnswer<DeadLetter>>> {
    return this.#with((subscription) => subscription.deadLetters(limit, token));
  }

  async redeliver(eventId: string): Promise<Result<{ delivered: boolean; attempt: DeliveryAttempt }>> {
    const found = this.#with(() => null);
    if (!found.ok) return found;
    try {
      return ok(await this.#subscription.redeliver(eventId));
    } catch (error) {
      if (error instanceof ApiError) return fail(error.code, error.message);
      throw error;
    }
  }

  /**
   * A new secret of kind `signing` (default: the subscription's), answered as `create` answers it;
   * the old one is still signed with for `graceSeconds`, so a rotation from HMAC to Ed25519 sends
   * both signatures meanwhile.
   */
  async rotateSecret(
    graceSeconds: number,
    signing?: SigningKind,
  ): Promise<Result<{ id: string; signing: SigningKind; previousSecretExpiresAt: string } & ShownSecret>> {
    const record = this.#subscription.store.get();
    if (!record || this.#destroying) return fail("NotFound", "subscription not found");
    const kind = signing ?? record.spec.signing ?? "hmac";
    const { secret, shown } = await newSigningSecret(kind);
    const sealed = await sealSecret(this.#subscription, record.id, secret);
    if (!sealed.ok) return sealed;
    const rotated = this.#with((subscription) => ({ id: subscription.store.get()!.id, ...subscription.rotateSecret(sealed.value, graceSeconds * 1000, kind) }));
    if (!rotated.ok) return rotated;
    return ok({ id: rotated.value.id, signing: kind, ...shown, previousSecretExpiresAt: new Date(rotated.value.previousSecretExpiresAt).toISOString() });
  }

  /**
   * The public key of an Ed25519 subscription (derived from its sealed key: 503 without
   * ENCRYPTION_KEY, like any use of it); a Conflict for an HMAC one, which has none.
   */
  async signingKey(): Promise<Result<SigningKeyAnswer>> {
    const record = this.#subscription.store.get();
    if (!record || this.#destroying) return fail("NotFound", "subscription not found");
    const keys = await attemptAsync(() => this.#subscription.secrets.publicKeys(record, Date.now()));
    if (!keys.ok) return keys;
    const { current, previous } = keys.value;
    if (current === undefined) {
      return fail(
        "Conflict",
        "this subscription signs with HMAC (a shared whsec_ secret): it has no public key. Rotate it to Ed25519 with POST /subscriptions/{id}/secret {\"signing\": \"ed25519\"}",
      );
    }
    return ok({
      id: record.id,
      signing: "ed25519",
      publicKey: current,
      ...(previous === undefined ? {} : { previous: { publicKey: previous.publicKey, expiresAt: new Date(previous.until).toISOString() } }),
    });
  }

  /** Re-enables a subscription that a 410 disabled, or retries a failing one now (its backoff reset). */
  async enable(): Promise<Result<SubscriptionStatus>> {
    const found = this.#with(() => null);
    if (!found.ok) return found;
    this.#subscription.enable();
    await this.#wake();
    return ok(this.#subscription.status()!);
  }

  /** The informer's log grew to `tail`: deliver soon (never sooner than a pending retry). */
  async nudge(tail: number): Promise<void> {
    if (this.#destroying) return;
    // While the loop runs it reads the log (and notes the tail) anyway: just make it look again.
    if (this.#slice.running) {
      this.#nudged = true;
      return;
    }
    if (!this.#subscription.store.get()) return;
    this.#subscription.noteTail(tail);
    await this.#wake();
  }

  /**
   * Deletes this subscription and unregisters it from its informer. A declared one is deleted only
   * with `declaredToo` (INFORMERS changed, or its informer is going away).
   */
  async destroy(declaredToo = false): Promise<"deleted" | "not-found" | "declared"> {
    const record = this.#subscription.store.get();
    if (!record) return "not-found";
    if (record.declared && !declaredToo) return "declared";
    // Set before the first await: an alarm or nudge arriving during the awaits below must not
    // start a delivery or arm an alarm (#7.16).
    this.#destroying = true;
    try {
      await this.#slice.stop();
      await informerStub(this.env, addressOf(record), ownPlacement(this.ctx.id)).removeSubscriber(record.id);
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.#migrate(); // over empty storage: creates nothing until a new `create`
    } finally {
      this.#destroying = false;
    }
    return "deleted";
  }

  override async alarm(alarmInfo?: AlarmInvocationInfo): Promise<void> {
    if (this.#slice.running || this.#destroying) return;
    // A retry means the last run never returned (the slice catches its errors): it was killed. Told
    // by the platform rather than marked around each slice (slice-kills.ts) since a subscription
    // wakes for every nudge, and two writes a slice would cost more rows than its deliveries do
    // (issue 19). Only while it exists: a deleted one stores nothing.
    const record = alarmInfo?.isRetry ? this.#subscription.store.get() : undefined;
    if (record) {
      const kills = new SliceKills(this.ctx.storage.kv);
      kills.retried(Date.now());
      logger.warn("alarm slice killed", { ...subscriptionIdentity(record), kills: kills.counts().kills, retryCount: alarmInfo!.retryCount });
    }
    await this.#slice.run(
      "subscription",
      (signal) => this.#loop(Date.now() + SLICE_MS, signal),
      (next) => this.#rearm(next),
      () => {
        const record = this.#subscription.store.get();
        return record && subscriptionIdentity(record);
      },
    );
  }

  /** One slice of steps (step-loop.ts), with a fresh subrequest budget. */
  async #loop(deadline: number, signal: AbortSignal): Promise<number | null> {
    const budget = (this.#budget = new SubrequestBudget(subrequestLimitOf(this.env)));
    const takeNudge = () => {
      const nudged = this.#nudged;
      this.#nudged = false;
      return nudged;
    };
    try {
      const stopped = () => signal.aborted || this.#destroying;
      return await runSlice(() => this.#subscription.step(), { clock: systemClock, deadline, stopped, budgetEnded: () => budget.ended, takeNudge });
    } finally {
      this.#budget = undefined;
    }
  }

  /** `call` as one subrequest of the running slice's budget (uncounted outside a slice). */
  #spend<T>(call: () => Promise<T>): Promise<T> {
    return this.#budget ? this.#budget.spend(call) : call();
  }

  async #rearm(next: number | null | undefined): Promise<void> {
    let at = next;
    if (at === undefined) {
      try {
        at = this.#subscription.wakeAt();
      } catch {
        at = Date.now() + FALLBACK_REARM_MS;
      }
    }
    if (at === null) await this.ctx.storage.deleteAlarm();
    // setAlarm(now) from inside alarm() can be dropped (workerd #6866): always at least now + 1 ms.
    else await this.ctx.storage.setAlarm(Math.max(at, Date.now() + 1));
  }

  /** Brings the alarm forward to when the subscription may next deliver. */
  async #wake(): Promise<void> {
    if (this.#destroying) return;
    const at = this.#subscription.wakeAt();
    if (at === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  #migrate(): void {
    const spend = <T>(call: () => Promise<T>) => this.#spend(call);
    const feed = informerFeed(this.env, ownPlacement(this.ctx.id), spend, () => {
      const record = this.#subscription.store.get();
      return record && { informer: addressOf(record), id: record.id };
    });
    const send = httpSender(systemClock, (input, init) => spend(() => fetch(input, init)), egressRule(this.env, "WEBHOOK_ALLOWED_HOSTS"));
    // Each sendBatch is one subrequest too; the bindings and WEBHOOK_QUEUES are read at each attempt.
    const sendToQueue = queueSender(systemClock, () => queueTargets(this.env), spend);
    this.#subscription = new Subscription(this.#db, systemClock, systemRandom, feed, send, {
      sealer: () => sealerFor(this.env),
      sendToQueue,
    });
  }

  #with<T>(fn: (subscription: Subscription) => T): Result<T> {
    // One being deleted is gone already: nothing may write to it or arm its alarm.
    if (this.#destroying || !this.#subscription.store.get()) return fail("NotFound", "subscription not found");
    return attempt(() => fn(this.#subscription));
  }
}

/** The subscription's informer, read over RPC; each read is one subrequest (`spend`). */
function informerFeed(
  env: Env,
  placement: Placement,
  spend: <T>(call: () => Promise<T>) => Promise<T>,
  identity: () => { informer: InformerAddress; id: string } | undefined,
): Feed {
  // Both are fixed for the subscription's life: read them from storage once, not per read.
  let known: { informer: InformerAddress; id: string } | undefined;
  const target = () => {
    known ??= identity();
    if (known === undefined) throw new Error("the subscription does not exist");
    return known;
  };
  return {
    read: async (after, limit) => {
      const { informer, id } = target();
      return spend(async () => unwrap(await informerStub(env, informer, placement).readLog(after, limit, id)));
    },
    snapshot: (at, after, limit, namespace) =>
      spend(async () => unwrap(await informerStub(env, target().informer, placement).snapshot(at, after, limit, namespace))),
  };
}
