import { describe, expect, it } from "vitest";
import {
  initialMemory,
  type ReflectorMemory,
  type ReflectorState,
  type StepResult,
  step,
} from "../../src/cache/reflector.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { WatchDecodeError } from "../../src/kube/watch-decoder.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher, RecordingSink, expired, tooLargeRv } from "../helpers/fake-lister-watcher.ts";

const event = (type: WatchEvent["type"], object: KubeObject): WatchEvent => ({ type, object });
const bookmark = (rv: string): WatchEvent => ({ type: "BOOKMARK", object: { kind: "Pod", metadata: { resourceVersion: rv } } });
const errorEvent = (code: number, reason: string): WatchEvent => ({
  type: "ERROR",
  object: { kind: "Status", code, reason, message: `${reason}!` } as unknown as KubeObject,
});

function harness(lw: FakeListerWatcher, options: { watchTimeoutSeconds?: number } = {}) {
  const clock = new FakeClock();
  const sink = new RecordingSink();
  let state: ReflectorState = { kind: "idle" };
  let memory: ReflectorMemory = initialMemory;
  const results: StepResult[] = [];
  return {
    clock,
    sink,
    get state() {
      return state;
    },
    get memory() {
      return memory;
    },
    results,
    /** Runs `n` steps, applying each result as the informer would. */
    async run(n: number, advanceMs = 2_000) {
      for (let i = 0; i < n; i++) {
        const result = await step(state, memory, {
          lw,
          sink,
          clock,
          random: () => 0.5,
          options: { pageSize: 500, ...options },
          deadline: clock.now() + 3_600_000,
        });
        results.push(result);
        state = result.state;
        memory = result.memory;
        clock.advance(advanceMs);
      }
    },
  };
}

