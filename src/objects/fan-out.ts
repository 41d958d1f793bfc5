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
import { withConcurrency } from "../concurrency.ts";
import { withTimeout } from "../delivery/feed.ts";

// The bound alone lives in the base layer (concurrency.ts), for layers below the objects too.
export { withConcurrency };

/** Runs `tasks` as `withConcurrency` does, each for at most `timeoutMs`: undefined for one that failed or did not answer in time. */
export function eachWithin<T>(tasks: (() => Promise<T>)[], limits: { concurrency: number; timeoutMs: number }): Promise<(T | undefined)[]> {
  return withConcurrency(
    tasks.map((task) => () => withTimeout(task(), limits.timeoutMs).catch(() => undefined)),
    limits.concurrency,
  );
}
