/**
 * Schedules for the webhook promises: a subscription (filtered or not, batched or not, replaying
 * the cache for a late subscriber or not, resyncing or not, sending to a URL or to a queue) stepped
 * over an informer's log (the FakeFeed) while keys change, its endpoint answers 2xx, 5xx, 410, times
 * out, hangs or kills the process mid-send (a queue: accepts, throws, hangs, or accepts as the
 * process dies), and the process is killed between steps. A kill drops the Subscription
 * instance; the next is built over the same storage, as the object's next incarnation is.
 * Afterwards every answer is 2xx and the subscription catches up: the receiver's state must be the
 * cluster's (what the subscription selects). Each subscription signs with HMAC or Ed25519 and
 * sends edge-informer JSON or CloudEvents (binary, structured), and may rotate its key to the other
 * kind mid-schedule (issue 32): the receiver verifies every request with the keys it holds.
 */
import fc from "fast-check";
import { DELIVERY_FORMATS, type DeliveryFormat } from "../../src/delivery/cloudevents.ts";
import { publicKeyOf } from "../../src/delivery/ed25519-keys.ts";
import type { SigningKind } from "../../src/delivery/subscription-spec.ts";
import { resolveSpec, subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { Subscription } from "../../src/delivery/subscription.ts";
import { FakeFeed } from "../helpers/fake-feed.ts";
import { FakeClock, fixedRandom } from "../helpers/fakes.ts";
import { KEY_COUNT, type Labels, nameOf } from "./cluster-model.ts";
import { KillableDb } from "./killable-db.ts";
import { same, show } from "./list-check.ts";
import { type Answer, ProcessDied, WebhookReceiver } from "./webhook-receiver.ts";
import { CheckQueue } from "./webhook-queue.ts";

export type WebhookCommand =
  | { kind: "change"; key: number; to: Labels | "deleted" }
  | { kind: "step"; count: number }
  | { kind: "answer"; with: Answer | "hang" }
  | { kind: "kill" }
  | { kind: "advance"; seconds: number }
  /** A new key of the other kind (HMAC ↔ Ed25519); the old one still signs for a minute. */
  | { kind: "rotate" };

export interface WebhookSchedule {
  spec: { maxBatchSize: number; web: boolean; replayExisting: boolean; resync: boolean; target: "url" | "queue"; signing: SigningKind; format: DeliveryFormat };
  /** Changes before the subscription is made (what a replay sends a late subscriber). */
  before: { key: number; to: Labels | "deleted" }[];
  commands: WebhookCommand[];
}

const change = fc.record({ key: fc.nat({ max: KEY_COUNT - 1 }), to: fc.constantFrom<Labels | "deleted">("web", "db", "deleted") });

export const webhookSchedule: fc.Arbitrary<WebhookSchedule> = fc.record({
  spec: fc
    .record({
      maxBatchSize: fc.constantFrom(1, 1, 3),
      web: fc.boolean(),
      replayExisting: fc.boolean(),
      resync: fc.boolean(),
      target: fc.constantFrom<"url" | "queue">("url", "queue"),
      signing: fc.constantFrom<SigningKind>("hmac", "ed25519"),
      format: fc.constantFrom(...DELIVERY_FORMATS),
    })
    // Binary mode has no batch (the API refuses the pair): a batching subscription is structured.
    // A queue's messages are neither signed nor shaped: its signing and format are not used.
    .map((spec) => (spec.format === "cloudevents-binary" && spec.maxBatchSize > 1 ? { ...spec, format: "cloudevents-structured" as const } : spec)),
  before: fc.array(change, { maxLength: 6 }),
  commands: fc.array(
    fc.oneof(
      { arbitrary: change.map((c) => ({ kind: "change" as const, ...c })), weight: 8 },
      { arbitrary: fc.record({ kind: fc.constant("step" as const), count: fc.integer({ min: 1, max: 6 }) }), weight: 6 },
      { arbitrary: fc.record({ kind: fc.constant("answer" as const), with: fc.constantFrom<Answer | "hang">("2xx", "5xx", "timeout", "410", "die", "hang") }), weight: 3 },
      { arbitrary: fc.constant({ kind: "kill" as const }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant("advance" as const), seconds: fc.integer({ min: 1, max: 70 }) }), weight: 2 },
      { arbitrary: fc.constant({ kind: "rotate" as const }), weight: 1 },
    ),
    { minLength: 1, maxLength: 40 },
  ),
});

const SECRET = `whsec_${btoa("a test secret of 24 bytes")}`;
/** Ed25519 private keys (`whsk_` + 32 bytes): the first, and the one a second rotation to Ed25519 brings. */
const SIGNING_KEYS = [`whsk_${btoa("an ed25519 test seed, 32 bytes!!")}`, `whsk_${btoa("another ed25519 seed of 32 bytes")}`];
const SECRETS = [SECRET, `whsec_${btoa("another secret, 24 bytes")}`];
/** How long a rotated key still signs (the grace period). */
const ROTATION_GRACE_MS = 60_000;

/** What the receiver holds to verify a stored secret: an HMAC secret itself, an Ed25519 key's public half. */
const verifyingKey = async (secret: string) => (secret.startsWith("whsk_") ? publicKeyOf(secret) : secret);
/** Long enough that no event is dead-lettered within a schedule: a dead letter is a promised loss. */
const RETRY_BUDGET_SECONDS = 7 * 24 * 3600;
const CATCH_UP_STEPS = 400;

/** Applies a change to the feed as the informer would log it. */
function apply(feed: FakeFeed, c: { key: number; to: Labels | "deleted" }): void {
  const key = `default/${nameOf(c.key)}`;
  if (c.to === "deleted") {
    if (feed.objects.has(key)) feed.delete(key);
  } else feed.put(key, { app: c.to });
}

