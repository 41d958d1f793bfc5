/**
 * The Durable Objects of a cluster: an informer's, reached by its address (clusters/cluster.ts
 * `informerObjectName`), and a subscription's, by its id — each in its cluster's placement
 * (placement.ts): in its jurisdiction, and created near its location hint. A caller without the
 * placement reaches the right object only in a cluster without a jurisdiction.
 */
import type { Env } from "../env.ts";
import { type InformerAddress, informerObjectName } from "./cluster.ts";
import { type Placement, placedStub } from "./placement.ts";

export function informerStub(env: Pick<Env, "INFORMER">, address: InformerAddress, placement?: Placement) {
  return placedStub(env.INFORMER, informerObjectName(address), placement);
}

/** Watch relay `shard` of an informer (objects/watch-relay-object.ts), in its cluster's placement. */
export function relayStub(env: Pick<Env, "RELAY">, address: InformerAddress, shard: number, placement?: Placement) {
  return placedStub(env.RELAY, `${informerObjectName(address)}#${shard}`, placement);
}

export function subscriptionStub(env: Pick<Env, "SUBSCRIPTION">, id: string, placement?: Placement) {
  return placedStub(env.SUBSCRIPTION, id, placement);
}
