/**
 * `/k8s` watches over a real informer's log, where the log is not in resourceVersion order: the
 * DeltaFIFO pops a watch chunk key by key, and a relist's Replace in key order over several
 * transactions. A watch from N delivers every event with an RV above N, in RV order, and a client
 * whose stream ends anywhere and re-watches from its last RV loses nothing (issue 18, F7).
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { WatchHub } from "../../src/k8s/watch-hub.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { watchSourceOf } from "../../src/k8s/informer-watch-source.ts";
import { withDb } from "../helpers/db.ts";
import { readLines } from "../helpers/watch-lines.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

const pods = describeResource("pods", undefined)!;
const request = { info: pods, format: { kind: "json" } as const, includeObject: "Metadata" as const, bookmarks: false, initialEvents: false, timeoutSeconds: 5 };
const key = (i: number) => `k${String(i).padStart(3, "0")}`;
const KEYS = 700;

/** RVs of the events in a watch stream, read until it ends or has `count` events. */
async function streamedVersions(stream: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  return (await readLines(stream, count))
    .slice(0, count)
    .map((line) => (JSON.parse(line) as { object: { metadata: { resourceVersion: string } } }).object.metadata.resourceVersion);
}

/** An informer whose log's growth wakes a hub over it, as the informer object wires them. */
function wired(db: Db, clock = new FakeClock(), retention?: { maxAgeSeconds: number }) {
  const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5, ...(retention ? { retention } : {}) }, "resume");
  let hub: WatchHub | undefined;
  const informer = new Informer(db, informerSettings(spec), clock, () => 0.5, () => hub?.notify());
  hub = new WatchHub(() => watchSourceOf(informer));
  return { informer, hub };
}

/** A relist of `objects` at `rv`, committed. */
function relist(informer: Informer, objects: KubeObject[], rv: string): void {
  informer.beginList();
  informer.stage(objects);
  informer.commitList(rv, { state: { kind: "watching" }, memory: initialMemory });
}

/**
 * The RVs watches from each start receive (each as many as it expects); `next` is applied once the
 * first is open, so it gets that change live and the later ones find it in the log.
 */
async function expectResumes(hub: WatchHub, starts: readonly (readonly [string, readonly string[]])[], next: () => void): Promise<void> {
  for (const [i, [from, expected]] of starts.entries()) {
    const received = streamedVersions(hub.open({ ...request, resourceVersion: from, timeoutSeconds: 60 }), expected.length);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the watcher is open before the change
    if (i === 0) next();
    expect(await received, `from ${from}`).toEqual(expected);
  }
}

