/**
 * What fanning a batch out to the watchers at the tail costs the watch hub, as deterministic counts
 * (issue 28; the CPU it saves is measured by `npm run bench -- --only k8s`, BENCHMARKS.md): per
 * appended batch, one log read, one run end asked and one write per watcher, no read or wait of a
 * watcher's own, and no timer per waiting watcher; and changes that come faster than the watchers'
 * wakes (coalesceMs) go to each watcher in one write.
 */
import { afterEach, describe, expect, it } from "vitest";
import { describeResource } from "../../src/k8s/catalog.ts";
import { coalesceMs, WatchHub, type WatchSource } from "../../src/k8s/watch-hub.ts";
import { scriptedLog } from "../helpers/scripted-log.ts";
import { WatchBody } from "../helpers/watch-lines.ts";

const pods = describeResource("pods", undefined)!;
const WATCHERS = 200;
const BATCHES = 20;

/** Counts the timers set from the project's code (src/), whoever else sets timers meanwhile. */
function countSourceTimers(): { readonly count: number; restore(): void } {
  const original = globalThis.setTimeout;
  let count = 0;
  globalThis.setTimeout = ((handler: () => void, ms?: number) => {
    if (/\/src\/k8s\//.test(new Error().stack ?? "")) count++;
    return original(handler, ms);
  }) as typeof setTimeout;
  return {
    get count() {
      return count;
    },
    restore: () => void (globalThis.setTimeout = original),
  };
}

let restore = () => {};
afterEach(() => restore());

describe("watch fan-out budgets", () => {
  it(`fans ${BATCHES} one-event batches out to ${WATCHERS} watchers with one read, one run end and one write per watcher per batch, no wait of a watcher's own, and no timer per watcher`, async () => {
    const log = scriptedLog();
    const calls = { read: 0, boundaryAfter: 0, readInOrder: 0 };
    const source: WatchSource = {
      ...log.source,
      read: (...args) => (calls.read++, log.source.read(...args)),
      boundaryAfter: (...args) => (calls.boundaryAfter++, log.source.boundaryAfter(...args)),
      readInOrder: (...args) => (calls.readInOrder++, log.source.readInOrder(...args)),
    };
    const hub = new WatchHub(() => source);
    // Bookmarks asked for: each waiting watcher has a due time (its next bookmark, its deadline).
    const request = { info: pods, format: { kind: "json" } as const, includeObject: "Metadata" as const, bookmarks: true, initialEvents: false, resourceVersion: "100" };
    // Four credentials: one holds at most MAX_WATCHERS_PER_PRINCIPAL watches.
    const bodies = Array.from({ length: WATCHERS }, (_, i) => new WatchBody(hub.open({ ...request, principal: `team-${i % 4}` })));
    // Every watcher opened and waits at the tail.
    log.append("first");
    hub.notify();
    for (const body of bodies) expect(await body.until(1)).toBeUndefined();

    const timers = countSourceTimers();
    restore = timers.restore;
    const before = { ...calls, ...hub.fanout };
    for (let i = 0; i < BATCHES; i++) {
      log.append(`p${i}`);
      hub.notify();
      for (const body of bodies) expect(await body.until(i + 2)).toBeUndefined();
    }
    timers.restore();

    for (const body of bodies) expect(body.events.map((e) => e.object.metadata.name)).toEqual(["first", ...Array.from({ length: BATCHES }, (_, i) => `p${i}`)]);
    expect(calls.read - before.read).toBe(BATCHES);
    expect(calls.boundaryAfter - before.boundaryAfter).toBe(BATCHES);
    expect(calls.readInOrder - before.readInOrder).toBe(0);
    expect(hub.fanout.writes - before.writes).toBe(BATCHES * WATCHERS);
    // Each batch is read ahead once for all (WatchBatches.prepare); no watcher waits for it.
    expect(hub.fanout.awaited - before.awaited).toBe(0);
    // Timers for all the waiting watchers at once, not one per watcher per wait (was 2 × 4,000 here):
    // at most one for the coalesced wake and one for the earliest bookmark, a batch.
    expect(timers.count).toBeLessThanOrEqual(2 * BATCHES);
    await Promise.all(bodies.map((body) => body.cancel()));
  });

  it(`writes changes that come faster than ${WATCHERS} watchers are woken to each of them in one chunk`, async () => {
    const log = scriptedLog();
    const hub = new WatchHub(() => log.source);
    const request = { info: pods, format: { kind: "json" } as const, includeObject: "Metadata" as const, bookmarks: false, initialEvents: false, resourceVersion: "100" };
    const bodies = Array.from({ length: WATCHERS }, (_, i) => new WatchBody(hub.open({ ...request, principal: `team-${i % 4}` })));
    log.append("first");
    hub.notify();
    for (const body of bodies) expect(await body.until(1)).toBeUndefined();
    expect(coalesceMs(WATCHERS)).toBeGreaterThan(0);
    const before = hub.fanout.writes;
    // Ten changes, each told at once, within the watchers' wake interval: one wake, one chunk each.
    for (let i = 0; i < 10; i++) {
      log.append(`p${i}`);
      hub.notify();
    }
    for (const body of bodies) expect(await body.until(11)).toBeUndefined();
    for (const body of bodies) expect(body.events.map((e) => e.object.metadata.name)).toEqual(["first", ...Array.from({ length: 10 }, (_, i) => `p${i}`)]);
    expect(hub.fanout.writes - before).toBe(WATCHERS);
    await Promise.all(bodies.map((body) => body.cancel()));
  });
});
