/**
 * Durability (DESIGN invariants 1, 2, 7): evict or crash the informer before, during and after a
 * list, mid-watch and mid-relist. Whatever the instant, the cache must end equal to the cluster and
 * the event log must replay to the same state with no event lost or applied twice.
 *
 * An eviction is graceful (it waits for the running alarm to finish its slice); a crash
 * (`abortAllDurableObjects`) tears every object down at once, mid-transaction-sequence, and
 * breaks existing stubs — so these tests always address the informer by name.
 */
import { abortAllDurableObjects, evictDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pod } from "../fake-apiserver/client.ts";
import {
  type InformerStub,
  clusterVersions,
  expectLogReplaysTo,
  newCluster,
  readWholeLog,
  startInformer,
  status,
  waitConverged,
  waitFor,
  waitSynced,
} from "../helpers/informer.ts";

type Interrupt = (name: string) => Promise<void>;

const informer = (name: string): InformerStub => env.INFORMER.getByName(name);

/** Evicts the object, then does what the cron does: re-arm a missing alarm. */
const evict: Interrupt = async (name) => {
  await evictDurableObject(informer(name)).catch(() => {}); // not running at this instant: nothing to evict
  await informer(name).ensureRunning();
};

/** Crashes every object at once, then lets the cron re-arm. */
const crash: Interrupt = async (name) => {
  await abortAllDurableObjects().catch(() => {}); // the abort also rejects into this call
  await informer(name).ensureRunning();
};

const interrupts: [string, Interrupt][] = [
  ["evictions", evict],
  ["crashes", crash],
];

async function expectConsistent(name: string, cluster: Awaited<ReturnType<typeof newCluster>>) {
  await waitConverged(informer(name), cluster);
  const events = await readWholeLog(informer(name));
  expectLogReplaysTo(events, await clusterVersions(cluster));
  return events;
}

describe("durability", () => {
  it.each(interrupts)("survives %s right after being configured, before the first list", async (_, interrupt) => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 5 });
    const { name } = await startInformer(cluster);
    await interrupt(name);
    const events = await expectConsistent(name, cluster);
    expect(events.filter((e) => e.type === "add")).toHaveLength(10);
  });

  it.each(interrupts)("survives %s during a paginated list, adding each object exactly once", async (_, interrupt) => {
    const cluster = await newCluster({ watchCache: false }); // so the RV "0" list is paginated
    await cluster.seed({ namespaces: 3, podsPerNamespace: 20 });
    await cluster.fault({ kind: "delay", on: "list", ms: 60, count: 1_000 });
    const { name } = await startInformer(cluster, { pageSize: 5 });
    let duringList = 0;
    for (let i = 0; i < 4; i++) {
      const s = await status(informer(name));
      if (s.synced) break;
      if (s.watch.state === "listing") duringList++;
      await interrupt(name);
      await new Promise((resolve) => setTimeout(resolve, 150 + 50 * i));
    }
    expect(duringList).toBeGreaterThan(0);
    await cluster.clearFaults();
    const events = await expectConsistent(name, cluster);
    expect(events.filter((e) => e.type === "add")).toHaveLength(60);
    expect(events.every((e) => e.type === "add" && e.initialList)).toBe(true);
  });

  it.each(interrupts)("survives %s mid-watch under churn", async (_, interrupt) => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 3, podsPerNamespace: 10 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    for (let round = 0; round < 5; round++) {
      const churn = cluster.churn({ seed: 100 + round, operations: 40 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      await interrupt(name);
      await churn;
    }
    await expectConsistent(name, cluster);
  });

  it.each(interrupts)("survives %s mid-relist, announcing each missed change once", async (_, interrupt) => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 15 });
    const { name, stub } = await startInformer(cluster, { pageSize: 4 });
    await waitSynced(stub);
    const before = (await status(stub)).eventLog.tail;
    await cluster.fault({ kind: "status", on: "watch", code: 500, count: 1_000 });
    await cluster.fault({ kind: "delay", on: "list", ms: 80, count: 1_000 });
    await cluster.closeWatches();
    await cluster.create("pods", pod({ name: "late", namespace: "ns-0" }));
    await waitFor("the relist", async () => (await status(informer(name))).watch.state === "listing");
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await interrupt(name);
    }
    await cluster.clearFaults();
    const events = await expectConsistent(name, cluster);
    expect(events.filter((e) => e.seq > before).map((e) => [e.type, e.key])).toEqual([["add", "ns-0/late"]]);
  });

  it("keeps running after a crash lost its alarm: the cron re-arms it (invariant 7)", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    await crash(name);
    await cluster.create("pods", pod({ name: "after-crash", namespace: "ns-0" }));
    await expectConsistent(name, cluster);
  });
});