describe("watch resume over a log out of resourceVersion order", () => {
  it("delivers every event after N in RV order, and a re-watch from any event's RV loses none", () =>
    withDb(async (db) => {
      const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5 }, "resume");
      const informer = new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5);
      // The initial list: 100 pods, RV 1..100, marked at RV 100.
      informer.beginList();
      informer.stage(Array.from({ length: 100 }, (_, i) => pod({ name: `p${i}`, rv: String(i + 1) })));
      informer.commitList("100", { state: { kind: "watching" }, memory: initialMemory });
      // One watch chunk of 1,400 events: each key added (101..800), then modified (801..1500); popped
      // key by key, the log holds 101, 801, 102, 802, … in one transaction.
      const chunk: WatchEvent[] = [];
      for (let i = 0; i < KEYS; i++) chunk.push({ type: "ADDED", object: pod({ name: key(i), rv: String(101 + i) }) });
      for (let i = 0; i < KEYS; i++) chunk.push({ type: "MODIFIED", object: pod({ name: key(i), rv: String(801 + i) }) });
      informer.applyWatch(chunk, "1500");
      // A relist finds every k changed, the later in key order the older (RV 2699 down to 2000): its
      // Replace is popped in 500-key transactions, so RVs run backwards across two transactions.
      informer.beginList();
      informer.stage([
        ...Array.from({ length: 100 }, (_, i) => pod({ name: `p${i}`, rv: String(i + 1) })),
        ...Array.from({ length: KEYS }, (_, i) => pod({ name: key(i), rv: String(2699 - i) })),
      ]);
      informer.commitList("2700", { state: { kind: "watching" }, memory: initialMemory });
      await informer.processQueue();
      // Small chunks whose keys interleave.
      informer.applyWatch(
        [
          { type: "MODIFIED", object: pod({ name: key(0), rv: "2701" }) },
          { type: "MODIFIED", object: pod({ name: key(1), rv: "2702" }) },
          { type: "MODIFIED", object: pod({ name: key(0), rv: "2703" }) },
        ],
        "2703",
      );
      informer.applyWatch([{ type: "MODIFIED", object: pod({ name: key(2), rv: "2704" }) }], "2710");

      const expected = [
        ...Array.from({ length: 1400 }, (_, i) => String(101 + i)),
        ...Array.from({ length: KEYS }, (_, i) => String(2000 + i)),
        "2701",
        "2702",
        "2703",
        "2704",
      ];
      const hub = new WatchHub(() => watchSourceOf(informer));
      const all = await streamedVersions(hub.open({ ...request, resourceVersion: "100" }), expected.length);
      expect(all).toEqual(expected);

      // Re-watch from the last RV a client got, for a stream ended at every boundary the log or a
      // reader has: every 50 events, each side of 1,000-event slices and of every transaction run.
      const ends = new Set<number>([1, expected.length - 1]);
      for (let k = 50; k < expected.length; k += 50) ends.add(k);
      for (const boundary of [1000, 1400, 2000, 2100, 2103]) for (const k of [boundary - 1, boundary, boundary + 1]) ends.add(k);
      for (const k of [...ends].sort((a, b) => a - b)) {
        const resumed = await streamedVersions(hub.open({ ...request, resourceVersion: all[k - 1]! }), expected.length - k);
        expect(resumed, `re-watched from ${all[k - 1]} after ${k} events`).toEqual(expected.slice(k));
      }
    }));

  it("holds a relist's Replace back until its last transaction is applied, then wakes the watchers at once", () =>
    withDb(async (db) => {
      const { informer, hub } = wired(db);
      relist(informer, [pod({ name: "a", rv: "1" })], "1");
      const received = streamedVersions(hub.open({ ...request, resourceVersion: "1", timeoutSeconds: 60 }), KEYS);
      relist(informer, [pod({ name: "a", rv: "1" }), ...Array.from({ length: KEYS }, (_, i) => pod({ name: key(i), rv: String(2000 - i) }))], "2000");
      await informer.processQueue(); // two transactions, then the mark
      const versions = await Promise.race([received, new Promise<"asleep">((resolve) => setTimeout(() => resolve("asleep"), 2_000))]);
      expect(versions).toEqual(Array.from({ length: KEYS }, (_, i) => String(1301 + i)));
    }));

  it("resumes from any event of the last transaction after age retention and an upstream bookmark, as the watch cache keeps its last events (F20)", () =>
    withDb(async (db) => {
      const clock = new FakeClock();
      const { informer, hub } = wired(db, clock, { maxAgeSeconds: 60 });
      relist(informer, [pod({ name: "a", rv: "1" })], "1");
      // The last transaction holds three events; then the resource is quiet for longer than retention.
      informer.applyWatch(
        [
          { type: "ADDED", object: pod({ name: "b", rv: "101" }) },
          { type: "MODIFIED", object: pod({ name: "a", rv: "102" }) },
          { type: "ADDED", object: pod({ name: "c", rv: "103" }) },
        ],
        "103",
      );
      clock.advance(10 * 60_000);
      informer.compactLog();
      informer.applyWatch([], "150"); // the upstream watch's bookmark: the cache is complete at 150
      informer.compactLog();
      const starts = [
        ["103", ["151"]],
        ["102", ["103", "151"]],
        ["150", ["151"]],
      ] as const;
      await expectResumes(hub, starts, () => informer.applyWatch([{ type: "ADDED", object: pod({ name: "d", rv: "151" }) }], "151"));
    }));

  it("resumes from a list's resourceVersion after a bookmark re-marked the log's tail with no change in between (F20)", () =>
    withDb(async (db) => {
      const { informer, hub } = wired(db);
      relist(informer, [pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" }), pod({ name: "c", rv: "3" })], "10"); // a client lists here: RV 10
      informer.applyWatch([], "150"); // the upstream watch's bookmark, before any change
      const starts = (["10", "120", "150"] as const).map((from) => [from, ["151"]] as const);
      await expectResumes(hub, starts, () => informer.applyWatch([{ type: "ADDED", object: pod({ name: "d", rv: "151" }) }], "151"));
      // The mark still tells both ends of what it covers: no skip from within it, a skip past it.
      expect(informer.positionOf("10")).toEqual({ after: 3 });
      expect(informer.positionOf("150")).toEqual({ after: 3 });
      expect(informer.positionOf("5")).toBe("expired");
    }));

  it.each([
    ["popped alone", false],
    ["popped with the next watch chunk", true],
  ])("stamps a relist's inferred deletes with the relist's RV, after its other events, and a re-watch from any RV a stream showed loses none: %s (N4)", (_, chunkDuringReplace) =>
    withDb(async (db) => {
      const { informer, hub } = wired(db);
      relist(informer, ["a", "b", "c", "d", "e", "f"].map((name, i) => pod({ name, rv: String(i + 1) })), "6");
      informer.applyWatch(
        [
          { type: "MODIFIED", object: pod({ name: "c", rv: "10" }) },
          { type: "ADDED", object: pod({ name: "g", rv: "11" }) },
        ],
        "11",
      );
      // The upstream watch expired (410): the relist at RV 20 finds b changed, h new, c, d, e, f gone.
      relist(informer, [pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "15" }), pod({ name: "g", rv: "11" }), pod({ name: "h", rv: "18" })], "20");
      const next = () =>
        informer.applyWatch(
          [
            { type: "MODIFIED", object: pod({ name: "a", rv: "21" }) },
            { type: "MODIFIED", object: pod({ name: "b", rv: "22" }) },
          ],
          "22",
        );
      // The next chunk pops the Replace's backlog with its own events (one run, marked at 22), or
      // follows the Replace's own mark at 20.
      if (chunkDuringReplace) next();
      else {
        await informer.processQueue();
        next();
      }

      // The events of a watch from `rv`, up to the last change (b@22), which every watch from before it gets.
      const watchFrom = async (rv: string) => {
        const reader = hub.open({ ...request, resourceVersion: rv }).getReader();
        const decoder = new TextDecoder();
        let text = "";
        while (!text.includes('"resourceVersion":"22"')) {
          const chunk = await reader.read();
          if (chunk.done) break;
          text += decoder.decode(chunk.value, { stream: true });
        }
        await reader.cancel();
        return text
          .split("\n")
          .filter(Boolean)
          .map((line) => {
            const { type, object } = JSON.parse(line) as { type: string; object: KubeObject };
            return { type, name: object.metadata.name!, rv: object.metadata.resourceVersion! };
          });
      };
      const all = await watchFrom("6");
      // What the API server would have sent: each deletion at an RV after the events before it (the
      // relist's: when it happened is unknown), never the deleted object's old RV.
      expect(all.map((e) => `${e.type} ${e.name}@${e.rv}`)).toEqual([
        "MODIFIED c@10",
        "ADDED g@11",
        "MODIFIED b@15",
        "ADDED h@18",
        "DELETED c@20",
        "DELETED d@20",
        "DELETED e@20",
        "DELETED f@20",
        "MODIFIED a@21",
        "MODIFIED b@22",
      ]);
      // A client whose stream ended after any event re-watches from that event's RV: its RVs never go
      // back, and it ends in the state the whole stream gives (a repeated inferred delete is a no-op).
      const apply = (state: Map<string, string>, events: typeof all) => {
        for (const e of events) {
          if (e.type === "DELETED") state.delete(e.name);
          else state.set(e.name, e.rv);
        }
        return state;
      };
      const listed = () => new Map(["a", "b", "c", "d", "e", "f"].map((name, i) => [name, String(i + 1)]));
      const final = [...apply(listed(), all)].sort();
      for (let k = 1; k < all.length; k++) {
        const from = all[k - 1]!.rv;
        const rest = await watchFrom(from);
        expect(rest.every((e) => BigInt(e.rv) >= BigInt(from)), `re-watched from ${from} after ${k} events`).toBe(true);
        const state = apply(apply(listed(), all.slice(0, k)), rest);
        expect([...state].sort(), `re-watched from ${from} after ${k} events`).toEqual(final);
      }
    }));

  it("skips all of a merged run a watch starts inside, though an earlier watcher found a shorter run there before the runs merged (found by test/k8s/relay-schedules.test.ts)", () =>
    withDb(async (db) => {
      const { informer, hub } = wired(db);
      relist(informer, [], "10");
      const change = (type: WatchEvent["type"], name: string, rv: number): WatchEvent => ({ type, object: pod({ name, rv: String(rv) }) });
      informer.applyWatch([change("ADDED", "a", 11), change("ADDED", "b", 12)], "13");
      // A watcher from inside that run is told where it ends (the hub keeps run ends it found).
      expect(await streamedVersions(hub.open({ ...request, resourceVersion: "11", timeoutSeconds: 60 }), 1)).toEqual(["12"]);
      // Watch-only runs in a row merge into one: the mark at the first run's end is gone.
      informer.applyWatch([change("MODIFIED", "a", 14), change("ADDED", "c", 15)], "16");
      informer.applyWatch([change("MODIFIED", "b", 17)], "18");
      expect(informer.positionOf("15")).toEqual({ after: 0, skipUpTo: "15" });
      // From 15 inside the merged run: only what came after 15, never 14 again.
      const received = streamedVersions(hub.open({ ...request, resourceVersion: "15", timeoutSeconds: 60 }), 2);
      await new Promise((resolve) => setTimeout(resolve, 10));
      informer.applyWatch([change("MODIFIED", "c", 19)], "19");
      expect(await received).toEqual(["17", "19"]);
    }));
});
