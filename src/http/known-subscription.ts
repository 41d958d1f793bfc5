/**
 * Which informer a subscription id follows, from the factory's index
 * (delivery/subscription-registry.ts) — never from the subscription's own object, so an unknown id
 * is a 404 that addresses no Durable Object (reaching one by name brings it into existence, #7.17).
 *
 * Each isolate remembers the ids it found (bounded), so reads of a subscription do not all pass
 * through the one factory object. A subscription deleted through another isolate stays remembered
 * here; its object then answers NotFound itself and stores nothing.
 */
import type { InformerAddress } from "../clusters/cluster.ts";
import { unwrap } from "../errors.ts";
import { factoryStub } from "../objects/factory-stub.ts";
import type { AppEnv } from "./app-env.ts";

/** Ids remembered at most; past it the memory starts over (a remembered id only saves one RPC). */
const MAX_REMEMBERED = 10_000;
const remembered = new Map<string, InformerAddress>();

/** The informer subscription `id` follows, or undefined when no such subscription exists. */
export async function knownSubscription(env: AppEnv["Bindings"], id: string): Promise<InformerAddress | undefined> {
  const cached = remembered.get(id);
  if (cached) return cached;
  const found = await factoryStub(env).subscription(id);
  if (found === "absent") return undefined;
  // Not indexed yet (an upgrade's one-time copy is not done): the object answers, as before the index.
  const address = found === "unindexed" ? unwrap(await env.SUBSCRIPTION.getByName(id).address()) : found;
  rememberSubscription(id, address);
  return address;
}

export function rememberSubscription(id: string, address: InformerAddress): void {
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(id, { cluster: address.cluster, name: address.name });
}

/** A subscription was deleted through this isolate. */
export function forgetSubscription(id: string): void {
  remembered.delete(id);
}
