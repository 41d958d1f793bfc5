/**
 * `/k8s` watches through the Worker's front door are served by watch relays (WATCH_RELAYS, default 4;
 * k8s/watch-relay.ts, objects/watch-relay-object.ts), not by the informer's object: the watch opens
 * in any relay (a credential's watches spread over them all, capped once across them), its events arrive, a sleeping informer wakes for it, and what the
 * informer promised no longer holding (reconfigured, deleted) ends the relay's streams cleanly.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env, exports } from "cloudflare:workers";
import { relaysOf } from "../../src/k8s/watch-relay.ts";
import { call, json, send, startInCluster } from "../helpers/clusters.ts";
import { compareRv, waitFor } from "../helpers/informer.ts";
import { anyRelayPumping, podRelays, relayedWatchers, relayWatchers } from "../helpers/relay-stubs.ts";
import { readLines, readToEnd } from "../helpers/watch-lines.ts";
import { pod } from "../fake-apiserver/client.ts";

function k8s(path: string): Promise<Response> {
  return exports.default.fetch(new Request(`http://localhost/k8s${path}`));
}

/** Whether `stream` ends normally (not broken off) without another line within 10 s. */
const endsCleanly = async (stream: ReadableStream<Uint8Array>) => {
  const lines = await readToEnd(stream, 10_000);
  return Array.isArray(lines) && lines.length === 0;
};

