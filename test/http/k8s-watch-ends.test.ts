/**
 * Every way a `/k8s` watch ends, through the Worker's front door (issue 27 item 4, review N5): the
 * body ends normally — after an ERROR event where kube-apiserver sends one — and at a line boundary,
 * never broken off. client-go over HTTP/2 takes a broken body (a reset stream) as an ERROR 500 and
 * relists; a normal end has it re-watch from the last resourceVersion it saw, and a watch from there
 * loses nothing. Each end is tried with the watch served by a relay (WATCH_RELAYS > 0) and by the
 * informer's own object (WATCH_RELAYS=0), where it applies.
 */
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { informerStub } from "../../src/clusters/stubs.ts";
import { MAX_QUEUED_BYTES } from "../../src/k8s/watch-queues.ts";
import { pod } from "../fake-apiserver/client.ts";
import { json, send, startInCluster } from "../helpers/clusters.ts";
import { waitFor } from "../helpers/informer.ts";
import { podRelays, relayedWatchers } from "../helpers/relay-stubs.ts";
import { DELIBERATE_RESTART } from "../helpers/runtime-noise.ts";
import { WatchBody } from "../helpers/watch-lines.ts";

function k8s(path: string): Promise<Response> {
  return exports.default.fetch(new Request(`http://localhost/k8s${path}`));
}

type Mode = "relays" | "informer";
const MODES: Mode[] = ["relays", "informer"];

/** The Worker reads WATCH_RELAYS per request: "informer" serves watches from the informer's object. */
function serveBy(mode: Mode): void {
  (env as { WATCH_RELAYS?: string }).WATCH_RELAYS = mode === "informer" ? "0" : "4";
}
afterEach(() => serveBy("relays"));

/** Fresh stubs each time: a restart breaks the stubs that reached the object before it. */
const informer = (cluster: string) => informerStub(env, { cluster, name: "pods" });

/** Restarts a Durable Object as a deploy, an eviction or a crash does: its memory and open streams are gone. */
async function restart(stub: DurableObjectStub): Promise<void> {
  await runInDurableObject(stub, (_, state) => state.abort(DELIBERATE_RESTART)).catch(() => {}); // the abort rejects into this call
}

/** Restarts the informer's object, then does what the cron does (re-arm its loop) and runs it now. */
async function restartInformer(cluster: string): Promise<void> {
  await restart(informer(cluster));
  await informer(cluster).ensureRunning();
  void runDurableObjectAlarm(informer(cluster)).catch(() => {});
}