describe("Reflector", () => {
  it("lists at RV 0 with limit 500, commits at the list's RV, then watches from it with bookmarks and a timeout in [300, 600)", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [pod({ name: "a", rv: "7" })], resourceVersion: "10" }],
      watches: [{ batches: [[event("ADDED", pod({ name: "b", rv: "11" }))]] }],
    });
    const h = harness(lw);
    await h.run(3); // idle → listing → watching → (watch session)
    expect(lw.lists).toEqual([{ resourceVersion: "0", limit: 500 }]);
    expect(h.sink.commits.map((c) => [c.resourceVersion, c.objects.length])).toEqual([["10", 1]]);
    expect(lw.watches).toHaveLength(1);
    expect(lw.watches[0]!.resourceVersion).toBe("10");
    expect(lw.watches[0]!.timeoutSeconds).toBeGreaterThanOrEqual(300);
    expect(lw.watches[0]!.timeoutSeconds).toBeLessThan(600);
    expect(h.sink.rv).toBe("11");
  });

  it("pages with the first page's RV and no RV on continuation pages", async () => {
    const lw = new FakeListerWatcher({
      lists: [
        { items: [pod({ name: "a" })], resourceVersion: "20", continue: "c1" },
        { items: [pod({ name: "b" })], resourceVersion: "25", continue: "c2" },
        { items: [pod({ name: "c" })], resourceVersion: "30" },
      ],
    });
    const h = harness(lw);
    await h.run(4);
    expect(lw.lists).toEqual([
      { resourceVersion: "0", limit: 500 },
      { continue: "c1", limit: 500 },
      { continue: "c2", limit: 500 },
    ]);
    // every page belongs to page 1's snapshot
    expect(h.sink.commits.map((c) => [c.resourceVersion, c.objects.map((o) => o.metadata.name)])).toEqual([
      ["20", ["a", "b", "c"]],
    ]);
    // a paginated answer to an RV "0" list means the server pages: keep the limit on relists
    expect(h.memory.paginatedResult).toBe(true);
  });

  it("falls back to one full list without limit at the original RV when a continue token expired", async () => {
    const lw = new FakeListerWatcher({
      lists: [
        { items: [pod({ name: "a" })], resourceVersion: "20", continue: "c1" },
        { error: expired("The provided continue parameter is too old") },
        { items: [pod({ name: "a" }), pod({ name: "b" })], resourceVersion: "31" },
      ],
    });
    const h = harness(lw);
    await h.run(4);
    expect(lw.lists).toEqual([{ resourceVersion: "0", limit: 500 }, { continue: "c1", limit: 500 }, { resourceVersion: "0" }]);
    expect(h.sink.beginLists).toBe(2); // staging of the broken list was dropped
    expect(h.sink.commits.map((c) => [c.resourceVersion, c.objects.length])).toEqual([["31", 2]]);
  });

  it.each([
    ["410 Expired", expired()],
    ["504 too large resource version", tooLargeRv()],
  ])("relists at once at RV \"\" after a list fails with %s, then backs off if that fails too", async (_, error) => {
    const lw = new FakeListerWatcher({ lists: [{ error }, { error }] });
    const h = harness(lw);
    h.sink.rv = "57";
    await h.run(2, 0);
    expect(h.results[1]!.wakeAt).toBe(h.clock.now()); // immediate retry
    await h.run(2, 0);
    expect(lw.lists).toEqual([{ resourceVersion: "57" }, { resourceVersion: "", limit: 500 }]);
    expect(h.results[3]!.wakeAt).toBeGreaterThan(h.clock.now());
    expect(h.memory.rvUnavailable).toBe(true);
  });

  it("drops the limit when relisting at a specific RV (served not-older-than by the watch cache)", async () => {
    const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "60" }] });
    const h = harness(lw);
    h.sink.rv = "57";
    await h.run(2);
    expect(lw.lists).toEqual([{ resourceVersion: "57" }]);
    expect(h.memory.relists).toBe(1);
  });

  it("re-watches from the last RV after a clean close, without relisting", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [
        { batches: [[event("MODIFIED", pod({ name: "a", rv: "12" }))]] },
        { batches: [[event("DELETED", pod({ name: "a", rv: "13" }))]] },
      ],
    });
    const h = harness(lw);
    await h.run(4);
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(["10", "12"]);
    expect(lw.lists).toHaveLength(1);
    expect(h.results[2]!.wakeAt).toBeLessThanOrEqual(h.clock.now());
    expect(h.memory.watchRestarts).toBe(1);
  });

  it("relists after backoff when a watch closes at once with no events (very short watch)", async () => {
    const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "10" }], watches: [{ batches: [] }] });
    const h = harness(lw);
    await h.run(3, 0);
    expect(h.state).toEqual({ kind: "idle" });
    expect(h.results[2]!.wakeAt).toBeGreaterThan(h.clock.now());
    expect(h.memory.lastError).toMatch(/very short watch/);
  });

  it("applies events before an in-stream 410, then relists at lastSyncRV (not at \"\")", async () => {
    const lw = new FakeListerWatcher({
      lists: [
        { items: [], resourceVersion: "10" },
        { items: [], resourceVersion: "40" },
      ],
      watches: [{ batches: [[event("ADDED", pod({ name: "a", rv: "11" })), errorEvent(410, "Expired")]] }],
    });
    const h = harness(lw);
    await h.run(5);
    expect(h.sink.applied.map((a) => a.resourceVersion)).toEqual(["11"]);
    expect(lw.lists.map((l) => l.resourceVersion)).toEqual(["0", "11"]);
    expect(h.memory.rvUnavailable).toBe(false);
  });

  it("advances the RV on bookmarks without handing them over as objects", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [{ batches: [[bookmark("15")], 50, [event("ADDED", pod({ name: "a", rv: "16" })), bookmark("20")]] }],
    });
    const h = harness(lw);
    await h.run(3);
    expect(h.sink.applied).toEqual([
      { events: [], resourceVersion: "15" },
      { events: [event("ADDED", pod({ name: "a", rv: "16" }))], resourceVersion: "20" },
    ]);
  });

  it("applies events that arrive close together as one batch, and later ones separately", async () => {
    const a = (rv: string) => event("MODIFIED", pod({ name: "a", rv }));
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [{ batches: [[a("11")], [a("12")], [a("13")], 60, [a("14")]] }],
    });
    const h = harness(lw);
    await h.run(3);
    expect(h.sink.applied.map((x) => [x.events.length, x.resourceVersion])).toEqual([
      [3, "13"], // three chunks within the batching window: one transaction
      [1, "14"], // after a pause: its own
    ]);
  });

  it("applies the events read before a stream error, then re-watches from them", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [
        { batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]], end: new WatchDecodeError("cut") },
        { batches: [] , end: "close" },
      ],
    });
    const h = harness(lw);
    await h.run(4);
    expect(h.sink.applied.map((x) => x.resourceVersion)).toEqual(["11"]);
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(["10", "11"]);
  });

  it.each([
    ["connection refused", new KubeApiError(0, "ConnectionFailed", "refused"), "watching"],
    ["429", new KubeApiError(429, "TooManyRequests", "slow down"), "watching"],
    ["403", new KubeApiError(403, "Forbidden", "no"), "idle"],
    ["410", expired(), "idle"],
  ])("after a failed watch request (%s) backs off into %s", async (_, error, next) => {
    const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "10" }], watches: [{ error }] });
    const h = harness(lw);
    await h.run(3, 0);
    expect(h.state.kind).toBe(next);
    expect(h.results[2]!.wakeAt).toBeGreaterThan(h.clock.now());
  });

  it("re-watches from the last applied RV after backoff when the stream breaks mid-event", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [
        { batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]], end: new WatchDecodeError("cut") },
        { batches: [[event("ADDED", pod({ name: "b", rv: "12" }))]] },
      ],
    });
    const h = harness(lw);
    await h.run(4);
    expect(lw.watches.map((w) => w.resourceVersion)).toEqual(["10", "11"]);
    expect(lw.lists).toHaveLength(1);
  });

  it("does not advance the RV on synthetic ADDED events of a watch from RV \"\"", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "" }],
      watches: [
        {
          batches: [[event("ADDED", pod({ name: "b", rv: "30" })), event("ADDED", pod({ name: "a", rv: "20" }))], 50, [bookmark("31")]],
        },
      ],
    });
    const h = harness(lw);
    await h.run(3);
    expect(h.sink.applied.map((a) => a.resourceVersion)).toEqual(["", "31"]);
  });

  it("uses a configured watch timeout", async () => {
    const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "1" }], watches: [{ batches: [[bookmark("2")]] }] });
    const h = harness(lw, { watchTimeoutSeconds: 5 });
    await h.run(3);
    expect(lw.watches[0]!.timeoutSeconds).toBe(5);
  });
});