describe("/k8s watches served by relays", () => {
  it("opens a watch in a relay, which serves it the cluster's changes", async () => {
    const { cluster, fake, remove } = await startInCluster("relayed");
    expect(relaysOf(env)).toBeGreaterThan(0);
    const rv = (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).metadata.resourceVersion;
    const response = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    expect(response.status).toBe(200);
    expect(await relayedWatchers(cluster)).toBe(1);
    const lines = readLines(response.body!, 2);
    await fake.create("pods", pod({ name: "one", namespace: "ns-0" }));
    await fake.create("pods", pod({ name: "two", namespace: "ns-0" }));
    expect((await lines).map((line) => [JSON.parse(line).type, JSON.parse(line).object.metadata.name])).toEqual([
      ["ADDED", "one"],
      ["ADDED", "two"],
    ]);
    // A watcher learns its client left when its next event cannot be written.
    await fake.create("pods", pod({ name: "three", namespace: "ns-0" }));
    await waitFor("the relay to see its client leave", async () => (await relayedWatchers(cluster)) === 0 || undefined);
    await remove();
  });

  it("ends a relay's streams cleanly when the informer is reconfigured, and when it is deleted", async () => {
    const { cluster, remove } = await startInCluster("relay-ends");
    const rv = (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).metadata.resourceVersion;
    const first = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    expect(first.status).toBe(200);
    // Any change of what the loop uses restarts it: what its watchers were promised no longer holds.
    const changed = await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 4 });
    expect(changed.status, await changed.clone().text()).toBe(200);
    expect(await endsCleanly(first.body!)).toBe(true);

    const ready = await waitFor("the informer to sync again", async () => {
      const list = await k8s(`/clusters/${cluster}/api/v1/pods`);
      return list.status === 200 ? json(list) : undefined;
    });
    const second = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${ready.metadata.resourceVersion}`);
    expect(second.status).toBe(200);
    await remove();
    expect(await endsCleanly(second.body!)).toBe(true);
  });

  it("wakes an informer sleeping between watch windows for a relay's watcher, whose changes then arrive live", async () => {
    const { cluster, fake, remove } = await startInCluster("relay-wakes");
    const path = `/clusters/${cluster}/informers/pods`;
    expect((await send("PUT", path, { resource: "pods", watchTimeoutSeconds: 3, maxLagSeconds: 60 })).status).toBe(200);
    await waitFor("the informer to sleep", async () => (await json(await call(path))).watch?.state === "sleeping" || undefined);
    const rv = (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).metadata.resourceVersion;
    const response = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${rv}`);
    expect(response.status).toBe(200);
    await waitFor("the informer to wake", async () => (await json(await call(path))).watch?.state === "watching" || undefined);
    const upstreamWatches = async () => (await fake.requests()).filter((r) => r.verb === "watch").length;
    const opened = await upstreamWatches();
    await fake.create("pods", pod({ name: "live", namespace: "ns-0" }));
    const [line] = await readLines(response.body!, 1);
    expect(JSON.parse(line!)).toMatchObject({ type: "ADDED", object: { metadata: { name: "live" } } });
    // Live: the informer's watch that was open before the change brought it, not a later window's.
    expect(await upstreamWatches()).toBe(opened);
    await remove();
  });

  it("answers a bad selector 400 and an unsynced cache as the informer's object would, opening nothing in the relay", async () => {
    const { cluster, remove } = await startInCluster("relay-bad");
    const bad = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&labelSelector=${encodeURIComponent("a in (")}`);
    expect(bad.status).toBe(400);
    expect(await json(bad)).toMatchObject({ kind: "Status", reason: "BadRequest", code: 400 });
    expect(await relayedWatchers(cluster)).toBe(0);
    await remove();
  });
});

describe("a credential's /k8s watches across relays (issue 29 item 1)", () => {
  it("spreads 150 watches of one credential over all 4 relays and answers the 101st 429 naming WATCHERS_PER_CREDENTIAL", async () => {
    const { cluster, fake, remove } = await startInCluster("relay-spread");
    expect(relaysOf(env)).toBe(4);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const rv = (await json(await k8s(pods))).metadata.resourceVersion;
    const bodies: ReadableStream[] = [];
    const statuses: number[] = [];
    let refusal: { message?: string } | undefined;
    for (let i = 0; i < 150; i++) {
      const response = await k8s(`${pods}?watch=true&resourceVersion=${rv}`);
      statuses.push(response.status);
      if (response.status === 200) bodies.push(response.body!);
      else refusal ??= await json(response);
    }
    expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(100).every((status) => status === 429)).toBe(true);
    expect(refusal?.message).toContain("WATCHERS_PER_CREDENTIAL");
    const perRelay = await relayWatchers(cluster);
    expect(perRelay.reduce((a, b) => a + b)).toBe(100);
    for (const watchers of perRelay) expect(watchers).toBeGreaterThan(0);
    // A client leaves: its relay learns it at the next event, and tells the informer at its next poll or opening.
    await bodies.shift()!.cancel();
    await fake.create("pods", pod({ name: "after-leave", namespace: "ns-0" }));
    const reopened = await waitFor("a place freed for the credential", async () => {
      const response = await k8s(`${pods}?watch=true&resourceVersion=${rv}`);
      if (response.status === 200) return response;
      await response.body?.cancel();
      return undefined;
    });
    bodies.push(reopened.body!);
    expect(await relayedWatchers(cluster)).toBe(100);
    await Promise.all(bodies.map((body) => body.cancel()));
    await remove();
  });
});

/**
 * A cluster whose informer is ahead of its anonymous relay's last snapshot: a watcher came and
 * left, the relay's pump stopped, and pods were created since (review N2).
 */
async function relayIdleBehind(prefix: string) {
  const started = await startInCluster(prefix);
  const { cluster, fake } = started;
  const pods = `/clusters/${cluster}/api/v1/pods`;
  const rv = (await json(await k8s(pods))).metadata.resourceVersion;
  const watched = await k8s(`${pods}?watch=true&resourceVersion=${rv}`);
  const first = readLines(watched.body!, 1); // read one line, then leave
  await fake.create("pods", pod({ name: "seen", namespace: "ns-0" }));
  await first;
  // The watcher learns its client left at its next write; the pump stops at its next poll's answer.
  await fake.create("pods", pod({ name: "left", namespace: "ns-0" }));
  await waitFor("the relay's watcher to leave", async () => (await relayedWatchers(cluster)) === 0 || undefined);
  await fake.create("pods", pod({ name: "last-polled", namespace: "ns-0" }));
  await waitFor("the relay's pump to stop", async () => !(await anyRelayPumping(cluster)) || undefined);
  const ahead = await fake.create("pods", pod({ name: "ahead", namespace: "ns-0" }));
  await waitFor("the informer to hold the last pod", async () => ((await json(await k8s(pods))).items as { metadata: { name: string } }[]).some((p) => p.metadata.name === "ahead") || undefined);
  return { ...started, pods, ahead };
}

describe("/k8s watches opened in a relay whose pump had stopped (review N2)", () => {
  // One relay: the watch after goes to the relay that went idle.
  beforeEach(() => void ((env as { WATCH_RELAYS?: string }).WATCH_RELAYS = "1"));
  afterEach(() => void ((env as { WATCH_RELAYS?: string }).WATCH_RELAYS = "4"));

  it("leave the relay with no alarm once its last watcher left, and run no slice after (review B7)", async () => {
    const { remove, cluster } = await relayIdleBehind("relay-idle-alarm");
    const [relay] = podRelays(cluster);
    expect(await relay!.pumping()).toBe(false);
    expect(await runInDurableObject(relay!, (_, state) => state.storage.getAlarm())).toBeNull();
    // A slice run now (an alarm left from before) polls nothing and re-arms nothing.
    await runInDurableObject(relay!, (instance: { alarm(): Promise<void> }) => instance.alarm());
    expect(await runInDurableObject(relay!, (_, state) => state.storage.getAlarm())).toBeNull();
    expect(await relay!.pumping()).toBe(false);
    await remove();
  });

  it("start without initial events at the informer's state, not replaying what the relay's old snapshot missed as live", async () => {
    const { fake, pods, remove } = await relayIdleBehind("relay-idle-tail");
    const response = await k8s(`${pods}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan`);
    expect(response.status).toBe(200);
    const lines = readLines(response.body!, 1);
    await fake.create("pods", pod({ name: "live", namespace: "ns-0" }));
    expect((await lines).map((line) => JSON.parse(line).object.metadata.name)).toEqual(["live"]);
    await remove();
  });

  it("close a watch-list with the initial-events-end bookmark at or after every listed object's RV", async () => {
    const { pods, remove } = await relayIdleBehind("relay-idle-list");
    const listed = (await json(await k8s(pods))).items.length as number;
    const response = await k8s(`${pods}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`);
    expect(response.status).toBe(200);
    const events = (await readLines(response.body!, listed + 1)).map((line) => JSON.parse(line));
    expect(events.map((e) => e.type)).toEqual([...Array(listed).fill("ADDED"), "BOOKMARK"]);
    const bookmark = events.at(-1).object.metadata;
    expect(bookmark.annotations).toMatchObject({ "k8s.io/initial-events-end": "true" });
    const highest = events.slice(0, -1).map((e) => e.object.metadata.resourceVersion as string).sort(compareRv).at(-1)!;
    expect(compareRv(bookmark.resourceVersion, highest)).toBeGreaterThanOrEqual(0);
    await remove();
  });
});
