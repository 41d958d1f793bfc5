/**
 * WatchHub over a scripted log: many watchers at the tail cost one log read per appended batch
 * (not one per watcher), a slow reader does not hold the others back, and a closed client is dropped;
 * a watch-list at a resourceVersion gets the initial events and the initial-events-end bookmark (F6);
 * bookmarks come per watcher whatever its selectors filtered out, and before the deadline (F9).
 */
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/cache/event-log.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { BOOKMARK_INTERVAL_MS, WatchHub, type WatchSource } from "../../src/k8s/watch-hub.ts";
import { parseFieldSelector, parseLabelSelector } from "../../src/kube/selectors.ts";
import { waitFor } from "../helpers/informer.ts";
import { readLines, WatchBody } from "../helpers/watch-lines.ts";

/**
 * A log whose events are all in resourceVersion order; every event is a mark (the end of a run of
 * transactions) unless `marked` says where the marks are.
 */
function scriptedLog(incarnation = "log-1", kind = "Pod", marked?: number[]) {
  const events: LogEvent[] = [];
  let reads = 0;
  const marks = () => marked ?? events.map((e) => e.seq);
  const source: WatchSource = {
    incarnation,
    read(after, limit) {
      reads++;
      return { events: events.filter((e) => e.seq > after).slice(0, limit), expired: false, bounds: { head: 1, tail: events.length } };
    },
    boundaryAfter(after, span) {
      const following = marks().filter((seq) => seq > after);
      return following.filter((seq) => seq <= after + span).at(-1) ?? following[0];
    },
    readInOrder(after, end, skip, limit) {
      reads++;
      const run = events.filter((e) => e.seq > after && e.seq <= end).slice(skip, skip + limit);
      return { events: run, expired: false, bounds: { head: 1, tail: events.length } };
    },
    bounds: () => ({ head: 1, tail: events.length }),
    cacheResourceVersion: () => String(100 + events.length),
    listAt: () => ({ expired: false, items: [], keys: [], at: events.length }),
    positionOf: () => ({ after: events.length, skipUpTo: String(100 + events.length) }),
    fromEarlierServer: () => false,
  };
  return {
    source,
    get reads() {
      return reads;
    },
    /** An ADDED event; `body` replaces the object's JSON text (e.g. text no parser accepts). */
    append(name: string, padding = 0, namespace = "ns", body?: string) {
      const seq = events.length + 1;
      const rv = String(100 + seq);
      const object = body ?? JSON.stringify({ kind, apiVersion: "v1", metadata: { name, namespace, resourceVersion: rv }, data: "x".repeat(padding) });
      events.push({ seq, type: "add", key: `${namespace}/${name}`, uid: name, resourceVersion: rv, object, oldObject: null, initialList: false, finalStateUnknown: false, at: 0 });
    },
  };
}

const pods = describeResource("pods", undefined)!;
const request = { info: pods, format: { kind: "json" } as const, includeObject: "Metadata" as const, bookmarks: false, initialEvents: false, resourceVersion: "100" };

