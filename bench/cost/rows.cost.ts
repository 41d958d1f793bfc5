/**
 * Rows per operation (test/cost/operations.ts), printed as one `COST_REPORT` line of JSON for
 * bench/cost.mjs, which prices them and writes the table (BENCHMARKS.md "Cost").
 */
import { it } from "vitest";
import { measureCosts } from "../../test/cost/operations.ts";

it("measures the rows each operation reads and writes", async () => {
  console.log(`COST_REPORT ${JSON.stringify(await measureCosts())}`);
});