export async function runWebhookSchedule(storage: DurableObjectStorage, schedule: WebhookSchedule): Promise<string[]> {
  const violations: string[] = [];
  const feed = new FakeFeed();
  for (const c of schedule.before) apply(feed, c);
  const clock = new FakeClock();
  // The key the receiver verifies with: the first, then each rotation's. Every attempt after a
  // rotation is signed with the new key (the old one too during its grace period), whatever was
  // under way: a request the newest key does not verify is a violation.
  let kind = schedule.spec.signing;
  const rotations = { hmac: 0, ed25519: 0 };
  const nextSecret = (k: SigningKind) => (k === "hmac" ? SECRETS : SIGNING_KEYS)[rotations[k]++ % 2]!;
  const firstSecret = nextSecret(kind);
  const keys = [await verifyingKey(firstSecret)];
  const receiver = new WebhookReceiver(
    { issued: (key, rv) => feed.events.some((e) => e.key === key && e.resourceVersion === rv) },
    { keys: () => keys.slice(0, 1), now: () => clock.now() },
    violations,
  );
  let hang: () => void = () => {};
  let hung = new Promise<"hung">(() => {});
  const send = (request: Parameters<WebhookReceiver["send"]>[0]) => {
    if (receiver.script[0] === ("hang" as Answer)) {
      receiver.script.shift();
      hang();
      return new Promise<never>(() => {}); // no answer, ever: the kill comes first
    }
    return receiver.send(request);
  };
  const queue = new CheckQueue(receiver, () => hang());
  const sendToQueue = queue.sender(clock);
  let db = new KillableDb(storage);
  const make = () => new Subscription(db, clock, fixedRandom(0.5), feed, send, { sendToQueue });
  let subscription = make();
  const parsed = subscriptionSpecSchema.parse({
    ...(schedule.spec.target === "queue" ? { queue: CheckQueue.BINDING } : { url: "https://hooks.example/check" }),
    maxBatchSize: schedule.spec.maxBatchSize,
    replayExisting: schedule.spec.replayExisting,
    retryBudgetSeconds: RETRY_BUDGET_SECONDS,
    ...(schedule.spec.web ? { labelSelector: "app=web" } : {}),
    // A queue's messages are neither signed nor shaped (the API refuses the fields with `queue`).
    ...(schedule.spec.target === "url" ? { signing: schedule.spec.signing, format: schedule.spec.format } : {}),
  });
  const subscribedAt = feed.tail;
  subscription.create({ id: "sub_check", cluster: "default", informer: "pods", secret: firstSecret, tail: feed.tail, spec: { ...resolveSpec(parsed, 0), resyncPeriodSeconds: schedule.spec.resync ? 60 : 0 } });
  const kill = () => {
    db.kill();
    db = new KillableDb(storage);
    subscription = make();
  };
  /** One step; a kill when the process died in it or its send hangs. */
  const step = async () => {
    hung = new Promise<"hung">((resolve) => (hang = () => resolve("hung")));
    const result = await Promise.race([subscription.step(), hung]).catch((error: unknown) => {
      if (error instanceof ProcessDied) return "died" as const;
      throw error;
    });
    if (result === "hung" || result === "died") {
      kill();
      return undefined;
    }
    return result;
  };
  for (const c of schedule.commands) {
    switch (c.kind) {
      case "change":
        apply(feed, c);
        break;
      case "step":
        for (let i = 0; i < c.count; i++) if ((await step())?.kind !== "progress") break;
        break;
      case "answer":
        receiver.script.push(c.with as Answer);
        break;
      case "kill":
        kill();
        break;
      case "advance":
        clock.advance(c.seconds * 1000);
        break;
      case "rotate": {
        kind = kind === "hmac" ? "ed25519" : "hmac";
        const secret = nextSecret(kind);
        keys.unshift(await verifyingKey(secret));
        subscription.rotateSecret(secret, ROTATION_GRACE_MS, kind);
        break;
      }
    }
  }
  // Catch up: every answer a 2xx, a subscription disabled by a 410 enabled again, time moved to
  // whatever it waits for, until its cursor is at the log's tail and nothing is left to send.
  receiver.script.length = 0;
  if (subscription.status()?.disabledReason) subscription.enable();
  for (let i = 0; i < CATCH_UP_STEPS; i++) {
    const result = await step();
    if (result === undefined || result.kind === "progress") continue;
    const caughtUp = (subscription.status()?.cursor ?? 0) >= feed.tail;
    if (result.kind === "idle" && caughtUp && (result.until === null || schedule.spec.resync)) break;
    clock.advance(Math.max(1, (result.until ?? clock.now() + 1_000) - clock.now()));
  }
  // What the receiver must hold: every object selected now, at its RV; without a replay only those
  // changed since it subscribed (a resync may have told it of others too: they must be right).
  const truth = new Map<string, number>();
  const required = new Map<string, number>();
  for (const [key, object] of feed.objects) {
    const labels = (JSON.parse(object.body) as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {};
    if (schedule.spec.web && labels.app !== "web") continue;
    truth.set(key, Number(object.rv));
    if (schedule.spec.replayExisting || object.seq > subscribedAt) required.set(key, Number(object.rv));
  }
  const held = new Map([...receiver.state].filter(([key]) => required.has(key) || receiver.state.get(key) !== truth.get(key)));
  if (!same(held, required)) violations.push(`the receiver holds ${show(receiver.state)}, the cluster ${show(truth)} (cursor ${subscription.status()?.cursor}, tail ${feed.tail})`);
  return violations;
}
