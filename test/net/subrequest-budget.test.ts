/**
 * The per-invocation subrequest budget (review B1): it counts, ends at its margin below the
 * platform's limit, and turns the runtime's limit error into a SubrequestLimitError.
 */
import { describe, expect, it } from "vitest";
import {
  isSubrequestLimit,
  PLATFORM_SUBREQUESTS_PER_INVOCATION,
  SubrequestBudget,
  SubrequestLimitError,
  subrequestLimitOf,
} from "../../src/net/subrequest-budget.ts";

describe("SubrequestBudget", () => {
  it("ends at 80 % of the platform's default of 10,000", () => {
    const budget = new SubrequestBudget();
    expect(budget.limit).toBe(PLATFORM_SUBREQUESTS_PER_INVOCATION);
    expect(budget.endAt).toBe(8_000);
  });

  it("takes subrequests up to its margin, then ends and aborts its signal", () => {
    const budget = new SubrequestBudget(10);
    const taken = Array.from({ length: 10 }, () => budget.take());
    expect(taken.filter(Boolean)).toHaveLength(8);
    expect(budget.used).toBe(8);
    expect(budget.ended).toBe(true);
    expect(budget.signal.aborted).toBe(true);
  });

  it("refuses a call once ended without making it", async () => {
    const budget = new SubrequestBudget(1);
    let made = 0;
    const call = async () => ++made;
    expect(await budget.spend(call)).toBe(1);
    await expect(budget.spend(call)).rejects.toBeInstanceOf(SubrequestLimitError);
    expect(made).toBe(1);
  });

  it("ends when the runtime refuses a call, whatever it counted", async () => {
    const budget = new SubrequestBudget(1_000);
    await expect(budget.spend(async () => Promise.reject(new Error("Too many subrequests.")))).rejects.toBeInstanceOf(SubrequestLimitError);
    expect(budget.ended).toBe(true);
  });

  it.each([
    ["Too many subrequests.", true],
    ["Too many subrequests by single Worker invocation.", true],
    ["Error: Too many subrequests. Workers can make up to 50 subrequests per request.", true],
    ["connection refused", false],
  ])("recognises %j: %s", (message, expected) => {
    expect(isSubrequestLimit(new Error(message))).toBe(expected);
    // Wrapped, as the Kubernetes client wraps a fetch failure.
    expect(isSubrequestLimit(new Error("request failed", { cause: new Error(message) }))).toBe(expected);
  });

  it.each([
    [undefined, 10_000],
    ["1000000", 1_000_000],
    ["nonsense", 10_000],
    ["0", 10_000],
  ])("reads SUBREQUESTS_PER_INVOCATION %j as %d", (value, expected) => {
    expect(subrequestLimitOf({ SUBREQUESTS_PER_INVOCATION: value })).toBe(expected);
  });
});
