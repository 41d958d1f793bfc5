/**
 * The watch hub inside the platform's limits (reviews A7, B3, B5, F8): a timeoutSeconds beyond
 * 1,800 s is cut to it; watchers are capped per informer object and per credential, refused before
 * any stream starts; initial listings run a few at a time, the rest queued, any beyond the queue
 * refused; the shared buffer holds about 4 MiB of bodies and a refresh never reads what it would
 * trim; and bytes queued for slow clients stay under one budget per object, the largest closed first.
 */
import { describe, expect, it } from "vitest";
import { HEAVY_READ_SHED_MESSAGE, HEAVY_READS_QUEUED, HEAVY_READS_QUEUED_PER_CREDENTIAL, HEAVY_READS_RUNNING, ReadAdmission } from "../../src/k8s/admission.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { MAX_WATCH_TIMEOUT_SECONDS } from "../../src/k8s/list-options.ts";
import { RECENT_BYTES } from "../../src/k8s/recent-events.ts";
import { type WatchRequest, WatchHub, type WatchSource } from "../../src/k8s/watch-hub.ts";
import { MAX_QUEUED_BYTES } from "../../src/k8s/watch-queues.ts";
import { MAX_WATCHERS_PER_OBJECT, MAX_WATCHERS_PER_PRINCIPAL, WatcherCaps, watcherLimitsOf } from "../../src/k8s/watcher-caps.ts";
import { readLines, WatchBody } from "../helpers/watch-lines.ts";
import { scriptedLog } from "../helpers/scripted-log.ts";
import { parseFieldSelector } from "../../src/kube/selectors.ts";

const pods = describeResource("pods", undefined)!;
const request: WatchRequest = { info: pods, format: { kind: "json" }, includeObject: "Metadata", bookmarks: false, initialEvents: false, resourceVersion: "100" };
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** Whether `stream` ends (no line) rather than staying open; the timer only keeps a failing test from hanging. */
async function ends(stream: ReadableStream<Uint8Array>): Promise<boolean> {
  const reader = stream.getReader();
  const result = await Promise.race([reader.read(), new Promise<"open">((resolve) => setTimeout(() => resolve("open"), 2_000))]);
  await reader.cancel().catch(() => {});
  return result !== "open" && result.done;
}

describe("WatchHub timeouts", () => {
  it("ends a watch that asks for a year at 1,800 s, as if it had asked for 1,800", async () => {
    let now = 0;
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { now: () => now });
    const stream = hub.open({ ...request, timeoutSeconds: 31_536_000 });
    await settle();
    now = MAX_WATCH_TIMEOUT_SECONDS * 1_000;
    hub.notify();
    expect(MAX_WATCH_TIMEOUT_SECONDS).toBe(1_800);
    expect(await ends(stream)).toBe(true);
  });
});

describe("WatchHub caps", () => {
  it(`refuses watch ${MAX_WATCHERS_PER_PRINCIPAL + 1} of one credential with a retry hint, and still opens another credential's`, async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const opened = Array.from({ length: MAX_WATCHERS_PER_PRINCIPAL }, () => hub.tryOpen({ ...request, principal: "alice" }));
    expect(opened.filter((o) => "stream" in o)).toHaveLength(MAX_WATCHERS_PER_PRINCIPAL);
    expect(hub.tryOpen({ ...request, principal: "alice" })).toMatchObject({ refused: true, retryAfterSeconds: 5, message: expect.stringContaining("credential 'alice'") });
    const bob = hub.tryOpen({ ...request, principal: "bob" });
    expect("stream" in bob).toBe(true);
    // A place frees up when a watch ends.
    if ("stream" in opened[0]!) await opened[0].stream.cancel();
    await settle();
    expect("stream" in hub.tryOpen({ ...request, principal: "alice" })).toBe(true);
  });

  it(`refuses watch ${MAX_WATCHERS_PER_OBJECT + 1} of one informer object, whoever asks`, async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const opened = Array.from({ length: MAX_WATCHERS_PER_OBJECT }, (_, i) => hub.tryOpen({ ...request, principal: `token-${i % 20}` }));
    expect(opened.filter((o) => "stream" in o)).toHaveLength(MAX_WATCHERS_PER_OBJECT);
    expect(hub.tryOpen({ ...request, principal: "someone-new" })).toMatchObject({ refused: true, retryAfterSeconds: 5 });
    expect(hub.watchers).toBe(MAX_WATCHERS_PER_OBJECT);
  });
});

