#!/usr/bin/env node
// `npm run check`: the model-based checker (test/check/*.check.test.ts) outside CI's fixed budget.
//   npm run check                            CI's budget of schedules, newly drawn (CI's own draw is fixed)
//   npm run check -- --runs 2000             a longer soak (more schedules per property)
//   npm run check -- --seed N --path P       replay a failure fast-check reported (and its shrunk schedule)
//   npm run check -- --only k8s              only the files whose name contains "k8s"
// The values reach workerd as bindings (vitest.config.ts: CHECK_RUNS, CHECK_SEED, CHECK_PATH).
import { spawnSync } from "node:child_process";

// By hand, not util.parseArgs: fast-check's seeds are often negative (`--seed -123` is no option).
const values = {};
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const [flag, inline] = args[i].split("=", 2);
  const name = flag.replace(/^--/, "");
  if (!["seed", "path", "runs", "only"].includes(name)) {
    console.error(`unknown option ${args[i]}: --seed N, --path P, --runs N, --only NAME`);
    process.exit(2);
  }
  values[name] = inline ?? args[++i];
}
const env = { ...process.env, CHECK_SEED: "random" };
if (values.runs) env.CHECK_RUNS = values.runs;
if (values.seed) env.CHECK_SEED = values.seed;
if (values.path) env.CHECK_PATH = values.path;
const files = values.only ? `test/check/${values.only}` : "test/check/";
const result = spawnSync("npx", ["vitest", "run", "--project", "workerd", files], { stdio: "inherit", env });
process.exit(result.status ?? 1);
