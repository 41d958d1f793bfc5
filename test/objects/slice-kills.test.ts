/** Killed slices (review B9): the durable mark, the count, and the shrink after kills in a row. */
import { describe, expect, it } from "vitest";
import { KILLS_BEFORE_SHRINKING, SliceKills, type SliceMarkStore } from "../../src/objects/slice-kills.ts";

/** A key-value store in memory, as `ctx.storage.kv` behaves for one object (it survives a kill). */
function memoryStore(): SliceMarkStore {
  const values = new Map<string, unknown>();
  return { get: <T>(key: string) => values.get(key) as T | undefined, put: (key, value) => void values.set(key, value) };
}

describe("SliceKills", () => {
  it("counts nothing for slices that finish", async () => {
    const kills = new SliceKills(memoryStore());
    for (let i = 0; i < 3; i++) await kills.during(i, async () => undefined, () => expect.unreachable());
    expect(kills.counts()).toEqual({ kills: 0, lastKillAt: null, shrunk: false });
  });

  it("counts a slice that never reached its finally, seen by the next slice, and when it started", () => {
    const store = memoryStore();
    new SliceKills(store).begin(1_000); // killed: no finish
    const next = new SliceKills(store); // a new instance after the restart
    expect(next.begin(2_000)).toBe(true);
    next.finish();
    expect(next.counts()).toEqual({ kills: 1, lastKillAt: 1_000, shrunk: false });
  });

  it(`shrinks after ${KILLS_BEFORE_SHRINKING} kills in a row, and stays shrunk`, () => {
    const store = memoryStore();
    const kills = new SliceKills(store);
    kills.begin(1); // killed
    kills.begin(2); // killed (one in a row, seen here)
    expect(kills.counts().shrunk).toBe(false);
    kills.begin(3); // two in a row
    expect(kills.counts()).toEqual({ kills: 2, lastKillAt: 2, shrunk: true });
    kills.finish();
    kills.begin(4);
    kills.finish();
    expect(kills.counts()).toEqual({ kills: 2, lastKillAt: 2, shrunk: true });
  });

  it("does not shrink for kills with finished slices between them", () => {
    const kills = new SliceKills(memoryStore());
    for (let i = 0; i < 3; i++) {
      kills.begin(i * 10); // killed
      kills.begin(i * 10 + 1); // sees it, finishes
      kills.finish();
    }
    expect(kills.counts()).toEqual({ kills: 3, lastKillAt: 20, shrunk: false });
  });
});
