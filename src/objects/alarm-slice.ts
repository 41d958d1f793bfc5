/**
 * The slice an alarm is running, shared by the Durable Objects that work from their alarm.
 *
 * Guarantees:
 * - `run` re-arms in `finally` whatever the work did — returned, threw, or crashed half-way — so an
 *   error cannot stop the loop (DESIGN invariant 7). It re-arms from the work's answer, or from
 *   durable state when the work had none.
 * - `stop` aborts the running slice and waits until it has ended; a stopped slice does not re-arm
 *   (whoever stopped it — a reconfiguration, a deletion — sets or deletes the alarm itself).
 */
import { errorText, type LogFields, logger } from "../log.ts";

export class AlarmSlice {
  #running: { abort: AbortController; done: Promise<void> } | undefined;

  get running(): boolean {
    return this.#running !== undefined;
  }

  /**
   * Runs `work` as the slice, then `rearm(its answer)` — undefined when it threw. `what` names the
   * kind of object in the log line of a failure, and `who` (asked only then) which one: its
   * cluster, informer and subscription.
   */
  async run<T>(
    what: string,
    work: (signal: AbortSignal) => Promise<T>,
    rearm: (answer: T | undefined) => Promise<void>,
    who: () => LogFields | undefined = () => undefined,
  ): Promise<void> {
    const abort = new AbortController();
    let finish!: () => void;
    this.#running = { abort, done: new Promise<void>((resolve) => (finish = resolve)) };
    let answer: T | undefined;
    try {
      answer = await work(abort.signal);
    } catch (error) {
      logger.error("alarm failed", { object: what, ...identify(who), error: errorText(error) });
    } finally {
      try {
        if (!abort.signal.aborted) await rearm(answer);
      } finally {
        this.#running = undefined;
        finish();
      }
    }
  }

  async stop(): Promise<void> {
    const running = this.#running;
    if (!running) return;
    running.abort.abort();
    await running.done;
  }
}

/** `who()`, or nothing when even that fails (the failure may be the storage it reads). */
function identify(who: () => LogFields | undefined): LogFields | undefined {
  try {
    return who();
  } catch {
    return undefined;
  }
}
