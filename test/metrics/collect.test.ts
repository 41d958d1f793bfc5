/**
 * collect (src/metrics/collect.ts) over objects the test plays: how many calls it has in flight at
 * once, and what it does with an object that never answers (review B6(c): an unbounded Promise.all
 * over every informer and subscription, each call waited on for ever).
 */
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env.ts";
import { collect, COLLECT_CONCURRENCY } from "../../src/metrics/collect.ts";

/** A deployment of `informers` informers with `subscriptions` subscriptions each, whose objects count the calls in flight. */
function deployment(informers: number, subscriptions: number, hung: (object: string) => boolean = () => false) {
  const calls = { inFlight: 0, most: 0, made: 0 };
  /** An answer after a turn of the event loop, so calls made together overlap. */
  const answer = async <T>(object: string, value: T): Promise<T> => {
    calls.made++;
    calls.inFlight++;
    calls.most = Math.max(calls.most, calls.inFlight);
    try {
      if (hung(object)) await new Promise(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1));
      return value;
    } finally {
      calls.inFlight--;
    }
  };
  const names = Array.from({ length: informers }, (_, i) => `informer-${i}`);
  const subscriptionIds = (informer: string) => Array.from({ length: subscriptions }, (_, j) => `${informer}-sub-${j}`);
  const env = {
    FACTORY: {
      getByName: () => ({
        list: async () => names.map((name) => ({ cluster: "default", name })),
        clusters: async () => [{ name: "default", source: "environment", server: "https://k8s.example", credentials: [], informers }],
      }),
    },
    INFORMER: {
      // The default cluster's informers are named for themselves (clusters/cluster.ts informerObjectName).
      getByName: (name: string) => ({
        metrics: () => answer(name, { ok: true, value: { name, subscriptions: subscriptionIds(name), progress: { eventLog: { tail: 10 } } } }),
        eventTimes: (seqs: number[]) => answer(name, { ok: true, value: Object.fromEntries(seqs.map((seq) => [seq, 0])) }),
      }),
    },
    SUBSCRIPTION: {
      getByName: (id: string) => ({
        metrics: () => answer(id, { ok: true, value: { id, cluster: "default", informer: id.replace(/-sub-\d+$/, ""), cursor: 5 } }),
      }),
    },
  } as unknown as Env;
  return { env, calls };
}

describe("collect", () => {
  it(`has at most ${COLLECT_CONCURRENCY} calls in flight at once, over every informer and subscription (review B6(c))`, async () => {
    const { env, calls } = deployment(20, 3);
    const snapshot = await collect(env, () => 0);
    expect(snapshot.errors).toBe(0);
    expect(snapshot.informers.map((i) => i.subscriptions.length)).toEqual(Array(20).fill(3));
    expect(calls.made).toBe(20 + 20 * 3 + 20); // each informer, each subscription, each lagging informer's event times
    expect(calls.most).toBeLessThanOrEqual(COLLECT_CONCURRENCY);
  });

  it("leaves out, and counts, an object that does not answer in time, and reads the others", async () => {
    const { env } = deployment(4, 1, (object) => object === "informer-2" || object === "informer-0-sub-0");
    const snapshot = await collect(env, () => 0, () => true, { callTimeoutMs: 20 });
    expect(snapshot.errors).toBe(2);
    expect(snapshot.informers.map((i) => [i.identity.informer, i.subscriptions.length])).toEqual([
      ["informer-0", 0],
      ["informer-1", 1],
      ["informer-3", 1],
    ]);
  });
});