describe("WatchHub initial listings", () => {
  it(`runs ${HEAVY_READS_RUNNING} initial listings at once, queues ${HEAVY_READS_QUEUED}, refuses the rest before any stream starts, and parks a slot while its client drains`, async () => {
    const log = scriptedLog();
    // Two pages of one large item each: a client that does not read holds its listing at page 2.
    const big = (name: string) => JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { name, namespace: "ns", resourceVersion: "100" }, data: "x".repeat(200_000) });
    const source: WatchSource = {
      ...log.source,
      listAt: (_, from) => (from ? { expired: false, items: [big("b")], keys: ["ns/b"], at: 0 } : { expired: false, items: [big("a")], keys: ["ns/a"], at: 0, next: { at: 0, after: "ns/a" } }),
    };
    const admission = new ReadAdmission();
    const hub = new WatchHub(() => source, { admission });
    const watchList = { ...request, resourceVersion: "0", initialEvents: true };
    // Credentials of their own: one credential queues only its share (below).
    const opened = Array.from({ length: 30 }, (_, i) => hub.tryOpen({ ...watchList, principal: `team-${i}` }));
    await settle();
    const streams = opened.flatMap((o) => ("stream" in o ? [o.stream] : []));
    const refused = opened.filter((o) => !("stream" in o));
    expect(streams).toHaveLength(HEAVY_READS_RUNNING + HEAVY_READS_QUEUED);
    expect(refused).toHaveLength(30 - HEAVY_READS_RUNNING - HEAVY_READS_QUEUED);
    expect(refused[0]).toMatchObject({ refused: true, retryAfterSeconds: 1 });
    // No listing keeps a slot while its client does not read (review N1): a slot parked between
    // pages went to the next credential waiting, so every listing sent its first page in turn.
    expect(admission.queued).toBe(0);
    expect(admission.taken).toBeGreaterThanOrEqual(HEAVY_READS_QUEUED);
    expect(admission.peak).toBe(HEAVY_READS_RUNNING);
    // A client that reads its listing to the end gets all of it (its next page waits its turn).
    expect((await readLines(streams[0]!, 2)).map((l) => JSON.parse(l).object.metadata.name)).toEqual(["a", "b"]);
    expect(admission.peak).toBe(HEAVY_READS_RUNNING);
    // A watch that lists nothing, or one object by namespace and name (kubectl get pod x -w), is not a heavy read: it still opens.
    expect("stream" in hub.tryOpen(request)).toBe(true);
    expect("stream" in hub.tryOpen({ ...watchList, namespace: "ns", fieldSelector: parseFieldSelector("metadata.name=a") })).toBe(true);
  });

  it(`queues at most ${HEAVY_READS_QUEUED_PER_CREDENTIAL} listings of one credential (review N1): the others keep their places`, async () => {
    const log = scriptedLog();
    const admission = new ReadAdmission();
    const hub = new WatchHub(() => log.source, { admission });
    const held = [await admission.enter("busy")!, await admission.enter("busy")!];
    const watchList = { ...request, resourceVersion: "0", initialEvents: true };
    const hostile = Array.from({ length: 10 }, () => hub.tryOpen({ ...watchList, principal: "hostile" }));
    expect(hostile.filter((o) => "stream" in o)).toHaveLength(HEAVY_READS_QUEUED_PER_CREDENTIAL);
    expect(hostile.find((o) => !("stream" in o))).toMatchObject({ refused: true, message: HEAVY_READ_SHED_MESSAGE });
    expect("stream" in hub.tryOpen({ ...watchList, principal: "team" })).toBe(true);
    for (const slot of held) slot.release();
  });
});

describe("WATCHERS_PER_CREDENTIAL", () => {
  it("sets the per-credential cap, and a refusal names the setting; unset or not a whole number from 1 to 1,000, the default holds", () => {
    expect(watcherLimitsOf({ WATCHERS_PER_CREDENTIAL: "250" })).toEqual({ perObject: MAX_WATCHERS_PER_OBJECT, perPrincipal: 250 });
    expect(watcherLimitsOf({ WATCHERS_PER_CREDENTIAL: "5000" }).perPrincipal).toBe(MAX_WATCHERS_PER_OBJECT);
    for (const value of [undefined, "", " ", "0", "-3", "2.5", "many"]) expect(watcherLimitsOf({ WATCHERS_PER_CREDENTIAL: value }).perPrincipal, String(value)).toBe(MAX_WATCHERS_PER_PRINCIPAL);
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { caps: new WatcherCaps(watcherLimitsOf({ WATCHERS_PER_CREDENTIAL: "150" })) });
    const opened = Array.from({ length: 150 }, () => hub.tryOpen({ ...request, principal: "team" }));
    expect(opened.filter((o) => "stream" in o)).toHaveLength(150);
    expect(hub.tryOpen({ ...request, principal: "team" })).toMatchObject({ refused: true, message: expect.stringContaining("at most 150: the Worker's WATCHERS_PER_CREDENTIAL") });
  });
});