describe("WatchHub", () => {
  it("serves 50 watchers at the tail with one log read per appended batch", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const streams = Array.from({ length: 50 }, () => hub.open(request));
    const received = streams.map((stream) => readLines(stream, 20));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = log.reads;
    for (let batch = 0; batch < 5; batch++) {
      for (let i = 0; i < 4; i++) log.append(`p${batch}-${i}`);
      hub.notify();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const all = await Promise.all(received);
    for (const lines of all) expect(lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(all[0]!.map((l) => JSON.parse(l).object.metadata.name));
    expect(all[0]).toHaveLength(20);
    expect(log.reads - before).toBeLessThanOrEqual(5);
  });

  it.each([
    ["other namespaces' events of a namespaced watcher", { namespace: "a" }],
    ["other names' events of a metadata.name= watcher", { fieldSelector: parseFieldSelector("metadata.name=here") }],
    ["other namespaces' events of a metadata.namespace= watcher", { fieldSelector: parseFieldSelector("metadata.namespace=a") }],
  ])("drops %s by their key, without parsing them (F12)", async (_, scope) => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const received = readLines(hub.open({ ...request, ...scope }), 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    log.append("other", 0, "b");
    log.append("broken", 0, "b", "{a body no parser accepts");
    log.append("here", 0, "a");
    hub.notify();
    const lines = (await received).map((line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } });
    expect(lines.map((l) => [l.type, l.object.metadata.name])).toEqual([["ADDED", "here"]]);
  });

  it("drops a watcher whose client went away", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const stream = hub.open(request);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hub.watchers).toBe(1);
    await stream.cancel();
    log.append("x");
    hub.notify();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(hub.watchers).toBe(0);
  });

  it("delivers a burst far larger than its buffer whole, in order, to a client that reads", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const received = readLines(hub.open(request), 3_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 3_000; i++) log.append(`b${i}`, 1_000); // ~3 MB in one batch
    hub.notify();
    const lines = await received;
    expect(lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(Array.from({ length: 3_000 }, (_, i) => `b${i}`));
  });

  it("closes a watcher whose client stops reading, without holding back the others", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { unresponsiveMs: 200 });
    const stalled = hub.open(request); // never read
    const reading = readLines(hub.open(request), 500);
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 500; i++) log.append(`s${i}`, 1_000);
    hub.notify();
    expect(await reading).toHaveLength(500);
    // Its 200 ms pass in real time: waited for, with a deadline that only a watcher never closed meets.
    await waitFor("the stalled watcher to be closed", async () => hub.watchers === 0, 10_000);
    // The stalled one was closed as unresponsive, and counted so (the reading one ended by its client).
    expect(hub.closed).toEqual({ unresponsive: 1, overBudget: 0 });
    // What it did not take was dropped at once, not kept until its client reads (or never does).
    expect(hub.queuedBytes).toBe(0);
    // Its stream ends normally after the whole frames it took, as the API server just ends such a
    // watcher's stream (facts §6): its client re-watches from its last resourceVersion.
    const body = new WatchBody(stalled);
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.partial).toBe("");
    expect(body.events.map((e) => e.object.metadata.name)).toEqual(Array.from({ length: body.events.length }, (_, i) => `s${i}`));
  });

  it("starting from an event's resourceVersion between two marks, skips the events the client saw", async () => {
    const marks = [5];
    const log = scriptedLog("log-1", "Pod", marks);
    for (let i = 0; i < 5; i++) log.append(`e${i}`); // resourceVersions 101..105
    // the last mark at or below RV 103 is the start of the log: 101..103 follow it but were seen
    const source = { ...log.source, positionOf: () => ({ after: 0, skipUpTo: "103" }) };
    const hub = new WatchHub(() => source);
    const received = readLines(hub.open({ ...request, resourceVersion: "103" }), 3);
    await new Promise((resolve) => setTimeout(resolve, 20));
    log.append("e5"); // 106
    marks.push(6);
    hub.notify();
    const names = (await received).map((l) => JSON.parse(l).object.metadata.name);
    expect(names).toEqual(["e3", "e4", "e5"]);
  });

  it("answers a watch-list at a resourceVersion with every object as ADDED, then the initial-events-end bookmark at the list's RV, then changes", async () => {
    const log = scriptedLog();
    for (let i = 0; i < 3; i++) log.append(`w${i}`); // 101..103
    const items = ["w0", "w1", "w2"].map((name, i) => JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { name, namespace: "ns", resourceVersion: String(101 + i) } }));
    const source: WatchSource = { ...log.source, listAt: () => ({ expired: false, items, keys: [], at: 3 }) };
    const hub = new WatchHub(() => source);
    // client-go's reflector in watch-list mode resumes at its last RV and waits for the bookmark.
    const received = readLines(hub.open({ ...request, resourceVersion: "102", initialEvents: true, bookmarks: true }), 5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    log.append("w3"); // 104
    hub.notify();
    const events = (await received).map((l) => JSON.parse(l));
    expect(events.map((e) => [e.type, e.object.metadata.name ?? e.object.metadata.resourceVersion])).toEqual([
      ["ADDED", "w0"],
      ["ADDED", "w1"],
      ["ADDED", "w2"],
      ["BOOKMARK", "103"],
      ["ADDED", "w3"],
    ]);
    // 1.32's blueprint of the answer's list type (base64 of its JSON): an empty PodList.
    expect(events[3].object.metadata.annotations).toEqual({ "k8s.io/initial-events-end": "true", "kubernetes.io/initial-events-list-blueprint": "eyJraW5kIjoiUG9kTGlzdCIsImFwaVZlcnNpb24iOiJ2MSIsIm1ldGFkYXRhIjp7fSwiaXRlbXMiOltdfQ==" });
  });

  it("answers a watch-list at a resourceVersion the cache does not reach with an ERROR 504 event", async () => {
    let now = 0;
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { now: () => now });
    const received = readLines(hub.open({ ...request, resourceVersion: "999", initialEvents: true, bookmarks: true }), 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    now += 3_000; // the watch cache waits 3 s for its RV to be reached
    hub.notify();
    const [error] = (await received).map((l) => JSON.parse(l));
    expect(error).toMatchObject({ type: "ERROR", object: { code: 504, reason: "Timeout", message: "Timeout: Too large resource version: 999, current: 100" } });
  });

  it("sends a filtered watcher a bookmark once a minute although every change was filtered out", async () => {
    let now = 0;
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { now: () => now });
    const rare = { ...request, bookmarks: true, labelSelector: parseLabelSelector("app=rare"), timeoutSeconds: 3_600 };
    const received = readLines(hub.open(rare), 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // One change every 20 s that the selector filters out: the watcher is never idle for a minute.
    for (let i = 0; i < 4; i++) {
      now += 20_000;
      log.append(`busy${i}`);
      hub.notify();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const [bookmark] = (await received).map((l) => JSON.parse(l));
    // Due at 60 s, after the third filtered change (RV 103): the watcher stands there.
    expect(3 * 20_000).toBe(BOOKMARK_INTERVAL_MS);
    expect(bookmark).toEqual({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: "103" } } });
  });

  it("parses each event once and encodes each frame once per encoding, for 30 filtered watchers of three formats (F12)", async () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { now: () => now });
    const selected = { namespace: "ns", labelSelector: parseLabelSelector("app=web") };
    const formats = [
      { format: { kind: "table", apiVersion: "meta.k8s.io/v1" } as const },
      { format: { kind: "metadata", apiVersion: "meta.k8s.io/v1", list: false } as const },
      { format: { kind: "json" } as const },
    ];
    const EVENTS = 20;
    const selectedEvents = EVENTS / 2;
    const watchers = formats.flatMap(({ format }) => Array.from({ length: 10 }, () => ({ format, lines: readLines(hub.open({ ...request, ...selected, format }), selectedEvents) })));
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < EVENTS; i++) {
      const app = i % 2 === 0 ? "web" : "db";
      const metadata = { name: `p${i}`, namespace: "ns", resourceVersion: String(101 + i), labels: { app }, creationTimestamp: "2026-01-01T00:00:00Z" };
      log.append(`p${i}`, 0, "ns", JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata, spec: {}, status: { phase: "Running" } }));
    }
    hub.notify();
    const received = await Promise.all(watchers.map(async (w) => ({ format: w.format.kind, lines: (await w.lines).map((l) => JSON.parse(l)) })));

    for (const { format, lines } of received) {
      expect(lines.map((l) => l.type)).toEqual(Array(selectedEvents).fill("ADDED"));
      const names = lines.map((l) => (format === "table" ? l.object.rows[0].object.metadata.name : l.object.metadata.name));
      expect(names).toEqual(Array.from({ length: selectedEvents }, (_, i) => `p${2 * i}`));
      if (format === "table") {
        // Column definitions in each watcher's first event only; the same cells for every watcher.
        expect(lines.map((l) => l.object.columnDefinitions === null)).toEqual([false, ...Array(selectedEvents - 1).fill(true)]);
        expect(lines[1].object.rows[0].cells.slice(0, 5)).toEqual(["p2", "0/0", "Running", "0", "10m"]);
      }
      if (format === "metadata") expect(lines[0].object).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "p0" } });
    }
    const sameFormat = (kind: string) => received.filter((r) => r.format === kind).map((r) => JSON.stringify(r.lines.slice(1)));
    for (const { format } of formats) expect(new Set(sameFormat(format.kind)).size).toBe(1);
    // Per watcher this was 30 × 20 parses and 30 × 10 frames; shared, each event's object is parsed
    // once for the selector, and each selected event framed once per encoding (3), but the first
    // Table event, which each Table watcher frames for itself with the column definitions.
    expect(hub.counters.parsed).toBe(EVENTS);
    expect(hub.counters.framed).toBe(selectedEvents * formats.length - 1 + 10);
  });

  it("sends a bookmark about 2 s before the watch's deadline", async () => {
    let now = 0;
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source, { now: () => now });
    const received = readLines(hub.open({ ...request, bookmarks: true, timeoutSeconds: 30 }), 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    now = 28_500;
    hub.notify();
    const [bookmark] = (await received).map((l) => JSON.parse(l));
    expect(bookmark).toMatchObject({ type: "BOOKMARK", object: { metadata: { resourceVersion: "100" } } });
  });
});

