/** Killed slices (review B9): the durable mark, the count, and the shrink after kills in a row. */
import { runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { InformerObject } from "../../src/objects/informer-object.ts";
import { CLEAN_SLICES_BEFORE_GROWING, KILLS_BEFORE_SHRINKING, SliceKills, type SliceMarkStore } from "../../src/objects/slice-kills.ts";
import { newCluster, startInformer, status, waitFor, waitSleeping, waitSynced } from "../helpers/informer.ts";
import { parseMetrics, samples } from "../metrics/prometheus-parse.ts";
import type { SubscriptionObject } from "../../src/objects/subscription-object.ts";
import { unwrap } from "../../src/errors.ts";
import { subscribe, waitReceiverConverged } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { env } from "cloudflare:workers";

/** A key-value store in memory, as `ctx.storage.kv` behaves for one object (it survives a kill). */
function memoryStore(): SliceMarkStore {
  const values = new Map<string, unknown>();
  return { get: <T>(key: string) => values.get(key) as T | undefined, put: (key, value) => void values.set(key, value) };
}

describe("SliceKills", () => {
  it("counts a kill the platform reported by retrying the alarm, without a mark", () => {
    const kills = new SliceKills(memoryStore());
    kills.retried(5);
    expect(kills.counts()).toEqual({ kills: 1, lastKillAt: 5, shrunk: false });
  });

  it("counts nothing for slices that finish", async () => {
    const kills = new SliceKills(memoryStore());
    for (let i = 0; i < 3; i++) await kills.during(i, async () => undefined, () => expect.unreachable());
    expect(kills.counts()).toEqual({ kills: 0, lastKillAt: null, shrunk: false });
  });

  it("counts a slice that never reached its finally, seen by the next slice, and when it started", () => {
    const store = memoryStore();
    new SliceKills(store).begin(1_000); // killed: no finish
    const next = new SliceKills(store); // a new instance after the restart
    expect(next.begin(2_000)).toBe("killed");
    next.finish();
    expect(next.counts()).toEqual({ kills: 1, lastKillAt: 1_000, shrunk: false });
  });

  it(`shrinks after ${KILLS_BEFORE_SHRINKING} kills in a row, and stays shrunk for fewer than ${CLEAN_SLICES_BEFORE_GROWING} clean slices`, () => {
    const store = memoryStore();
    const kills = new SliceKills(store);
    kills.begin(1); // killed
    kills.begin(2); // killed (one in a row, seen here)
    expect(kills.counts().shrunk).toBe(false);
    kills.begin(3); // two in a row
    expect(kills.counts()).toEqual({ kills: 2, lastKillAt: 2, shrunk: true });
    kills.finish(); // the first clean slice
    for (let i = 1; i < CLEAN_SLICES_BEFORE_GROWING - 1; i++) {
      kills.begin(3 + i);
      kills.finish();
    }
    expect(kills.counts()).toEqual({ kills: 2, lastKillAt: 2, shrunk: true });
  });

  it(`grows back after ${CLEAN_SLICES_BEFORE_GROWING} clean slices in a row (review N10, test 10: shrunk stayed set for good)`, () => {
    const kills = new SliceKills(memoryStore());
    kills.begin(1); // killed
    kills.begin(2); // killed
    kills.begin(3); // two in a row: shrunk
    expect(kills.counts().shrunk).toBe(true);
    for (let i = 0; i < 100; i++) {
      kills.begin(10 + i); // the first counts the third slice killed
      kills.finish();
    }
    expect(kills.counts()).toEqual({ kills: 3, lastKillAt: 3, shrunk: false });
  });

  it("counts clean slices towards growing back only in a row: a kill between starts them over", () => {
    const kills = new SliceKills(memoryStore());
    for (let t = 1; t <= 3; t++) kills.begin(t); // shrunk, the third slice running
    for (let i = 0; i < CLEAN_SLICES_BEFORE_GROWING - 1; i++) {
      kills.finish();
      kills.begin(10 + i);
    }
    kills.begin(20); // the running slice was killed: the clean ones before it count no more
    for (let i = 0; i < CLEAN_SLICES_BEFORE_GROWING - 1; i++) {
      kills.finish();
      kills.begin(30 + i);
    }
    expect(kills.counts().shrunk).toBe(true);
    kills.finish();
    expect(kills.counts().shrunk).toBe(false);
  });

  it("does not count a slice that a deploy ended: it started under another version of the Worker (review N10)", () => {
    const store = memoryStore();
    new SliceKills(store, "version-1").begin(1); // running when version-2 was deployed
    const afterDeploy = new SliceKills(store, "version-2");
    expect(afterDeploy.begin(2)).toBe("deploy");
    new SliceKills(store, "version-3").begin(3); // and another deploy before it finished
    expect(afterDeploy.counts()).toEqual({ kills: 0, lastKillAt: null, shrunk: false });
    // A kill under one version is still a kill.
    const same = new SliceKills(store, "version-3");
    expect(same.begin(4)).toBe("killed");
    expect(same.begin(5)).toBe("killed");
    expect(same.counts()).toEqual({ kills: 2, lastKillAt: 4, shrunk: true });
  });

  it("counts a slice that never finished as killed where no version is known (no CF_VERSION_METADATA binding, or a mark older than it)", () => {
    const store = memoryStore();
    new SliceKills(store).begin(1); // no binding
    expect(new SliceKills(store, "version-1").begin(2)).toBe("killed"); // the mark names no version
    expect(new SliceKills(store).begin(3)).toBe("killed"); // the binding went away
    expect(new SliceKills(store).counts()).toEqual({ kills: 2, lastKillAt: 2, shrunk: true });
  });

  it("does not shrink for kills with finished slices between them", () => {
    const kills = new SliceKills(memoryStore());
    for (let i = 0; i < 3; i++) {
      kills.begin(i * 10); // killed
      kills.begin(i * 10 + 1); // sees it, finishes
      kills.finish();
    }
    expect(kills.counts()).toEqual({ kills: 3, lastKillAt: 20, shrunk: false });
  });
});

describe("InformerObject after killed slices", () => {
  it("counts them in its status and /metrics, and lists in pages at RV \"\" from then on", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
    // Asleep between watch windows: no slice runs while the test plays the killed ones.
    const { name, stub } = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(stub);
    await waitSleeping(stub);
    expect((await status(stub)).sliceKills).toEqual({ count: 0, lastAt: null, listsInPages: false });
    const killedAt = Date.now();
    await runInDurableObject(stub, async (_, state) => {
      // Two slices that began and never reached their finally (a CPU kill leaves exactly this).
      const marks = new SliceKills(state.storage.kv);
      marks.begin(killedAt - 1);
      marks.begin(killedAt);
    });
    // The next watch window answers 410: the relist that follows shows how lists are made now.
    await cluster.fault({ kind: "errorEvent", code: 410, reason: "Expired" });
    await cluster.clearRequests();
    await runInDurableObject(stub, async (instance: InformerObject, state) => {
      state.storage.sql.exec("UPDATE informer_state SET wake_at = 0"); // the window is due now
      await instance.alarm();
    });
    expect((await status(stub)).sliceKills).toEqual({ count: 2, lastAt: new Date(killedAt).toISOString(), listsInPages: true });
    await waitFor("a relist", async () => (await cluster.requests()).some((r) => r.query.watch === undefined));
    const lists = (await cluster.requests()).filter((r) => r.query.watch === undefined);
    expect(lists[0]!.query).toMatchObject({ resourceVersion: "", limit: "500" });
    await waitSynced(stub);
    const response = await exports.default.fetch(new Request("http://localhost/metrics"));
    const metrics = parseMetrics(await response.text());
    expect(samples(metrics, "edge_informer_slice_kills_total", { informer: name }).map((s) => s.value)).toEqual(["2"]);
  });
});

