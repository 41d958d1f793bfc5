import { describe, expect, it } from "vitest";
import { BACKOFF_RESET_MS, initialBackoff, nextBackoff } from "../../src/cache/backoff.ts";

describe("backoff", () => {
  it("doubles from 0.8 s to a 30 s cap, with up to one delay of jitter", () => {
    let state = initialBackoff;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = nextBackoff(state, 1_000 + i, () => 0.5);
      waits.push(next.waitMs);
      state = next.state;
    }
    expect(waits).toEqual([1_200, 2_400, 4_800, 9_600, 19_200, 38_400, 45_000, 45_000]);
  });

  it("stays within [delay, 2·delay)", () => {
    expect(nextBackoff(initialBackoff, 0, () => 0).waitMs).toBe(800);
    expect(nextBackoff(initialBackoff, 0, () => 0.999).waitMs).toBeLessThan(1_600);
  });

  it("starts over when no backoff was asked for during the reset period", () => {
    let state = initialBackoff;
    for (let i = 0; i < 5; i++) state = nextBackoff(state, 0, () => 0).state;
    expect(nextBackoff(state, 1, () => 0).waitMs).toBe(25_600);
    expect(nextBackoff(state, BACKOFF_RESET_MS + 1, () => 0).waitMs).toBe(800);
  });
});