describe("WatchHub failures", () => {
  it("ends a watcher whose loop throws with an ERROR event carrying a 500 InternalError Status, then a normal end of body", async () => {
    const log = scriptedLog();
    let failing = false;
    const source: WatchSource = {
      ...log.source,
      read: (after, limit) => {
        if (failing) throw new Error("disk on fire");
        return log.source.read(after, limit);
      },
    };
    const hub = new WatchHub(() => source);
    const body = new WatchBody(hub.open(request));
    await new Promise((resolve) => setTimeout(resolve, 10));
    log.append("before");
    hub.notify();
    expect(await body.until(1)).toBeUndefined();
    failing = true;
    log.append("boom");
    hub.notify();
    // The API server ends a failing watch with one ERROR event, then the stream (issue 27 item 4).
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.partial).toBe("");
    const events = body.events;
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"]);
    expect(events[1]!.object).toMatchObject({ kind: "Status", status: "Failure", code: 500, reason: "InternalError" });
    expect(events[1]!.object.message).toContain("disk on fire");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(hub.watchers).toBe(0);
  });

  it("ends a watch from a resourceVersion the log no longer covers with an ERROR 410 Expired, then a normal end of body", async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => ({ ...log.source, positionOf: () => "expired" as const }));
    const body = new WatchBody(hub.open(request));
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.partial).toBe("");
    expect(body.events).toMatchObject([{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } }]);
  });
});

describe("WatchHub across informer incarnations", () => {
  it("never serves a deleted informer's buffered events to the watchers of its re-created successor", async () => {
    let log = scriptedLog("deleted", "Secret");
    const hub = new WatchHub(() => log.source);
    const old = readLines(hub.open(request), 3_000);
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 3_000; i++) log.append(`secret${i}`);
    hub.notify();
    expect(await old).toHaveLength(3_000); // the hub's buffer now holds the old log's 1..3000
    hub.closeAll();
    // Deleted and re-created under the same object name: a new log, at seq 2500.
    const successor = scriptedLog("recreated", "ConfigMap");
    for (let i = 0; i < 2_500; i++) successor.append(`cm${i}`);
    log = successor;
    const fresh = readLines(hub.open({ ...request, resourceVersion: "0", initialEvents: true }), 1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    successor.append("cm2500");
    hub.notify();
    const lines = await fresh;
    expect(lines.map((l) => JSON.parse(l).object.kind)).toEqual(["ConfigMap"]);
    expect(JSON.parse(lines[0]!).object.metadata.name).toBe("cm2500");
  });
});
