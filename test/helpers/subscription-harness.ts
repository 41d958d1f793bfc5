/**
 * A Subscription (src/delivery/subscription.ts) over a test's SQLite, an in-memory feed and a
 * scripted endpoint, for unit tests of delivery: `make()` builds another instance over the same
 * storage, which is what a crash or a Durable Object restart leaves (memory gone, storage kept).
 */
import { expect } from "vitest";
import { verifyWebhook } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/types.ts";
import { WINDOW_MS } from "../../src/delivery/outbox-window.ts";
import type { DeliveryRequest, SendResult } from "../../src/delivery/sender.ts";
import { type SubscriptionSpecInput, subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { type StepResult, Subscription, type SubscriptionOptions } from "../../src/delivery/subscription.ts";
import type { Db } from "../../src/sql.ts";
import { FakeFeed } from "./fake-feed.ts";
import { FakeClock, fixedRandom } from "./fakes.ts";

export const SECRET = `whsec_${btoa("a test secret of 24 bytes")}`;

export interface Received {
  request: DeliveryRequest;
  events: WebhookEvent[];
}

/** An endpoint answering from a script (then 204), verifying every request it gets. */
export class Endpoint {
  readonly received: Received[] = [];
  script: SendResult[] = [];
  async send(request: DeliveryRequest): Promise<SendResult> {
    const events = await verifyWebhook(SECRET, request.body, request.headers as unknown as Record<string, string>);
    this.received.push({ request, events });
    return this.script.shift() ?? { status: 204, durationMs: 1 };
  }
  get events(): WebhookEvent[] {
    return this.received.flatMap((r) => r.events);
  }
}

/** A subscription created over `db` (id sub_0123456789, informer default/pods), and `make` for a restart. */
export function setup(db: Db, spec: Partial<SubscriptionSpecInput> = {}, feed = new FakeFeed(), options: SubscriptionOptions = {}) {
  const clock = new FakeClock(Date.now()); // signatures are checked against real time
  const endpoint = new Endpoint();
  const make = () => new Subscription(db, clock, fixedRandom(0.5), feed, (r) => endpoint.send(r), options);
  const subscription = make();
  const parsed = subscriptionSpecSchema.parse({ url: "https://hooks.example/a", ...spec });
  subscription.create({
    id: "sub_0123456789",
    cluster: "default",
    informer: "pods",
    secret: SECRET,
    tail: feed.tail,
    spec: { ...parsed, resyncPeriodSeconds: parsed.resyncPeriodSeconds ?? 0 },
  });
  // Another instance over the same storage whose process dies, while `dying.now`, after its POST
  // reached the endpoint and before it heard the answer (what a kill -9 mid-delivery leaves).
  const dying = { now: false };
  const makeDying = () =>
    new Subscription(db, clock, fixedRandom(0.5), feed, async (r) => {
      const result = await endpoint.send(r);
      if (dying.now) throw new Error("the process died before the answer was stored");
      return result;
    }, options);
  return { feed, clock, endpoint, subscription, make, dying, makeDying };
}

/** Steps until the subscription waits or idles; returns that result. */
export async function drain(subscription: Subscription, max = 10_000): Promise<StepResult> {
  for (let i = 0; i < max; i++) {
    const result = await subscription.step();
    if (result.kind !== "progress") return result;
  }
  throw new Error("the subscription never settled");
}

/** A feed whose log holds `count` events from before the subscription (so that its position is a recent one). */
export function withHistory(count: number): FakeFeed {
  const feed = new FakeFeed();
  feed.history(count);
  return feed;
}

/**
 * Delivers one event (`key`, put now unless it is in the log already) and stores its
 * acknowledgement: the instance has then stored one, so its windows of log events stay in memory.
 */
export async function storedOne(subscription: Subscription, feed: FakeFeed, clock: FakeClock, key = "default/a", labels: Record<string, string> = {}): Promise<void> {
  if (!feed.objects.has(key)) feed.put(key, labels);
  await drain(subscription);
  clock.advance(WINDOW_MS);
  await drain(subscription);
  expect(subscription.store.get()!.position.cursor).toBe(feed.tail);
}

export const summary = (events: WebhookEvent[]) => events.map((e) => `${e.type} ${e.key}@${e.resourceVersion}`);
