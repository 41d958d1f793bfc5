// The cost measurement (bench/cost/rows.cost.ts) runs inside workerd as the budget tests do, with
// the test project's fake API server and receiver: `npm run bench -- --only cost`. Not part of
// `npm test`: it reports, and test/cost/budgets.test.ts asserts the same figures.
import { resolve } from "node:path";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import tests from "../../vitest.config.ts";

const root = resolve(import.meta.dirname, "..", "..");
const workerd = tests.test!.projects!.find((project) => (project as TestProjectInlineConfiguration).test?.name === "workerd") as TestProjectInlineConfiguration;

export default defineConfig({
  root,
  plugins: workerd.plugins,
  test: { ...workerd.test, name: "cost", include: ["bench/cost/*.cost.ts"], testTimeout: 300_000, hookTimeout: 300_000 },
});
