import { describe, expect, it } from "vitest";
import { type ReflectorOptions, type ReflectorState, type StepResult, step } from "../../src/cache/reflector.ts";
import { initialMemory, type ReflectorMemory } from "../../src/cache/reflector-memory.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { WatchDecodeError } from "../../src/kube/watch-decoder.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher, RecordingSink, expired, tooLargeRv } from "../helpers/fake-lister-watcher.ts";
import { WINDOW_TIMEOUT_SECONDS } from "../../src/cache/watch-windows.ts";

const streamCut = () => KubeApiError.connectionFailed(new Error("the watch stream ended in the middle of an event"));
const event = (type: WatchEvent["type"], object: KubeObject): WatchEvent => ({ type, object });
const bookmark = (rv: string): WatchEvent => ({ type: "BOOKMARK", object: { kind: "Pod", metadata: { resourceVersion: rv } } });
const errorEvent = (code: number, reason: string): WatchEvent => ({
  type: "ERROR",
  object: { kind: "Status", code, reason, message: `${reason}!` } as unknown as KubeObject,
});

function harness(
  lw: FakeListerWatcher,
  options: Omit<ReflectorOptions, "pageSize"> = {},
  start: { state?: ReflectorState; memory?: ReflectorMemory; sink?: RecordingSink } = {},
) {
  const clock = new FakeClock();
  const sink = start.sink ?? new RecordingSink();
  let state: ReflectorState = start.state ?? { kind: "idle" };
  let memory: ReflectorMemory = start.memory ?? initialMemory;
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
        { batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]], end: streamCut() },
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

  it("clears lastError once a watch is open again after a refused connection: the error no longer stands", async () => {
    // Without it an informer that resumed its watch (no relist) kept reporting "connection refused",
    // and /metrics its last_error_info ("while it stands"), until its next relist, maybe never.
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [{ error: new KubeApiError(0, "ConnectionFailed", "refused") }, { batches: [[bookmark("11")]], end: "close" }],
    });
    const h = harness(lw);
    await h.run(3, 0);
    expect(h.memory.lastError).toMatch(/refused/);
    await h.run(1, 0);
    expect(lw.lists).toHaveLength(1);
    expect(h.sink.watchMemory).toMatchObject({ lastError: null, lastErrorReason: null, lastErrorAt: null });
    expect(h.memory).toMatchObject({ lastError: null, lastErrorReason: null, lastErrorAt: null });
    expect(h.state.kind).toBe("watching");
  });

  it("re-watches from the last applied RV after backoff when the stream breaks mid-event", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }],
      watches: [
        { batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]], end: streamCut() },
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

  describe("watch windows (maxLagSeconds, issue 19)", () => {
    const windows = { maxLagSeconds: 60 };
    const synced = () => ({ lists: [{ items: [], resourceVersion: "10" }] });

    it("ends a window at its first bookmark, sleeps maxLagSeconds, then resumes from the bookmark's RV without relisting", async () => {
      const lw = new FakeListerWatcher({
        ...synced(),
        watches: [
          // the backlog, then the pre-timeout bookmark; what would follow it is never read
          { batches: [[event("ADDED", pod({ name: "a", rv: "11" }))], 30, [bookmark("15")], 60_000, [event("ADDED", pod({ name: "late", rv: "16" }))]] },
          { batches: [[bookmark("17")]] },
        ],
      });
      const h = harness(lw, windows);
      await h.run(3, 0); // idle → listing → watching → (the window)
      expect(lw.watches[0]).toMatchObject({ resourceVersion: "10", timeoutSeconds: WINDOW_TIMEOUT_SECONDS });
      expect(h.sink.applied.map((a) => [a.events.length, a.resourceVersion])).toEqual([
        [1, "11"],
        [0, "15"],
      ]);
      expect(h.state).toEqual({ kind: "sleeping" });
      expect(h.results[2]!.wakeAt).toBe(h.clock.now() + 60_000);
      await h.run(1, 0); // sleeping → (the next window)
      expect(lw.watches.map((w) => w.resourceVersion)).toEqual(["10", "15"]);
      expect(lw.lists).toHaveLength(1);
      expect(h.state).toEqual({ kind: "sleeping" });
    });

    it.each([
      ["sleeps after a window that delivered nothing: nothing was pending", [], "sleeping", 60_000],
      ["opens the next window at once after one that delivered events: more may be pending", [[event("ADDED", pod({ name: "a", rv: "11" }))]], "watching", 0],
    ] as [string, WatchEvent[][], string, number][])("without a bookmark (a server that sends none) %s", async (_, batches, next, waitMs) => {
      // The server closes the window at its timeout (a close at once would be a very short watch).
      const atTimeout = () => h.clock.advance(WINDOW_TIMEOUT_SECONDS * 1000);
      const lw = new FakeListerWatcher({ ...synced(), watches: [{ batches, end: "close", beforeEnd: atTimeout }] });
      const h = harness(lw, windows);
      await h.run(3, 0);
      expect(h.memory.lastError).toBeNull();
      expect(h.state.kind).toBe(next);
      expect(h.results[2]!.wakeAt).toBe(h.clock.now() + waitMs);
    });

    it("relists when the window's resume finds its RV expired (410), as ever", async () => {
      const lw = new FakeListerWatcher({
        lists: [
          { items: [], resourceVersion: "10" },
          { items: [], resourceVersion: "40" },
        ],
        watches: [{ batches: [[bookmark("15")]] }, { batches: [[errorEvent(410, "Expired")]] }],
      });
      const h = harness(lw, windows);
      await h.run(4, 0); // … → the window → sleeping → (the next window) 410
      expect(h.state.kind).toBe("idle");
      await h.run(2, 0);
      expect(lw.lists.map((l) => l.resourceVersion)).toEqual(["0", "15"]);
      expect(h.memory.relists).toBe(1);
    });

    it("holds a full session while something keeps it awake, and ends at the first bookmark after that stops", async () => {
      // keepAwake's answers: at the open (a full session's timeout), at the first bookmark, at the second.
      const answers = [true, true, false];
      const lw = new FakeListerWatcher({ ...synced(), watches: [{ batches: [[bookmark("12")], 30, [bookmark("13")], 60_000, [bookmark("14")]] }] });
      const h = harness(lw, { ...windows, keepAwake: () => answers.shift() ?? false });
      await h.run(3, 0);
      expect(lw.watches[0]!.timeoutSeconds).toBeGreaterThanOrEqual(300);
      expect(h.sink.rv).toBe("13");
      expect(h.state).toEqual({ kind: "sleeping" });
    });

    it("never sleeps with maxLagSeconds 0: bookmarks only advance the RV, a close re-watches at once", async () => {
      const lw = new FakeListerWatcher({ ...synced(), watches: [{ batches: [[bookmark("12")], 30, [bookmark("13")]], end: "close" }] });
      const h = harness(lw, { maxLagSeconds: 0 });
      await h.run(3, 0);
      expect(lw.watches[0]!.timeoutSeconds).toBeGreaterThanOrEqual(300);
      expect(h.sink.applied.map((a) => a.resourceVersion)).toEqual(["12", "13"]);
      expect(h.results[2]).toMatchObject({ state: { kind: "watching" }, wakeAt: h.clock.now() });
    });
  });

  describe("hardening (issue 7)", () => {
    const listing = (listRv: string, extra: Partial<Extract<ReflectorState, { kind: "listing" }>> = {}): ReflectorState => ({
      kind: "listing",
      listRv,
      limit: 500,
      ...extra,
    });

    it("starts the list over when a listing state without a continue token resumes (item 1)", async () => {
      // An eviction during page 1: the state is still listing{page 1}, and staging holds part of
      // the old snapshot. The resumed page 1 is a new snapshot, so what was staged must go.
      const sink = new RecordingSink();
      sink.staged = [pod({ name: "deleted-meanwhile", rv: "3" })];
      const lw = new FakeListerWatcher({ lists: [{ items: [pod({ name: "a", rv: "5" })], resourceVersion: "9" }] });
      const h = harness(lw, {}, { state: listing("0"), sink });
      await h.run(1);
      expect(sink.beginLists).toBe(1);
      expect(sink.commits[0]!.objects.map((o) => o.metadata.name)).toEqual(["a"]);
    });

    it("does not start over when a continuation page resumes: it is the same snapshot", async () => {
      const sink = new RecordingSink();
      sink.staged = [pod({ name: "page-1", rv: "3" })];
      const lw = new FakeListerWatcher({ lists: [{ items: [pod({ name: "page-2", rv: "5" })], resourceVersion: "9" }] });
      const h = harness(lw, {}, { state: listing("0", { continue: "t1", snapshotRv: "9" }), sink });
      await h.run(1);
      expect(sink.beginLists).toBe(0);
      expect(lw.lists).toEqual([{ continue: "t1", limit: 500 }]);
      expect(sink.commits[0]!.objects.map((o) => o.metadata.name)).toEqual(["page-1", "page-2"]);
    });

    it("relists at RV \"\" (quorum), not \"0\", when a fresh reflector finds a populated cache (item 2)", async () => {
      // restart() after a selector change forgets the RV but keeps the cache: a lagging watch cache
      // answering RV "0" could hand back states older than the cached ones.
      const sink = new RecordingSink();
      sink.cached = true;
      const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "9" }] });
      const h = harness(lw, {}, { sink });
      await h.run(2);
      expect(lw.lists.map((l) => l.resourceVersion)).toEqual([""]);
    });

    it("resumes an interrupted page 1 at RV \"0\" as RV \"\" once the cache holds objects (items 1 and 2)", async () => {
      const sink = new RecordingSink();
      sink.cached = true; // the initial list applied part of page 1 directly before the eviction
      const lw = new FakeListerWatcher({ lists: [{ items: [], resourceVersion: "9" }] });
      const h = harness(lw, {}, { state: listing("0"), sink });
      await h.run(1);
      expect(lw.lists.map((l) => l.resourceVersion)).toEqual([""]);
      expect(sink.beginLists).toBe(1);
    });

    it("retries a failed continuation page with its token after backoff, honouring Retry-After (item 9)", async () => {
      const lw = new FakeListerWatcher({
        lists: [
          { items: [pod({ name: "a", rv: "5" })], resourceVersion: "9", continue: "t1" },
          { error: new KubeApiError(503, "ServiceUnavailable", "busy", [], 45) },
          { items: [pod({ name: "b", rv: "6" })], resourceVersion: "9" },
        ],
      });
      const h = harness(lw);
      await h.run(3, 0); // idle → page 1 → page 2 fails
      expect(h.state).toMatchObject({ kind: "listing", continue: "t1" });
      expect(h.results[2]!.wakeAt).toBeGreaterThanOrEqual(h.clock.now() + 45_000);
      expect(h.memory.lastError).toMatch(/busy/);
      await h.run(1);
      expect(lw.lists.map((l) => l.continue ?? `rv=${l.resourceVersion}`)).toEqual(["rv=0", "t1", "t1"]);
      expect(h.sink.commits[0]!.objects.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    });

    it("counts a bookmark as an event: a short watch that brought one is not a very short watch (item 5)", async () => {
      const lw = new FakeListerWatcher({
        lists: [{ items: [], resourceVersion: "10" }],
        watches: [{ batches: [[bookmark("12")]], end: "close" }],
      });
      const h = harness(lw);
      await h.run(3, 0);
      expect(h.state.kind).toBe("watching");
      expect(h.results[2]!.wakeAt).toBe(h.clock.now());
      expect(h.memory.lastError).toBeNull();
    });

    it("relists after a malformed line instead of re-watching from the same RV (item 3)", async () => {
      const lw = new FakeListerWatcher({
        lists: [{ items: [], resourceVersion: "10" }],
        watches: [{ batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]], end: new WatchDecodeError("malformed watch event") }],
      });
      const h = harness(lw);
      await h.run(3, 0);
      expect(h.sink.applied.map((x) => x.resourceVersion)).toEqual(["11"]);
      expect(h.state.kind).toBe("idle");
      expect(h.memory.lastError).toMatch(/malformed/);
    });

    it("does not take a failure of its own storage for a transport error: the step throws (item 3)", async () => {
      const sink = new RecordingSink();
      sink.applyWatch = () => {
        throw new Error("disk full");
      };
      const lw = new FakeListerWatcher({
        lists: [{ items: [], resourceVersion: "10" }],
        watches: [{ batches: [[event("ADDED", pod({ name: "a", rv: "11" }))]] }],
      });
      const h = harness(lw, {}, { sink });
      await h.run(2); // idle → listing → watching
      await expect(h.run(1)).rejects.toThrow(/disk full/);
    });
  });
});

