/** A nudge round's fan-out within the invocation's subrequest budget (review B1). */
import { describe, expect, it } from "vitest";
import { withinBudget } from "../../src/delivery/nudger.ts";
import { SubrequestBudget } from "../../src/net/subrequest-budget.ts";

describe("withinBudget", () => {
  it("nudges everyone while the budget lasts", () => {
    expect(withinBudget(["a", "b"], new SubrequestBudget(100))).toEqual({ now: ["a", "b"], later: [] });
  });

  it("stops at the budget's margin, leaves the rest for a later round, and ends the budget", () => {
    const budget = new SubrequestBudget(5); // ends at 4
    budget.take(); // the watch the slice opened
    expect(withinBudget(["a", "b", "c", "d", "e"], budget)).toEqual({ now: ["a", "b", "c"], later: ["d", "e"] });
    expect(budget.ended).toBe(true);
  });
});