/** A watch of the cluster's pods from `rv`, once one opens (429 while the cache re-syncs after a restart). */
async function watchFrom(cluster: string, rv: string, query = ""): Promise<WatchBody> {
  const response = await waitFor(`a watch from ${rv}`, async () => {
    const answer = await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${rv}${query}`);
    if (answer.status === 200) return answer;
    await answer.body?.cancel();
    return undefined;
  });
  return new WatchBody(response.body!);
}

/** The cluster's pods listed: the RV a watch starts from. */
async function listedRv(cluster: string): Promise<string> {
  return (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).metadata.resourceVersion;
}

/**
 * The body ended normally, at a line boundary, each line a watch event in resourceVersion order;
 * `lastType`: the type of its last event, when it must be one.
 */
async function expectCleanEnd(body: WatchBody, lastType?: string): Promise<void> {
  expect(await body.toEnd(20_000)).toBe("done");
  expect(body.partial).toBe("");
  const events = body.events;
  for (const event of events) expect(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]).toContain(event.type);
  const rvs = events.filter((e) => e.type !== "ERROR").map((e) => BigInt(e.object.metadata.resourceVersion));
  expect(rvs).toEqual([...rvs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  if (lastType !== undefined) expect(events.at(-1)?.type).toBe(lastType);
}

/**
 * What a client resuming from `body`'s last resourceVersion (or `from`, where the body showed none)
 * receives, once `count` events came: as a reflector does, it watches again from the last
 * resourceVersion it saw whenever a stream ends (a relay may end a watch that opened just before it
 * learned of a restart: review N2).
 */
async function resumed(cluster: string, body: WatchBody, count: number, from?: string): Promise<string[]> {
  const received: string[] = [];
  let rv = body.lastResourceVersion ?? from!;
  for (let attempt = 0; attempt < 5 && received.length < count; attempt++) {
    const again = await watchFrom(cluster, rv);
    const open = await again.until(count - received.length, 20_000);
    if (open === "open" || again.ended === undefined) await again.cancel();
    received.push(...again.events.map((e) => `${e.type} ${e.object.metadata.name}`));
    rv = again.lastResourceVersion ?? rv;
  }
  return received;
}

describe("/k8s watch ends", () => {
  it.each(MODES)("ends at timeoutSeconds with a normal end of body (served by %s)", async (mode) => {
    serveBy(mode);
    const { cluster, fake, remove } = await startInCluster(`ends-deadline-${mode}`);
    const rv = await listedRv(cluster);
    const body = await watchFrom(cluster, rv, "&timeoutSeconds=2");
    await fake.create("pods", pod({ name: "one", namespace: "ns-0" }));
    await expectCleanEnd(body);
    await fake.create("pods", pod({ name: "two", namespace: "ns-0" }));
    // Whether "one" came before the deadline or not, the client ends up with both, once each.
    const first = body.events.map((e) => `${e.type} ${e.object.metadata.name}`);
    expect([...first, ...(await resumed(cluster, body, 2 - first.length, rv))]).toEqual(["ADDED one", "ADDED two"]);
    await remove();
  });

  it.each(MODES)("ends normally, at a line boundary, when the object serving the stream restarts (served by %s)", async (mode) => {
    serveBy(mode);
    const { cluster, fake, remove } = await startInCluster(`ends-restart-${mode}`);
    const body = await watchFrom(cluster, await listedRv(cluster));
    await fake.create("pods", pod({ name: "before", namespace: "ns-0" }));
    expect(await body.until(1)).toBeUndefined();
    if (mode === "relays") for (const relay of podRelays(cluster)) await restart(relay);
    else await restartInformer(cluster);
    await expectCleanEnd(body, "ADDED");
    await fake.create("pods", pod({ name: "after-1", namespace: "ns-0" }));
    await fake.create("pods", pod({ name: "after-2", namespace: "ns-0" }));
    expect(await resumed(cluster, body, 2)).toEqual(["ADDED after-1", "ADDED after-2"]);
    await remove();
  });

  it.each(MODES)("ends normally when every object restarts at once, as in a deploy (served by %s)", async (mode) => {
    serveBy(mode);
    const { cluster, fake, remove } = await startInCluster(`ends-deploy-${mode}`);
    const body = await watchFrom(cluster, await listedRv(cluster));
    await fake.create("pods", pod({ name: "before", namespace: "ns-0" }));
    expect(await body.until(1)).toBeUndefined();
    await abortAllDurableObjects().catch(() => {}); // the abort also rejects into this call
    await informer(cluster).ensureRunning();
    void runDurableObjectAlarm(informer(cluster)).catch(() => {});
    await expectCleanEnd(body, "ADDED");
    await fake.create("pods", pod({ name: "after", namespace: "ns-0" }));
    expect(await resumed(cluster, body, 1)).toEqual(["ADDED after"]);
    await remove();
  });

  it("ends a relay's stream normally when the informer's object restarts under it", async () => {
    serveBy("relays");
    const { cluster, fake, remove } = await startInCluster("ends-informer-under-relay");
    const body = await watchFrom(cluster, await listedRv(cluster));
    await fake.create("pods", pod({ name: "before", namespace: "ns-0" }));
    expect(await body.until(1)).toBeUndefined();
    await restartInformer(cluster);
    await expectCleanEnd(body, "ADDED");
    await fake.create("pods", pod({ name: "after", namespace: "ns-0" }));
    expect(await resumed(cluster, body, 1)).toEqual(["ADDED after"]);
    await remove();
  });

  it.each(MODES)("ends normally when the informer is reconfigured, and when it is deleted (served by %s)", async (mode) => {
    serveBy(mode);
    const { cluster, fake, remove } = await startInCluster(`ends-reconfigured-${mode}`);
    const first = await watchFrom(cluster, await listedRv(cluster));
    await fake.create("pods", pod({ name: "before", namespace: "ns-0" }));
    expect(await first.until(1)).toBeUndefined();
    // Any change of what the loop uses restarts it: what its watchers were promised no longer holds.
    expect((await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 4 })).status).toBe(200);
    await expectCleanEnd(first, "ADDED");
    await fake.create("pods", pod({ name: "after", namespace: "ns-0" }));
    expect(await resumed(cluster, first, 1)).toEqual(["ADDED after"]);

    const second = await watchFrom(cluster, await listedRv(cluster));
    await remove();
    await expectCleanEnd(second);
  });

  it.each(MODES)("ends a client's stream normally when the watchers' byte budget closes it, and drops what it had not sent (served by %s)", async (mode) => {
    serveBy(mode);
    // The budget is one hub's: one relay, so that every stalled watcher is in it (a watch goes to any relay).
    if (mode === "relays") (env as { WATCH_RELAYS?: string }).WATCH_RELAYS = "1";
    const { cluster, fake, remove } = await startInCluster(`ends-budget-${mode}`);
    const closes: string[] = [];
    const info = console.info.bind(console);
    vi.spyOn(console, "info").mockImplementation((line: unknown) => {
      if (String(line).includes('"msg":"watch closed"')) closes.push(JSON.parse(String(line)).reason);
      else info(line);
    });
    // Stalled clients (never read until the end), each from the resourceVersion before one large
    // change: each catches up on frames of its own, and together they hold more than the budget.
    const MB = 1024 * 1024;
    const count = Math.ceil((2 * MAX_QUEUED_BYTES) / MB);
    const names = Array.from({ length: count }, (_, i) => `big-${i}`);
    const rvs = [await listedRv(cluster)];
    for (const name of names) rvs.push((await fake.create("pods", pod({ name, namespace: "ns-0", annotations: { pad: "x".repeat(MB - 1024) } }))).metadata.resourceVersion!);
    await waitFor("the changes in the cache", async () => {
      const list = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=1`));
      return BigInt(list.metadata.resourceVersion) >= BigInt(rvs.at(-1)!) || undefined;
    });
    const stalled: WatchBody[] = [];
    for (let i = 0; i < count; i++) stalled.push(await watchFrom(cluster, rvs[i]!));
    await waitFor("the budget to close a stalled watcher", async () => closes.includes("overBudget") || undefined);
    vi.restoreAllMocks();
    // A stream the budget closed ends normally, at a line boundary, after the frames its client took
    // (the others stay open; the newest watchers, with the least to read, are read first). Its
    // client, resuming from where it stopped, receives the rest and nothing twice.
    let cut: number | undefined;
    for (let i = count - 1; i >= 0; i--) {
      if (cut === undefined && (await stalled[i]!.toEnd(2_000)) !== "open") cut = i;
      else await stalled[i]!.cancel();
    }
    expect(cut).toBeDefined();
    const body = stalled[cut!]!;
    await expectCleanEnd(body);
    const received = body.events.map((e) => e.object.metadata.name);
    expect(received).toEqual(names.slice(cut, cut! + received.length));
    expect(received.length).toBeLessThan(count - cut!); // the budget cut it short
    const rest = names.slice(cut! + received.length).map((name) => `ADDED ${name}`);
    expect(await resumed(cluster, body, rest.length, rvs[cut!])).toEqual(rest);
    await remove();
  });

  it("cancels the relay's watcher when its client goes away, by its next write at the latest", async () => {
    serveBy("relays");
    const { cluster, fake, remove } = await startInCluster("ends-cancel");
    const body = await watchFrom(cluster, await listedRv(cluster));
    await waitFor("the relay's watcher", async () => (await relayedWatchers(cluster)) === 1 || undefined);
    await body.cancel();
    // The relay learns of it when it next writes (the platform tells a cancelled RPC stream's sender
    // no sooner): the Worker must have cancelled its read of the relay's stream by then.
    await fake.create("pods", pod({ name: "unread", namespace: "ns-0" }));
    await waitFor("the relay to drop its watcher", async () => (await relayedWatchers(cluster)) === 0 || undefined);
    await remove();
  });
});
