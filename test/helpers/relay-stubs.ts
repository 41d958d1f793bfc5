/**
 * The watch relays of a cluster's pods informer, as the Worker reaches them: a watch goes to any of
 * them (k8s/watch-relay.ts pickRelay), so tests ask them all.
 */
import { env } from "cloudflare:workers";
import { relayStub } from "../../src/clusters/stubs.ts";
import { relaysOf } from "../../src/k8s/watch-relay.ts";

/** Fresh stubs each time: a restart breaks the stubs that reached the object before it. */
export function podRelays(cluster: string) {
  return Array.from({ length: relaysOf(env) }, (_, shard) => relayStub(env, { cluster, name: "pods" }, shard, {}));
}

/** Watchers open in the cluster's pods relays, each. */
export async function relayWatchers(cluster: string): Promise<number[]> {
  return Promise.all(podRelays(cluster).map((relay) => relay.watchers()));
}

/** Watchers open in the cluster's pods relays, in all. */
export async function relayedWatchers(cluster: string): Promise<number> {
  return (await relayWatchers(cluster)).reduce((a, b) => a + b, 0);
}

/** Whether any of the cluster's pods relays polls its informer now. */
export async function anyRelayPumping(cluster: string): Promise<boolean> {
  return (await Promise.all(podRelays(cluster).map((relay) => relay.pumping()))).some(Boolean);
}
