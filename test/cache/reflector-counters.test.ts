/**
 * The reflector's operators' counters (cache/reflector-counters.ts): each way back to a list is
 * counted under its cause, pages, watch starts and drops are counted, and the last error gets a
 * reason from a closed set — all in the memory the informer persists with every step.
 */
import { describe, expect, it } from "vitest";
import { countersOf, errorReasonOf, relistCauseOf, VeryShortWatchError } from "../../src/cache/reflector-counters.ts";
import { type ReflectorState, step } from "../../src/cache/reflector.ts";
import { initialMemory, type ReflectorMemory } from "../../src/cache/reflector-memory.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { WatchDecodeError } from "../../src/kube/watch-decoder.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher, RecordingSink, expired, tooLargeRv } from "../helpers/fake-lister-watcher.ts";

const event = (type: WatchEvent["type"], object: KubeObject): WatchEvent => ({ type, object });
const errorEvent = (code: number, reason: string): WatchEvent => ({
  type: "ERROR",
  object: { kind: "Status", code, reason, message: `${reason}!` } as unknown as KubeObject,
});

async function run(lw: FakeListerWatcher, steps: number): Promise<ReflectorMemory> {
  const clock = new FakeClock();
  const sink = new RecordingSink();
  let state: ReflectorState = { kind: "idle" };
  let memory: ReflectorMemory = initialMemory;
  for (let i = 0; i < steps; i++) {
    const result = await step(state, memory, { lw, sink, clock, random: () => 0.5, options: { pageSize: 2 }, deadline: clock.now() + 3_600_000 });
    state = result.state;
    memory = result.memory;
    clock.advance(2_000);
  }
  return memory;
}

describe("reflector counters", () => {
  it("count a 410 relist under expired, list pages, watch starts and the drop", async () => {
    const lw = new FakeListerWatcher({
      lists: [
        { items: [pod({ name: "a", rv: "7" }), pod({ name: "b", rv: "8" })], resourceVersion: "10", continue: "p2" },
        { items: [pod({ name: "c", rv: "9" })], resourceVersion: "10" },
        { items: [], resourceVersion: "12" },
      ],
      watches: [{ batches: [[event("ADDED", pod({ name: "d", rv: "11" })), errorEvent(410, "Expired")]] }, { batches: [] }],
    });
    // idle → page 1 → page 2 → watch (410) → idle → relist (one page) → watch
    const memory = await run(lw, 7);
    const counters = countersOf(memory);
    expect(counters.relists).toEqual({ expired: 1, too_large_rv: 0, short_watch: 0, error: 0, config: 0 });
    expect(counters.listPages).toBe(3);
    expect(counters.watchStarts).toBe(2);
    expect(counters.watchDrops).toBeGreaterThanOrEqual(1);
    expect(memory.relists).toBe(1);
  });

  it("count a very short watch's relist under short_watch", async () => {
    const lw = new FakeListerWatcher({
      lists: [{ items: [], resourceVersion: "10" }, { items: [], resourceVersion: "11" }],
      watches: [{ batches: [] }, { batches: [[event("ADDED", pod({ name: "a", rv: "12" }))]] }],
    });
    const clock = new FakeClock();
    const sink = new RecordingSink();
    let state: ReflectorState = { kind: "idle" };
    let memory: ReflectorMemory = initialMemory;
    for (let i = 0; i < 5; i++) {
      // No time passes during the first watch: it closes "at once".
      const result = await step(state, memory, { lw, sink, clock, random: () => 0.5, options: { pageSize: 500 }, deadline: clock.now() + 3_600_000 });
      state = result.state;
      memory = result.memory;
      clock.advance(Math.max(0, result.wakeAt - clock.now()));
    }
    expect(countersOf(memory).relists.short_watch).toBe(1);
    expect(memory.lastErrorReason).toBe("VeryShortWatch");
  });

  it("start from zero for a memory persisted before counters existed", () => {
    const old = JSON.parse(JSON.stringify({ ...initialMemory, counters: undefined })) as ReflectorMemory;
    expect(old).not.toHaveProperty("counters");
    expect(countersOf(old)).toEqual({ relists: { expired: 0, too_large_rv: 0, short_watch: 0, error: 0, config: 0 }, listPages: 0, watchStarts: 0, watchDrops: 0 });
  });

  it.each([
    [expired(), "expired", "Expired"],
    [tooLargeRv(), "too_large_rv", "TooLargeResourceVersion"],
    [new VeryShortWatchError("x"), "short_watch", "VeryShortWatch"],
    [new KubeApiError(429, "TooManyRequests", "slow down"), "error", "TooManyRequests"],
    [new KubeApiError(403, "Forbidden", "no"), "error", "Forbidden"],
    [new KubeApiError(503, "ServiceUnavailable", "busy"), "error", "ServerError"],
    [new KubeApiError(422, "Invalid", "bad"), "error", "ClientError"],
    [KubeApiError.connectionFailed(new Error("refused")), "error", "ConnectionFailed"],
    [new WatchDecodeError("bad line"), "error", "MalformedWatch"],
    [new Error("disk"), "error", "Internal"],
  ])("classify %s as relist cause %s and reason %s", (error, cause, reason) => {
    expect(relistCauseOf(error)).toBe(cause);
    expect(errorReasonOf(error)).toBe(reason);
  });
});