describe("Reflector with listInPages (slices killed listing, review B9)", () => {
  const pages = () =>
    new FakeListerWatcher({
      lists: [
        { items: [pod({ name: "a" })], resourceVersion: "20", continue: "c1" },
        { items: [pod({ name: "b" })], resourceVersion: "20" },
      ],
    });

  it("lists at RV \"\" in pages, not in one answer at RV \"0\" (the watch cache ignores a limit there)", async () => {
    const lw = pages();
    const h = harness(lw, { listInPages: true });
    await h.run(3);
    expect(lw.lists).toEqual([{ resourceVersion: "", limit: 500 }, { continue: "c1", limit: 500 }]);
    expect(h.sink.commits.map((c) => [c.resourceVersion, c.objects.length])).toEqual([["20", 2]]);
  });

  it("turns a listing state persisted at RV \"0\" (the killed slice's) into a paged list at RV \"\"", async () => {
    const lw = pages();
    const h = harness(lw, { listInPages: true }, { state: { kind: "listing", listRv: "0", limit: 500 } });
    await h.run(1);
    expect(lw.lists).toEqual([{ resourceVersion: "", limit: 500 }]);
    expect(h.state).toEqual({ kind: "listing", listRv: "", limit: 500, continue: "c1", snapshotRv: "20" });
  });

  it("relists in pages at RV \"\" rather than in one answer at the last RV", async () => {
    const lw = pages();
    const sink = new RecordingSink();
    sink.rv = "11";
    const h = harness(lw, { listInPages: true }, { sink });
    await h.run(1);
    expect(h.state).toEqual({ kind: "listing", listRv: "", limit: 500 });
  });

  it("keeps paging when a continue token expired, instead of one full list", async () => {
    const lw = new FakeListerWatcher({
      lists: [
        { items: [pod({ name: "a" })], resourceVersion: "20", continue: "c1" },
        { error: expired("The provided continue parameter is too old") },
        { items: [pod({ name: "a" })], resourceVersion: "31" },
      ],
    });
    const h = harness(lw, { listInPages: true });
    await h.run(4);
    expect(lw.lists).toEqual([{ resourceVersion: "", limit: 500 }, { continue: "c1", limit: 500 }, { resourceVersion: "", limit: 500 }]);
  });
});

