/**
 * InformerObject against the fake API server: initial sync, watch, relists, and the request
 * sequence client-go would make (reference §8.1–8.4), through the real Durable Object and alarms.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type FakeCluster, pod } from "../fake-apiserver/client.ts";
import { readLines } from "../helpers/watch-lines.ts";
import {
  cacheVersions,
  clusterVersions,
  expectLogReplaysTo,
  newCluster,
  readWholeLog,
  startInformer,
  status,
  waitConverged,
  waitFor,
  waitSleeping,
  waitSynced,
} from "../helpers/informer.ts";

describe("InformerObject", () => {
  it("lists at RV 0 with limit 500, then watches from the list's RV with bookmarks and a timeout", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 3 });
    const { stub } = await startInformer(cluster, { watchTimeoutSeconds: undefined });
    const synced = await waitSynced(stub);
    expect(synced.objects).toBe(6);
    const requests = await waitFor("a watch request", async () => {
      const all = (await cluster.requests()).filter((r) => r.path.endsWith("/pods"));
      return all.length >= 2 && all;
    });
    expect(requests[0]!.query).toMatchObject({ resourceVersion: "0", limit: "500" });
    expect(requests[1]!.query).toMatchObject({
      watch: "true",
      resourceVersion: synced.lastSyncResourceVersion,
      allowWatchBookmarks: "true",
    });
    const watching = await waitFor("the watch to show", async () => {
      const s = await status(stub);
      return s.watch.state === "watching" && s.watch.since !== null && s;
    });
    expect(Date.parse(watching.watch.since!)).toBeLessThanOrEqual(Date.now());
    const timeout = Number(requests[1]!.query.timeoutSeconds);
    expect(timeout).toBeGreaterThanOrEqual(300);
    expect(timeout).toBeLessThan(600);
  });

  it("turns the initial list into adds marked initialList, and watch events into add, update and delete", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "ns" }));
    const { stub } = await startInformer(cluster);
    await waitSynced(stub);
    await cluster.create("pods", pod({ name: "b", namespace: "ns" }));
    await cluster.update("pods", { ...pod({ name: "a", namespace: "ns" }), status: { phase: "Succeeded" } });
    await cluster.delete("pods", pod({ name: "b", namespace: "ns" }));
    await waitConverged(stub, cluster);
    const events = await readWholeLog(stub);
    // Per key in the order it happened; across keys the DeltaFIFO orders by each key's first
    // pending delta (client-go delta_fifo.go, reference §3.9), so only per-key order is asserted.
    const perKey = (key: string) => events.filter((e) => e.key === key).map((e) => [e.type, e.initialList]);
    expect(perKey("ns/a")).toEqual([
      ["add", true],
      ["update", false],
    ]);
    expect(perKey("ns/b")).toEqual([
      ["add", false],
      ["delete", false],
    ]);
    const update = events.find((e) => e.type === "update")!;
    expect(JSON.parse(update.oldObject!).status.phase).not.toBe("Succeeded");
    expect(JSON.parse(events[0]!.object!).metadata.managedFields).toBeUndefined();
    expect(JSON.parse(events[0]!.object!).kind).toBe("Pod"); // list items get their TypeMeta back
  });

  it("announces only real changes after a relist (invariant 5)", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 5 });
    const { stub } = await startInformer(cluster);
    await waitSynced(stub);
    const before = (await status(stub)).eventLog.tail;
    const [first, second] = (await cluster.state("pods")).items as [KubeObject, KubeObject];
    // the watch fails from now on, so the changes below can only be learnt by relisting
    await cluster.fault({ kind: "status", on: "watch", code: 500, count: 1_000 });
    await cluster.closeWatches();
    await cluster.update("pods", { ...first, metadata: { ...first.metadata, labels: { changed: "yes" } } });
    await cluster.delete("pods", second);
    await cluster.create("pods", pod({ name: "new-one", namespace: first.metadata.namespace }));
    await waitConverged(stub, cluster);
    const events = await readWholeLog(stub, before);
    expect(events.map((e) => [e.type, e.key, e.finalStateUnknown]).sort()).toEqual(
      [
        ["add", `${first.metadata.namespace}/new-one`, false],
        ["delete", `${second.metadata.namespace}/${second.metadata.name}`, true],
        ["update", `${first.metadata.namespace}/${first.metadata.name}`, false],
      ].sort(),
    );
    expect((await status(stub)).relists).toBeGreaterThan(0);
    await cluster.clearFaults();
  });

  it("relists at once at RV \"\" when the server has not caught up with our RV (504 too large)", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    const { stub } = await startInformer(cluster);
    const { lastSyncResourceVersion } = await waitSynced(stub);
    await cluster.fault({ kind: "status", on: "watch", code: 500, count: 1_000 });
    await cluster.fault({ kind: "tooLargeRv" });
    await cluster.clearRequests();
    await cluster.closeWatches();
    const lists = await waitFor("a list at RV \"\"", async () => {
      const found = (await cluster.requests()).filter((r) => r.query.watch === undefined);
      return found.some((r) => r.query.resourceVersion === "") && found;
    });
    // Without a backoff before the retry: test/cache/reflector.test.ts "relists at once at RV \"\"
    // after a list fails with 504 …" holds that on a simulated clock (the retry is due at once).
    expect(lists.slice(0, 2).map((r) => r.query.resourceVersion)).toEqual([lastSyncResourceVersion, ""]);
    await cluster.clearFaults();
    await waitConverged(stub, cluster);
  });

  it("pages through a list with continue tokens and falls back to a full list when one expires", async () => {
    const cluster = await newCluster({ watchCache: false }); // RV "0" lists are paginated only without the watch cache
    await cluster.seed({ namespaces: 3, podsPerNamespace: 10 });
    await cluster.fault({ kind: "expireContinue" });
    const { stub } = await startInformer(cluster, { pageSize: 7 });
    await waitSynced(stub);
    const lists = (await cluster.requests()).filter((r) => r.query.watch === undefined);
    expect(lists.map((r) => [r.query.resourceVersion, r.query.limit, r.query.continue !== undefined])).toEqual([
      ["0", "7", false],
      [undefined, "7", true], // expired
      // the full list: at "" (quorum), since the initial list's first pages are already in the
      // cache and a lagging watch cache must not take them back in time (issue 7 item 2)
      ["", undefined, false],
    ]);
    expect(await cacheVersions(stub)).toEqual(await clusterVersions(cluster));
  });

  it("keeps answering queries from the last complete state while a relist is staged", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 20 });
    const { stub } = await startInformer(cluster, { pageSize: 5 });
    await waitSynced(stub);
    const complete = await cacheVersions(stub);
    await cluster.fault({ kind: "status", on: "watch", code: 500, count: 1_000 });
    await cluster.fault({ kind: "delay", on: "list", ms: 300, count: 1_000 });
    await cluster.closeWatches();
    await waitFor("the relist to be under way", async () => (await status(stub)).watch.state === "listing");
    expect(await cacheVersions(stub)).toEqual(complete);
    await cluster.clearFaults();
    await waitConverged(stub, cluster);
  });

  it("indexes by configured field paths and keeps indexes right through updates", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "x", nodeName: "n1", labels: { app: "web" } }));
    await cluster.create("pods", pod({ name: "b", namespace: "x", nodeName: "n2", labels: { app: "db" } }));
    const { stub } = await startInformer(cluster, { indexers: { byNode: "spec.nodeName", byApp: "metadata.labels.app" } });
    await waitSynced(stub);
    await cluster.update("pods", pod({ name: "b", namespace: "x", nodeName: "n1", labels: { app: "db" } }));
    await waitConverged(stub, cluster);
    expect(unwrap(await stub.indexValues("byNode")).value.values).toEqual(["n1"]);
    const byNode = unwrap(await stub.byIndex("byNode", "n1", {})).value.items.map((t) => JSON.parse(t).metadata.name);
    expect(byNode).toEqual(["a", "b"]);
    expect(unwrap(await stub.indexValues("namespace")).value.values).toEqual(["x"]);
  });

  it("replays nothing twice and loses nothing: the log rebuilds the cluster state", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 2, podsPerNamespace: 10 });
    const { stub } = await startInformer(cluster);
    await waitSynced(stub);
    await cluster.churn({ seed: 7, operations: 150 });
    await waitConverged(stub, cluster);
    expectLogReplaysTo(await readWholeLog(stub), await clusterVersions(cluster));
  });

  it("rebuilds the indexes when its indexers change, without relisting", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "x", nodeName: "n1", labels: { app: "web" } }));
    const { name, stub } = await startInformer(cluster, { indexers: { byNode: "spec.nodeName" } });
    await waitSynced(stub);
    const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3, indexers: { byApp: "metadata.labels.app" } }, name);
    unwrap(await stub.configure(spec, { server: cluster.url }));
    expect(unwrap(await stub.indexValues("byApp")).value.values).toEqual(["web"]);
    expect(await stub.indexValues("byNode")).toMatchObject({ ok: false, error: { code: "NotFound" } });
    expect((await status(stub)).relists).toBe(0);
  });

  it("drops configured fields and managedFields before storing", async () => {
    const cluster = await newCluster();
    const annotated = pod({ name: "a", namespace: "x" });
    annotated.metadata.annotations = { "kubectl.kubernetes.io/last-applied-configuration": "{...}", keep: "me" };
    await cluster.create("pods", annotated);
    const { stub } = await startInformer(cluster, {
      transform: { dropFields: ["metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']", "status"] },
    });
    await waitSynced(stub);
    const stored = JSON.parse(unwrap(await stub.getObject("x/a")).value);
    expect(stored.metadata.annotations).toEqual({ keep: "me" });
    expect(stored.status).toBeUndefined();
    expect(stored.metadata.managedFields).toBeUndefined();
  });

  it("leaves a live watch alone when configured again with the same spec", async () => {
    const cluster = await newCluster();
    const { name, stub } = await startInformer(cluster, { watchTimeoutSeconds: 60 });
    // Open at the server, not only "watching" in the status (set before the request goes out).
    await waitFor("the watch", async () => (await status(stub)).watch.state === "watching" && (await cluster.info()).openWatches === 1);
    await cluster.clearRequests();
    const again = unwrap(await stub.configure(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 60 }, name), { server: cluster.url }));
    expect(again.created).toBe(false);
    // A change made after it reaches the cache, and still no list or watch was asked for: the watch
    // open before brought it (not a pause that a slow machine stretches).
    await cluster.create("pods", pod({ name: "after-configure", namespace: "x" }));
    await waitConverged(stub, cluster);
    const asked = (await cluster.requests()).filter((r) => r.verb === "list" || r.verb === "watch");
    expect(asked, JSON.stringify(asked)).toEqual([]);
  });

  it("stops and forgets everything when deleted", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 2 });
    const { stub } = await startInformer(cluster);
    await waitSynced(stub);
    await stub.destroy();
    const after = await stub.status();
    expect(after.ok).toBe(false);
    expect(await stub.ensureRunning()).toBe(false);
  });

  it("applies a transform change to every cached object, including unchanged ones (issue 7 item 8)", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "x", nodeName: "n1" }));
    await cluster.create("pods", pod({ name: "b", namespace: "x", nodeName: "n2" }));
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3, transform: { dropFields: ["spec.nodeName"] } }, name);
    unwrap(await stub.configure(spec, { server: cluster.url }));
    const stored = await waitFor("the new transform in the cache", async () => {
      const items = unwrap(await stub.listObjects({})).value.items.map((t) => JSON.parse(t) as KubeObject);
      return items.length === 2 && items.every((o) => (o.spec as { nodeName?: string }).nodeName === undefined) && items;
    });
    expect(stored.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    await waitConverged(stub, cluster);
    // subscribers learn of it: an update at the same resourceVersion carrying the new body
    const updates = (await readWholeLog(stub)).filter((e) => e.type === "update");
    expect(updates.map((e) => [e.key, JSON.parse(e.object!).spec.nodeName, JSON.parse(e.oldObject!).spec.nodeName])).toEqual([
      ["x/a", undefined, "n1"],
      ["x/b", undefined, "n2"],
    ]);
  });

  it("answers X-Resource-Version and X-Synced for what the cache holds after a selector change (issue 7 item 6)", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "a", namespace: "x", labels: { app: "web" } }));
    await cluster.create("pods", pod({ name: "b", namespace: "x", labels: { app: "db" } }));
    const { name, stub } = await startInformer(cluster, { labelSelector: "app=web" });
    await waitSynced(stub);
    // Hold the relist back so the state between the restart and the new list can be seen.
    await cluster.fault({ kind: "delay", on: "list", ms: 1_500 });
    const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3, labelSelector: "app=db" }, name);
    unwrap(await stub.configure(spec, { server: cluster.url }));
    const during = unwrap(await stub.listObjects({}));
    expect(during.value.items.map((t) => JSON.parse(t).metadata.name)).toEqual(["a"]); // the old selection
    expect(during).toMatchObject({ synced: false, resourceVersion: "" });
    const after = await waitFor("the relist", async () => {
      const answer = unwrap(await stub.listObjects({}));
      return answer.synced && answer;
    });
    expect(after.value.items.map((t) => JSON.parse(t).metadata.name)).toEqual(["b"]);
    expect(after.resourceVersion).not.toBe("");
  });

  describe("watch windows (maxLagSeconds, issue 19)", () => {
    /** A cluster of three pods and an informer of them at `maxLagSeconds`, synced and asleep after its first window. */
    const asleepOn = async (maxLagSeconds: number) => {
      const cluster = await newCluster();
      await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
      const { stub } = await startInformer(cluster, { maxLagSeconds });
      await waitSynced(stub);
      return { cluster, stub, asleep: await waitSleeping(stub) };
    };
    const watches = async (cluster: FakeCluster) => (await cluster.requests()).filter((r) => r.query.watch === "true");
    const lists = async (cluster: FakeCluster) => (await cluster.requests()).filter((r) => r.query.watch === undefined);

    it("opens a window, drains it, and sleeps with its alarm at most 60 s ahead and no watch open", async () => {
      const { cluster, stub, asleep } = await asleepOn(60);
      const seen = Date.now();
      // The informer closed its window before it slept; the fake server, another process, hears the
      // connection close a moment later (a CI run once saw 1). Within 1 s: the server itself would
      // end the window only at its 3 s timeout, ≥ 2 s after the pre-timeout bookmark that ended it.
      await waitFor("the fake server to see the window's watch closed", async () => (await cluster.info()).openWatches === 0, 1_000);
      // One window: the spec's 3 s timeout (under a window's 5 s), ended by its pre-timeout bookmark.
      const [window] = await watches(cluster);
      expect([window!.query.timeoutSeconds]).toEqual(["3"]);
      // The alarm is maxLagSeconds after the window closed, which is after it opened and before it
      // was seen asleep: bounds from the order of events, however slow the machine. (1 s of margin for
      // the fake server's clock, another process's, against the runtime's I/O-driven one.)
      const wakesAt = Date.parse(asleep.watch.wakesAt!);
      expect(wakesAt).toBeLessThanOrEqual(seen + 60_000);
      expect(wakesAt).toBeGreaterThan(window!.time + 60_000 - 1_000);
      expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(wakesAt);
    });

    // Real time here (test/cache/watch-windows.test.ts has the hour of simulated time at 60 s): a lag
    // of 5 s, so that the informer wakes by its own alarm while the test waits.
    it("resumes from its RV after the sleep, bringing a change made meanwhile within about maxLagSeconds", async () => {
      const { cluster, stub, asleep } = await asleepOn(5);
      await cluster.clearRequests();
      const first = (await cluster.state("pods")).items[0]!;
      const changedAt = Date.now();
      await cluster.update("pods", { ...first, status: { phase: "Succeeded" } });
      await waitConverged(stub, cluster);
      // Within about maxLagSeconds, by construction rather than by a stopwatch: the sleep's alarm was
      // set at most 5 s past the change, and the first window after it, resumed from the stored RV,
      // brought the change.
      expect(Date.parse(asleep.watch.wakesAt!)).toBeLessThanOrEqual(changedAt + 5_000);
      expect((await watches(cluster))[0]!.query.resourceVersion).toBe(asleep.lastSyncResourceVersion);
      expect(await lists(cluster)).toEqual([]);
      expect((await waitSleeping(stub)).relists).toBe(0);
    });

    it("relists when a window's resume finds its RV compacted (410), as ever", async () => {
      const { cluster, stub, asleep } = await asleepOn(5);
      const first = (await cluster.state("pods")).items[0]!;
      await cluster.clearRequests();
      await cluster.update("pods", { ...first, status: { phase: "Succeeded" } });
      await cluster.compact();
      await waitConverged(stub, cluster);
      expect((await waitSleeping(stub)).relists).toBe(1);
      expect((await cluster.requests()).slice(0, 2).map((r) => [r.query.watch ?? "list", r.query.resourceVersion])).toEqual([
        ["true", asleep.lastSyncResourceVersion], // answered 410
        ["list", asleep.lastSyncResourceVersion],
      ]);
    });

    it("opens the next window at once for a /k8s list ahead of its cache, and answers it within the wait", async () => {
      const { cluster, stub } = await asleepOn(60);
      const first = (await cluster.state("pods")).items[0]!;
      const changed = await cluster.update("pods", { ...first, status: { phase: "Succeeded" } });
      const wanted = changed.metadata.resourceVersion!;
      // A wait far longer than the 3 s a /k8s list gives (so a slow machine cannot fail it), and far
      // shorter than the ~60 s left of the sleep: only a window opened at once answers in it.
      const answer = unwrap(await stub.awaitResourceVersion(wanted, 20_000));
      // Asleep for up to 60 s, it would have answered with its old RV (a 504) after the wait.
      expect(answer).toEqual({ current: expect.any(String) });
      expect(BigInt((answer as { current: string }).current)).toBeGreaterThanOrEqual(BigInt(wanted));
    });

    it("stays awake with live events while a /k8s watch is open, and sleeps again once it closes", async () => {
      const cluster = await newCluster();
      await cluster.create("pods", pod({ name: "a", namespace: "x" }));
      const { stub } = await startInformer(cluster, { maxLagSeconds: 60 });
      await waitSynced(stub);
      const asleep = await waitSleeping(stub);
      const info = describeResource("pods", undefined)!;
      const opened = unwrap(
        await stub.watch({ info, format: { kind: "json" }, includeObject: "Object", bookmarks: false, initialEvents: false, resourceVersion: asleep.cacheResourceVersion }),
      );
      if (!("stream" in opened)) throw new Error("the /k8s watch did not open");
      // It wakes at once, not at its alarm, and past a window's length it is still watching.
      await waitFor("the informer to wake", async () => (await status(stub)).watch.state === "watching");
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect((await status(stub)).watch.state).toBe("watching");
      const watchesBefore = (await watches(cluster)).length;
      await cluster.create("pods", pod({ name: "b", namespace: "x" }));
      const [line] = await readLines(opened.stream, 1); // then cancels: the client goes away
      expect(JSON.parse(line!)).toMatchObject({ type: "ADDED", object: { metadata: { name: "b" } } });
      // Live: the watch open before the change brought it, not a later window's.
      expect((await watches(cluster)).length).toBe(watchesBefore);
      // A client that went away is noticed when the next event is written to it; then the next
      // upstream bookmark ends the watch.
      await cluster.create("pods", pod({ name: "c", namespace: "x" }));
      await waitSleeping(stub);
    });
  });
});
