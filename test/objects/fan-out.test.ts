/** Fan-outs to many objects (src/objects/fan-out.ts, review B6): a bound on calls in flight, and on each call's wait. */
import { describe, expect, it } from "vitest";
import { eachWithin, withConcurrency } from "../../src/objects/fan-out.ts";

/** Tasks that count how many run at once; `answer(i)` says what task i does. */
function counted<T>(n: number, answer: (i: number) => Promise<T>) {
  const seen = { inFlight: 0, most: 0 };
  const tasks = Array.from({ length: n }, (_, i) => async () => {
    seen.most = Math.max(seen.most, ++seen.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return await answer(i);
    } finally {
      seen.inFlight--;
    }
  });
  return { tasks, seen };
}

describe("withConcurrency", () => {
  it("has at most `limit` tasks in flight and answers their results in order", async () => {
    const { tasks, seen } = counted(20, async (i) => i * 2);
    expect(await withConcurrency(tasks, 6)).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
    expect(seen.most).toBe(6);
  });
});

describe("eachWithin", () => {
  it("answers undefined for a task that fails or does not answer in time, and the others' results", async () => {
    const { tasks, seen } = counted(8, async (i) => {
      if (i === 2) throw new Error("failed");
      if (i === 5) await new Promise(() => {}); // never answers: its slot is freed after timeoutMs
      return i;
    });
    expect(await eachWithin(tasks, { concurrency: 3, timeoutMs: 20 })).toEqual([0, 1, undefined, 3, 4, undefined, 6, 7]);
    expect(seen.most).toBeLessThanOrEqual(3);
  });
});
