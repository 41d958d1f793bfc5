/**
 * Drives real SubscriptionObjects against the fake receiver: subscribe an endpoint to an informer,
 * and read back what the endpoint got — every request verified with the subscription's secret
 * (Standard Webhooks, via `verifyWebhook`), replayed into the receiver's view of the cache with
 * the ordering checks of DESIGN invariant 3.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { verifyWebhook } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/types.ts";
import { type SubscriptionSpecInput, subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import type { ReceiverEndpoint } from "../receiver/client.ts";
import { clusterVersions, sameMap, waitFor } from "./informer.ts";
import { keysGoingBack } from "./receiver-order.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";

export type SubscriptionStub = DurableObjectStub<import("../../src/objects/subscription-object.ts").SubscriptionObject>;

export async function subscribe(
  informer: string,
  hook: ReceiverEndpoint,
  spec: Partial<SubscriptionSpecInput> = {},
  cluster = "default",
): Promise<{ id: string; secret: string; stub: () => SubscriptionStub }> {
  const id = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
  const parsed = subscriptionSpecSchema.parse({ url: hook.url, ...spec });
  // Indexed first, as the API does: the HTTP routes answer only indexed subscriptions (#7.17).
  await env.FACTORY.getByName(FACTORY_NAME).indexSubscription(id, { cluster, name: informer });
  const created = unwrap(await env.SUBSCRIPTION.getByName(id).create(id, { cluster, name: informer }, parsed));
  // Stubs break after a simulated crash: always get a fresh one.
  // What a receiver verifies with: the HMAC secret, or an Ed25519 subscription's public key.
  return { id, secret: created.secret ?? created.publicKey, stub: () => env.SUBSCRIPTION.getByName(id) };
}

/**
 * Whether the object of subscription `id` stores anything: tables, indexes, an alarm. (Locally,
 * workerd opens an object's SQLite file when the object starts, so `listDurableObjectIds` lists
 * every object ever addressed, stored rows or not; the schema is what tells.)
 */
export async function subscriptionStored(id: string): Promise<boolean> {
  return runInDurableObject(env.SUBSCRIPTION.getByName(id), async (_, state) => {
    const schema = state.storage.sql.exec("SELECT name FROM sqlite_master").toArray();
    return schema.length > 0 || (await state.storage.getAlarm()) !== null;
  });
}

export interface ReceiverView {
  /** Every event received (acknowledged or not), in arrival order. */
  events: WebhookEvent[];
  /** The receiver's cache rebuilt from them: key → resourceVersion. */
  state: Map<string, string>;
  /** Violations: a key going back to an older resourceVersion, a sequence number skipped or reused for a new event. */
  problems: string[];
}

/** What `hook` received, verified and replayed. */
export async function receiverView(hook: ReceiverEndpoint, secret: string): Promise<ReceiverView> {
  const events: WebhookEvent[] = [];
  for (const request of await hook.requests()) events.push(...(await verifyWebhook(secret, request.body, request.headers)));
  const state = new Map<string, string>();
  const problems: string[] = keysGoingBack(events);
  let sequence = 0;
  const idOfSequence = new Map<number, string>();
  for (const event of events) {
    // Going back is only allowed for a resend of what was sent before (a batch whose 2xx was lost).
    if (event.sequence < sequence && idOfSequence.get(event.sequence) !== event.id) {
      problems.push(`sequence went back from ${sequence} to ${event.sequence} with a new event`);
    }
    // Sequence numbers are given to delivered events only, so a jump is an event lost.
    if (event.sequence > sequence + 1) problems.push(`sequence jumped from ${sequence} to ${event.sequence}`);
    idOfSequence.set(event.sequence, event.id);
    sequence = event.sequence;
    if (event.type === "delete") state.delete(event.key);
    else state.set(event.key, event.resourceVersion);
  }
  return { events, state, problems };
}

/** Waits until the receiver's rebuilt cache equals the cluster, and checks the ordering. */
export async function waitReceiverConverged(hook: ReceiverEndpoint, secret: string, cluster: FakeCluster, timeoutMs = 30_000) {
  let view: ReceiverView | undefined;
  let truth = new Map<string, string>();
  try {
    await waitFor(
      "the receiver to hold the cluster's state",
      async () => {
        truth = await clusterVersions(cluster);
        view = await receiverView(hook, secret);
        return sameMap(view.state, truth);
      },
      timeoutMs,
    );
  } catch (error) {
    expect(Object.fromEntries(view?.state ?? [])).toEqual(Object.fromEntries(truth));
    throw error;
  }
  expect(view!.problems).toEqual([]);
  return view!;
}
