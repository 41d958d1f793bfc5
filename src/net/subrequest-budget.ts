/**
 * The subrequests one invocation (an alarm's slice) may still make: the platform counts every
 * `fetch()` and every Durable Object call per invocation and, past its limit, fails each further
 * one with "Too many subrequests" (docs/architecture.md "Platform limits"; review B1). Local workerd
 * enforces no limit, so nothing shows it in development: this counts instead.
 *
 * Guarantees:
 * - Every call made through `spend` (or `fetch`) counts one; a call refused here is never made.
 * - The budget ends at `endAt`, a margin below the limit (SLICE_END_FRACTION), never at the limit:
 *   calls this budget does not see (a redirect hop, a call made by a library) still fit. Once ended
 *   it stays ended and its `signal` is aborted, so the slice stops at its next step and re-arms at
 *   once: the work goes on in a fresh invocation, with a fresh budget.
 * - The runtime's own "Too many subrequests" error ends the budget too, and is thrown as a
 *   SubrequestLimitError: our limit, never the failure of whoever was called (a receiver, the API
 *   server), so it is never counted against them.
 *
 * It does not throttle: a slice spends as fast as its work goes, then stops.
 */

/** The platform's default per invocation on the Paid plan (docs: workers/platform/limits). */
export const PLATFORM_SUBREQUESTS_PER_INVOCATION = 10_000;
/** Ends a budget at this share of its limit (8,000 of the default 10,000). */
export const SLICE_END_FRACTION = 0.8;

/** A call refused because the invocation's subrequests are (nearly) spent; retry it in a fresh invocation. */
export class SubrequestLimitError extends Error {
  override readonly name = "SubrequestLimitError";
  constructor(message = "the invocation's subrequest budget is spent", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The runtime's limit error ("Too many subrequests." / "... by single Worker invocation"), also when wrapped as a cause. */
export function isSubrequestLimit(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof SubrequestLimitError) return true;
    if (e instanceof Error && /too many subrequests/i.test(e.message)) return true;
    if (typeof e === "string") return /too many subrequests/i.test(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return false;
}

/**
 * The limit this deployment has: SUBREQUESTS_PER_INVOCATION, which must say what wrangler.toml's
 * `[limits] subrequests` sets (the Worker cannot read its own limits), or the platform's default.
 */
export function subrequestLimitOf(env: { SUBREQUESTS_PER_INVOCATION?: string }): number {
  const configured = Number(env.SUBREQUESTS_PER_INVOCATION);
  return Number.isSafeInteger(configured) && configured > 0 ? configured : PLATFORM_SUBREQUESTS_PER_INVOCATION;
}

export class SubrequestBudget {
  readonly limit: number;
  /** Spent up to here, the budget ends (SLICE_END_FRACTION of `limit`, at least 1). */
  readonly endAt: number;
  #used = 0;
  readonly #ended = new AbortController();

  constructor(limit: number = PLATFORM_SUBREQUESTS_PER_INVOCATION) {
    this.limit = limit;
    this.endAt = Math.max(1, Math.floor(limit * SLICE_END_FRACTION));
  }

  get used(): number {
    return this.#used;
  }

  /** Aborted once the budget ended: the slice stops at its next step. */
  get signal(): AbortSignal {
    return this.#ended.signal;
  }

  get ended(): boolean {
    return this.#ended.signal.aborted;
  }

  /** Takes one subrequest; false, and the budget ends, when none is left under the margin. */
  take(): boolean {
    if (this.ended) return false;
    if (this.#used >= this.endAt) {
      this.end();
      return false;
    }
    this.#used++;
    return true;
  }

  end(): void {
    if (!this.ended) this.#ended.abort(new SubrequestLimitError());
  }

  /** Runs `call` as one subrequest: refused when the budget ended; the runtime's limit error ends it. */
  async spend<T>(call: () => Promise<T>): Promise<T> {
    if (!this.take()) throw new SubrequestLimitError();
    try {
      return await call();
    } catch (error) {
      if (!isSubrequestLimit(error)) throw error;
      this.end();
      throw new SubrequestLimitError(`the runtime refused a subrequest: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** `inner` with each call counted (KubeClient's and the sender's `fetch` option). */
  fetch(inner: typeof fetch): typeof fetch {
    return (input, init) => this.spend(() => inner(input, init));
  }
}