describe("InformerObject after a deploy", () => {
  it("does not count slices that deploys ended (they started under another version), and keeps lists whole (review N10)", async () => {
    expect(env.CF_VERSION_METADATA?.id).toEqual(expect.any(String)); // wrangler.toml's binding, as deployed
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
    const { stub } = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(stub);
    await waitSleeping(stub);
    await runInDurableObject(stub, async (_, state) => {
      // Two slices running when two deploys reset the object: what the platform leaves is the same as a kill's.
      new SliceKills(state.storage.kv, "an-earlier-version").begin(Date.now() - 1);
      new SliceKills(state.storage.kv, "the-version-before-this-one").begin(Date.now());
    });
    await cluster.fault({ kind: "errorEvent", code: 410, reason: "Expired" });
    await cluster.clearRequests();
    await runInDurableObject(stub, async (instance: InformerObject, state) => {
      state.storage.sql.exec("UPDATE informer_state SET wake_at = 0");
      await instance.alarm();
    });
    expect((await status(stub)).sliceKills).toEqual({ count: 0, lastAt: null, listsInPages: false });
    await waitFor("a relist", async () => (await cluster.requests()).some((r) => r.query.watch === undefined));
    const lists = (await cluster.requests()).filter((r) => r.query.watch === undefined);
    // One list at the last synced RV, as before the deploys, not pages at RV "" (a quorum read).
    expect(lists[0]!.query.resourceVersion).not.toBe("");
    expect(lists[0]!.query.limit).toBeUndefined();
    await waitSynced(stub);
  });
});

describe("SubscriptionObject after a killed slice", () => {
  it("counts the platform's retry of its alarm (the last run never returned) in its metrics and /metrics", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const { id, secret, stub: subscription } = await subscribe(name, hook, { replayExisting: true });
    // Caught up: its alarm is a poll a minute ahead, so no slice runs while the test plays the killed one.
    await waitReceiverConverged(hook, secret, cluster);
    await runInDurableObject(subscription(), async (instance: SubscriptionObject) => {
      await instance.alarm(); // a run of its own: not a kill
      await instance.alarm({ retryCount: 1, isRetry: true, scheduledTime: Date.now() }); // what the platform sends after a killed run
    });
    expect(unwrap(await subscription().metrics()).sliceKills).toBe(1);
    const response = await exports.default.fetch(new Request("http://localhost/metrics"));
    const metrics = parseMetrics(await response.text());
    expect(samples(metrics, "edge_informer_subscription_slice_kills_total", { subscription: id }).map((s) => s.value)).toEqual(["1"]);
  });
});

