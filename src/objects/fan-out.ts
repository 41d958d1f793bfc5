/**
 * Calls to many Durable Objects at once, from one object or one request (review B6): the factory's
 * cron and reconnections, and /metrics.
 *
 * Guarantees:
 * - `withConcurrency` has at most `limit` tasks in flight, and answers their results in order.
 * - `eachWithin` also gives each task at most `timeoutMs`: a task that fails or has not answered
 *   by then answers `undefined`, so one slow or blocked object costs its slot that long, never the
 *   whole fan-out. A task that timed out is not cancelled (an object call cannot be): it goes on
 *   unawaited, and whatever it does still happens.
 */
import { withTimeout } from "../delivery/feed.ts";

/** Runs `tasks` with at most `limit` in flight, answering their results in order. */
export async function withConcurrency<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

/** Runs `tasks` as `withConcurrency` does, each for at most `timeoutMs`: undefined for one that failed or did not answer in time. */
export function eachWithin<T>(tasks: (() => Promise<T>)[], limits: { concurrency: number; timeoutMs: number }): Promise<(T | undefined)[]> {
  return withConcurrency(
    tasks.map((task) => () => withTimeout(task(), limits.timeoutMs).catch(() => undefined)),
    limits.concurrency,
  );
}
