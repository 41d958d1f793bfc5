/** Nudges: one round in flight, later nudges coalesced into one more round with the newest tail. */
import { describe, expect, it } from "vitest";
import { Nudger } from "../../src/delivery/nudger.ts";

describe("Nudger", () => {
  it("coalesces nudges during a round into one more round with the newest tail", async () => {
    const rounds: number[] = [];
    let release!: () => void;
    const nudger = new Nudger(async (tail) => {
      rounds.push(tail);
      if (rounds.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    nudger.nudge(1);
    nudger.nudge(2);
    nudger.nudge(5);
    nudger.nudge(4);
    expect(rounds).toEqual([1]);
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rounds).toEqual([1, 5]);
    nudger.nudge(6);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rounds).toEqual([1, 5, 6]);
  });

  it("keeps going after a failed round", async () => {
    const rounds: number[] = [];
    const nudger = new Nudger(async (tail) => {
      rounds.push(tail);
      throw new Error("unreachable");
    });
    nudger.nudge(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    nudger.nudge(2);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(rounds).toEqual([1, 2]);
  });
});
