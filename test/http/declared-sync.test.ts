/**
 * The declared-configuration sync a request waits for (src/http/app.ts ensureDeclaredInformers):
 * held at most DECLARED_SYNC_WAIT, so a sync stuck on one cluster's objects does not hold requests
 * for the others, and not retried on every request after a failure.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { DECLARED_SYNC_WAIT, ensureDeclaredInformers } from "../../src/http/app.ts";
import type { Env } from "../../src/env.ts";

/** An environment whose factory's sync answers only when told to. */
function stalledFactory(clusters: string) {
  let release!: (value?: unknown) => void;
  let calls = 0;
  const answered = new Promise((resolve) => (release = resolve));
  const factory = {
    syncDeclared: async () => {
      calls++;
      await answered;
      throw new Error("the factory could not reach an informer");
    },
  };
  const fake = { ...env, CLUSTERS: clusters, FACTORY: { getByName: () => factory } } as unknown as Env;
  return { env: fake, release: () => release(), calls: () => calls };
}

afterEach(() => {
  DECLARED_SYNC_WAIT.ms = 5_000;
});

describe("the declared sync a request waits for", () => {
  it("holds a request at most DECLARED_SYNC_WAIT, then serves it while the sync goes on", async () => {
    DECLARED_SYNC_WAIT.ms = 50;
    const stalled = stalledFactory(`{"stalled-${crypto.randomUUID().slice(0, 6)}": {"server": "https://a.example"}}`);
    // The sync never answers until released: both return only because the wait is bounded.
    await ensureDeclaredInformers(stalled.env);
    await ensureDeclaredInformers(stalled.env); // joins the same sync, does not start another
    expect(stalled.calls()).toBe(1);
    stalled.release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Failed: the next requests are not held for a new sync at once.
    await ensureDeclaredInformers(stalled.env);
    expect(stalled.calls()).toBe(1);
  });

  // Review B4: a sync whose request ended may never settle in a later request (the Worker cancels
  // an ended request's continuations); no later request may wait on it.
  it("does not hold a later request on a sync an earlier request started, even one that never settles", async () => {
    DECLARED_SYNC_WAIT.ms = 50;
    const stalled = stalledFactory(`{"never-${crypto.randomUUID().slice(0, 6)}": {"server": "https://a.example"}}`);
    const handedOver: Promise<unknown>[] = [];
    await ensureDeclaredInformers(stalled.env, (promise) => handedOver.push(promise)); // held up to 50 ms
    expect(handedOver).toHaveLength(1); // the first request keeps its sync alive past its response
    // A later request that waited on that sync (the old shared promise) would now be held an hour,
    // past this test's timeout: that they return at all says they do not wait on it.
    DECLARED_SYNC_WAIT.ms = 3_600_000;
    await ensureDeclaredInformers(stalled.env);
    await ensureDeclaredInformers(stalled.env);
    expect(stalled.calls()).toBe(1);
    stalled.release();
  });
});
