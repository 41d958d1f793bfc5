/**
 * Many calls from one request or one object, a few at a time (review B6): the factory's probes and
 * reconnections, /metrics (objects/fan-out.ts), and the synthesized namespaces list
 * (k8s/namespace-list.ts). In the base layer so that a layer below the objects may bound its
 * fan-out the same way.
 *
 * Guarantees: `withConcurrency` has at most `limit` tasks in flight, starts the next as one ends,
 * and answers their results in the tasks' order. A task that throws rejects the whole, as
 * Promise.all does (the tasks already started go on).
 */

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
