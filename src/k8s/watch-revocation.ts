/**
 * Ends a watch whose reader lost the right to it (issue 31: "a watch whose permission is revoked
 * ends"). kube-apiserver authorizes a watch only when it opens, and an open one runs to its timeout
 * whatever RBAC says meanwhile; a cache that serves a whole organisation should not keep streaming a
 * namespace to someone whose RoleBinding was just deleted.
 *
 * Guarantees:
 * - While the watch's body flows, `stillAllowed` is asked every RECHECK_EVERY_MS (one timer per
 *   watch; the answer comes from the isolate's authorizer, rbac-source.ts, at most
 *   WATCH_RBAC_CHECK_EVERY_MS behind the RBAC informers, about a second while other reads of the
 *   cluster refresh it). Once it says no — or throws: fail closed — `signal` aborts, and the body
 *   (watch-body.ts `stop`) ends normally. The client re-watches and is refused 403.
 * - So events reach a reader for at most about RECHECK_EVERY_MS + WATCH_RBAC_CHECK_EVERY_MS (11 s)
 *   after its RBAC informers see the change.
 * - The checks stop when `done` is called (the body ended for any reason).
 */

/** How often an open watch asks whether its reader may still watch. */
export const RECHECK_EVERY_MS = 1_000;

export interface Revocation {
  /** Aborts when the reader may no longer watch. */
  signal: AbortSignal;
  /** The body ended: stop checking. */
  done(): void;
}

export function watchRevocation(
  stillAllowed: () => Promise<boolean>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Revocation {
  const controller = new AbortController();
  let finished = false;
  void (async () => {
    while (!finished) {
      await sleep(RECHECK_EVERY_MS);
      if (finished) return;
      const allowed = await stillAllowed().catch(() => false);
      if (!allowed && !finished) {
        controller.abort(new Error("the reader may no longer watch this resource"));
        return;
      }
    }
  })();
  return { signal: controller.signal, done: () => void (finished = true) };
}
