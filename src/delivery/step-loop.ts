/**
 * An alarm's slice of a subscription: steps until there is nothing to do now, and answers when to
 * run next. The Durable Object runs it from `alarm()` and re-arms from its answer (invariant 7).
 *
 * Guarantees:
 * - Stops at once, answering null (no alarm), when the slice is stopped (the subscription is being
 *   deleted, or the slice aborted).
 * - Answers "now" when the slice's deadline passed or its subrequest budget is spent, or a step met
 *   the platform's subrequest limit (such a step changed nothing): delivery goes on at once in a
 *   fresh invocation, with a fresh budget.
 * - A nudge that came while stepping makes an idle step look at the log again before sleeping.
 */
import type { Clock } from "../clock.ts";
import { SubrequestLimitError } from "../net/subrequest-budget.ts";
import type { StepResult } from "./subscription.ts";

export interface SliceControl {
  clock: Clock;
  /** When the slice ends (ms). */
  deadline: number;
  /** The slice was stopped: step no more. */
  stopped(): boolean;
  /** The slice's subrequest budget is spent. */
  budgetEnded(): boolean;
  /** A nudge came in since the last call (answers it once). */
  takeNudge(): boolean;
}

/** Steps until there is nothing to do now; returns when to run next (null: not until nudged). */
export async function runSlice(step: () => Promise<StepResult>, control: SliceControl): Promise<number | null> {
  const { clock } = control;
  for (;;) {
    if (control.stopped()) return null;
    // The budget spent: go on at once in a fresh invocation (a fresh budget).
    if (clock.now() >= control.deadline || control.budgetEnded()) return clock.now();
    let result;
    try {
      result = await step();
    } catch (error) {
      if (error instanceof SubrequestLimitError) return clock.now(); // the step changed nothing
      throw error;
    }
    if (result.kind === "progress") continue;
    if (result.kind === "idle" && control.takeNudge()) continue;
    return result.until;
  }
}
