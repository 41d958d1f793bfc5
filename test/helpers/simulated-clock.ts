/**
 * A clock whose timers run in simulated time (Clock.setTimer): whenever the code under test waits
 * on nothing but its timers, time jumps to the earliest one and fires it. An hour of watch windows
 * runs in a moment, and the same way on every run.
 */
import type { Clock } from "../../src/clock.ts";

interface Timer {
  at: number;
  /** Timers due at the same time fire in the order they were set. */
  order: number;
  fire: () => void;
}

/** Real event-loop turns that let promise chains and yields (yieldToEventLoop) run before time moves. */
const SETTLE_TURNS = 5;

export class SimulatedClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #order = 0;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fire: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), order: this.#order++, fire };
    this.#timers.push(timer);
    return () => {
      this.#timers = this.#timers.filter((t) => t !== timer);
    };
  }

  /** Awaits `work`, moving time on to its next timer whenever it waits on timers alone. */
  async run<T>(work: Promise<T>): Promise<T> {
    let settled = false;
    work.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (;;) {
      for (let i = 0; i < SETTLE_TURNS; i++) await new Promise((resolve) => setTimeout(resolve, 0));
      if (settled) return work;
      const next = this.#timers.reduce<Timer | undefined>((a, b) => (a === undefined || b.at < a.at || (b.at === a.at && b.order < a.order) ? b : a), undefined);
      if (next === undefined) throw new Error("the work waits on something other than a timer of the simulated clock");
      this.#timers = this.#timers.filter((t) => t !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fire();
    }
  }

  /** Moves time on to `at` while nothing runs (an alarm's sleep); a timer left set meanwhile is a leak. */
  sleepUntil(at: number): void {
    if (this.#timers.length > 0) throw new Error(`${this.#timers.length} timer(s) still set while asleep`);
    this.#now = Math.max(this.#now, at);
  }
}
