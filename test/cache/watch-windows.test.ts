/**
 * Watch windows (issue 19, "Sleep") over an hour of simulated time: the informer on real Durable
 * Object SQLite, driven as its object's alarm drives it, against a quiet resource of an API server
 * that keeps time with the same simulated clock. The budget: at maxLagSeconds 60 a quiet informer
 * holds its upstream watch open at most 10% of the time (≤ $0.40 a month of duration, against ~$4
 * for one that always watches) and writes no more rows than an idle informer may (10 a minute),
 * and every change still reaches the cache within about 60 s.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { WINDOW_TIMEOUT_SECONDS } from "../../src/cache/watch-windows.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { SLICE_MS } from "../../src/objects/informer-object.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { SimulatedApiServer } from "../helpers/simulated-apiserver.ts";
import { SimulatedClock } from "../helpers/simulated-clock.ts";

const HOUR_MS = 3_600_000;
/** The target: a watch open at most this fraction of the time. */
const WATCH_OPEN_BUDGET = 0.1;
/** Issue 19's budget for an idle informer: rows written a minute (each window writes its own few). */
const IDLE_ROWS_A_MINUTE = 10;
/** A change may arrive maxLagSeconds after its commit, plus the time a window takes to open and apply it. */
const OPEN_AND_APPLY_MS = 1_000;

/** An informer of `pods` on `db`, its clock and the simulated API server it watches, after its initial list. */
async function synced(db: Db, maxLagSeconds: number) {
  const clock = new SimulatedClock();
  const server = new SimulatedApiServer(clock, { objects: 20 });
  const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods", maxLagSeconds }, "windows")), clock, () => 0.5);
  /** When each slice asked to be woken, and when it asked. */
  const alarms: { at: number; wakeAt: number }[] = [];
  /** The object's alarm loop (InformerObject.alarm): a slice, then sleep until the time it answered. */
  const runUntil = async (end: number) => {
    while (clock.now() < end) {
      const wakeAt = await clock.run(informer.tick(server, clock.now() + SLICE_MS));
      alarms.push({ at: clock.now(), wakeAt });
      clock.sleepUntil(Math.max(wakeAt, clock.now() + 1));
    }
  };
  await runUntil(clock.now() + 1); // the initial list: a slice of its own
  return { clock, server, informer, alarms, runUntil };
}

describe("Watch windows (maxLagSeconds)", () => {
  it("at maxLagSeconds 60 a quiet informer holds its upstream watch open at most 10% of an hour, within the idle row budget, and each change arrives within ~60 s", () =>
    withDb(async (db) => {
      const sim = await synced(db, 60);
      expect(sim.informer.progress()).toMatchObject({ synced: true, objects: 20 });
      const from = sim.clock.now();
      const writtenBefore = db.rows.written;
      // A quiet resource: one change every 10 minutes, at odd seconds so they fall anywhere in a window or a sleep.
      const changes = Array.from({ length: 6 }, (_, i) => {
        const at = from + i * 600_000 + 137_000 + i * 11_000;
        return { at, rv: sim.server.change(at, `pod-${i}`) };
      });
      await sim.runUntil(from + HOUR_MS);
      // ~5 rows a window (its state, its start, the bookmark's RV, the queue's passes), 5.3 a minute.
      expect(db.rows.written - writtenBefore).toBeLessThanOrEqual(IDLE_ROWS_A_MINUTE * 60);

      const openFraction = sim.server.watchOpenMs(from, from + HOUR_MS) / HOUR_MS;
      expect(openFraction).toBeLessThanOrEqual(WATCH_OPEN_BUDGET);
      expect(openFraction).toBeGreaterThan(0.01); // it did watch: ~3 s a minute, 4.9% (BENCHMARKS.md "Cost")
      // Bookmarks kept the RV within the watch cache's history: every window resumed, none relisted.
      expect(sim.server.lists).toHaveLength(1);
      expect(sim.server.watches.length).toBeGreaterThan(50);
      expect(sim.server.watches.every((w) => w.timeoutSeconds === WINDOW_TIMEOUT_SECONDS)).toBe(true);
      // Asleep, the alarm is set at most maxLagSeconds ahead.
      for (const { at, wakeAt } of sim.alarms.slice(1)) expect(wakeAt - at).toBeLessThanOrEqual(60_000);
      const arrived = sim.informer.log.read(0, 100).events.filter((e) => !e.initialList);
      expect(arrived.map((e) => e.resourceVersion)).toEqual(changes.map((c) => c.rv));
      for (const [i, event] of arrived.entries()) expect(event.at - changes[i]!.at).toBeLessThanOrEqual(60_000 + OPEN_AND_APPLY_MS);
    }));

  it("sleeps after a window, then resumes from the window's bookmark and brings a change made meanwhile within ~60 s", () =>
    withDb(async (db) => {
      const sim = await synced(db, 60);
      await sim.clock.run(sim.informer.tick(sim.server, sim.clock.now() + SLICE_MS)); // the first window
      const window = sim.server.watches[0]!;
      expect(window.closedAt! - window.openedAt).toBeLessThan(5_000); // its pre-timeout bookmark ended it
      const { lastSyncResourceVersion, wakeAt } = sim.informer.progress();
      expect(sim.informer.progress()).toMatchObject({ watch: { state: "sleeping" }, wakeAt: window.closedAt! + 60_000 });
      // A change a second into the sleep: the longest wait there is.
      const committedAt = window.closedAt! + 1_000;
      const rv = sim.server.change(committedAt, "pod-3");
      sim.clock.sleepUntil(wakeAt);
      await sim.clock.run(sim.informer.tick(sim.server, sim.clock.now() + SLICE_MS));
      expect(sim.server.watches[1]!.resourceVersion).toBe(lastSyncResourceVersion);
      expect(sim.server.lists).toHaveLength(1);
      const [arrived] = sim.informer.log.read(0, 100).events.filter((e) => !e.initialList);
      expect(arrived).toMatchObject({ key: "default/pod-3", resourceVersion: rv });
      expect(arrived!.at - committedAt).toBeGreaterThanOrEqual(59_000);
      expect(arrived!.at - committedAt).toBeLessThanOrEqual(59_000 + OPEN_AND_APPLY_MS);
      expect(sim.informer.progress().watch.state).toBe("sleeping");
    }));

  it("always watches with maxLagSeconds 0 (the default): a watch is open all the time", () =>
    withDb(async (db) => {
      const sim = await synced(db, 0);
      const from = sim.clock.now();
      await sim.runUntil(from + HOUR_MS);
      // All the time, but for the millisecond each alarm takes to re-arm between sessions.
      expect(sim.server.watchOpenMs(from, from + HOUR_MS)).toBeGreaterThanOrEqual(HOUR_MS - sim.server.watches.length);
      expect(sim.server.watches.every((w) => w.timeoutSeconds === 450)).toBe(true); // random 0.5 in [300, 600)
    }));
});
