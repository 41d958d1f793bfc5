/**
 * How many schedules a check runs, and which: CI's fixed budget by default, or what `npm run check`
 * asks (test/check/run.mjs), handed into workerd as bindings by vitest.config.ts.
 * - CHECK_RUNS: schedules per property (default: the CI budget each property names);
 * - CHECK_SEED: unset, CI's fixed seed (`npm test` runs the same schedules every time: a red CI is
 *   a change's doing, never the draw's); "random", a new draw (what `npm run check` does, to find
 *   what CI's draw does not); a number, that seed;
 * - CHECK_PATH: with the seed, the path to a shrunk failure fast-check reported.
 */
import { env } from "cloudflare:workers";
import type { Parameters } from "fast-check";

const bindings = env as unknown as Record<string, string | undefined>;

/** The seed CI draws its schedules with (issue 27). */
const CI_SEED = 27;

export function checkParameters<T>(ciRuns: number): Parameters<T> {
  const runs = Number(bindings.CHECK_RUNS || ciRuns);
  const seed = bindings.CHECK_SEED === "random" ? undefined : Number(bindings.CHECK_SEED || CI_SEED);
  const path = bindings.CHECK_PATH || undefined;
  return {
    numRuns: runs,
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
    // A failure reports its seed, the path that replays it and the shrunk schedule; not every try.
    verbose: 0,
  };
}