describe("WatchHub memory", () => {
  it("keeps at most about 4 MiB of large events in its shared buffer", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const received = readLines(hub.open(request), 100);
    await settle();
    for (let i = 0; i < 100; i++) log.append(`big${i}`, 200_000); // 20 MB of bodies
    hub.notify();
    expect(await received).toHaveLength(100);
    expect(RECENT_BYTES).toBe(4 * 1024 * 1024);
    expect(hub.bufferedBytes).toBeGreaterThan(0);
    expect(hub.bufferedBytes).toBeLessThanOrEqual(RECENT_BYTES);
  });

  it("does not read what was appended while nobody watched when the next watcher comes (F8)", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const first = hub.open(request);
    await settle();
    await first.cancel();
    log.append("wake");
    hub.notify();
    await settle();
    expect(hub.watchers).toBe(0);
    for (let i = 0; i < 20_000; i++) log.append(`quiet${i}`, 1_000); // 20 MB while nobody watches
    const before = log.bytesRead;
    const received = readLines(hub.open({ ...request, resourceVersion: String(100 + 20_001) }), 1);
    await settle();
    log.append("next");
    hub.notify();
    expect((await received).map((l) => JSON.parse(l).object.metadata.name)).toEqual(["next"]);
    expect(log.bytesRead - before).toBeLessThan(RECENT_BYTES);
  });

  it("reads a run behind the buffer for a lagging watcher in reads of about 4 MiB at most, not 1,000 events at once (F8)", async () => {
    const log = scriptedLog();
    for (let i = 0; i < 100; i++) log.append(`old${i}`, 200_000); // 20 MB, appended before anyone watched
    const reads: number[] = [];
    const source: WatchSource = {
      ...log.source,
      positionOf: () => ({ after: 0 }),
      async readInOrder(after, end, skip, limit) {
        const read = await log.source.readInOrder(after, end, skip, limit);
        reads.push(read.events.reduce((sum, e) => sum + (e.object?.length ?? 0), 0));
        return read;
      },
    };
    const hub = new WatchHub(() => source);
    const lines = await readLines(hub.open({ ...request, resourceVersion: "101" }), 100);
    expect(lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(Array.from({ length: 100 }, (_, i) => `old${i}`));
    expect(reads.length).toBeGreaterThan(1);
    expect(Math.max(...reads)).toBeLessThanOrEqual(RECENT_BYTES);
  });

  it("closes the watchers holding the most unread bytes once all of them hold more than 8 MiB, not the one that reads", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const reading = readLines(hub.open(request), 20);
    const stalled: ReadableStream<Uint8Array>[] = [];
    // Each stalled watcher opens before its own 1 MB event and stops after that frame: 20 different frames.
    for (let i = 0; i < 20; i++) {
      stalled.push(hub.open(request)); // never read
      await settle();
      log.append(`m${i}`, 1_000_000);
      hub.notify();
      await settle();
    }
    expect((await reading).map((l) => JSON.parse(l).object.metadata.name)).toEqual(Array.from({ length: 20 }, (_, i) => `m${i}`));
    await settle();
    expect(hub.queuedBytes).toBeLessThanOrEqual(MAX_QUEUED_BYTES);
    // About 1 MB each: at most 8 of the 20 fit; the others were closed.
    expect(hub.watchers).toBeLessThanOrEqual(9);
    expect(hub.watchers).toBeGreaterThan(1);
    // Each closed one was counted as over the budget.
    expect(hub.closed.overBudget).toBeGreaterThanOrEqual(20 - hub.watchers - 1);
    // And ends normally after the frames it took, never broken off (issue 27 item 4): its client
    // re-watches from its last resourceVersion rather than relisting. The others are still open.
    const closed = hub.closed.overBudget;
    const ends = await Promise.all(
      stalled.map(async (stream) => {
        const body = new WatchBody(stream);
        const end = await body.toEnd(2_000);
        if (end === "open") await body.cancel();
        return end === "done" && body.partial !== "" ? "cut mid-line" : end;
      }),
    );
    expect(ends.filter((end) => end !== "open" && end !== "done")).toEqual([]);
    expect(ends.filter((end) => end === "done")).toHaveLength(closed);
  });

  it("counts a frame shared by many watchers once: a burst to many slow watchers closes none", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const stalled = Array.from({ length: 50 }, () => hub.open(request)); // never read, all at one position
    await settle();
    for (let i = 0; i < 20; i++) log.append(`b${i}`, 1_000_000);
    hub.notify();
    await settle();
    // Each holds the same encoded frames: a few MB in memory, not 50 × that.
    expect(hub.queuedBytes).toBeLessThanOrEqual(MAX_QUEUED_BYTES);
    expect(hub.watchers).toBe(50);
    expect(hub.closed).toEqual({ unresponsive: 0, overBudget: 0 });
    void stalled;
  });
});
