/**
 * How many schedules a check runs, and which: CI's fixed budget by default, or what `npm run check`
 * asks (test/check/run.mjs), handed into workerd as bindings by vitest.config.ts.
 * - CHECK_RUNS: schedules per property (default: the CI budget each property names);
 * - CHECK_SEED, CHECK_PATH: replay a failure fast-check reported (its seed, and its path to the
 *   shrunk schedule).
 */
import { env } from "cloudflare:workers";
import type { Parameters } from "fast-check";

const bindings = env as unknown as Record<string, string | undefined>;

export function checkParameters<T>(ciRuns: number): Parameters<T> {
  const runs = Number(bindings.CHECK_RUNS || ciRuns);
  const seed = bindings.CHECK_SEED ? Number(bindings.CHECK_SEED) : undefined;
  const path = bindings.CHECK_PATH || undefined;
  return {
    numRuns: runs,
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
    // A failure reports its seed, the path that replays it and the shrunk schedule; not every try.
    verbose: 0,
  };
}
