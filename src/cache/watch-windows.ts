/**
 * Watch windows (issue 19, "Sleep"): with `maxLagSeconds` > 0 an informer does not hold its upstream
 * watch around the clock. It watches in windows, each a watch from lastSyncResourceVersion like any
 * re-watch (no relist), and between them it sleeps with no request open, so that its Durable Object
 * can hibernate and is not billed for duration (reference/cloudflare-platform.md §1.5, §1.6).
 *
 * A window ends when the backlog is drained:
 * - A window asks the server for WINDOW_TIMEOUT_SECONDS. The watch cache first sends every change
 *   after our RV, then live ones, and a BOOKMARK 2 s before the timeout (cache_watcher.go
 *   nextBookmarkTime, reference §1.5.4), which comes after whatever was sent before it.
 * - So the window ends at its first BOOKMARK: every change up to the bookmark's RV has been
 *   delivered. The bookmark's RV, the server's newest, becomes ours, so the next window resumes
 *   within the watch cache's history (~75 s, kubernetes-api-server-facts.md) even where other
 *   resources move the cluster's revision and this one stays quiet.
 * - A window the server closes without a bookmark (a server that sends none, or a backlog that took
 *   the whole window) is followed by the next at once if it delivered events, since more may be
 *   pending; if it delivered none, nothing was pending, and the informer sleeps.
 * - Failures are the reflector's as ever: a 410 on resume relists, anything else backs off.
 *
 * The next window opens `maxLagSeconds` after one ended. A change the API server commits while the
 * informer sleeps is in the next window's backlog, so it reaches the cache (and the nudge to the
 * subscriptions) at most `maxLagSeconds` after the commit, plus the time to open a watch. A change
 * committed while a window is open arrives at once. Lag is the price: reads, `/k8s` lists and
 * webhooks see the resource up to `maxLagSeconds` late.
 *
 * What keeps an informer awake is `keepAwake()`. The informer object answers true while a `/k8s`
 * watch is open: its client expects live events, and the object cannot hibernate while it streams a
 * response anyway, so the upstream watch costs nothing more. While it is true a watch is a full
 * session with the configured timeout and no bookmark ends it; once it turns false, the next
 * bookmark does (the API server sends one a minute). Subscriptions do not keep an informer awake:
 * each is nudged when a window grows the log.
 *
 * With `maxLagSeconds` 0 (the default) none of this applies: the informer always watches.
 * Pure: it decides from the options and from what a watch saw; the reflector acts on the answers.
 */

/** A window's server timeout: its pre-timeout bookmark comes 2 s before it (reference §1.5.4). */
export const WINDOW_TIMEOUT_SECONDS = 5;

export interface WindowOptions {
  /** How late a change may reach the cache; 0 or absent: always watching. */
  maxLagSeconds?: number;
  /** Whether something needs live events now (an open `/k8s` watch): no window ends while it does. */
  keepAwake?: () => boolean;
}

/** Whether a watch may end now to let the informer sleep. */
function maySleep(options: WindowOptions): boolean {
  return (options.maxLagSeconds ?? 0) > 0 && options.keepAwake?.() !== true;
}

/** The server timeout a watch asks for: a window's while the informer may sleep, else the session's. */
export function windowTimeoutSeconds(options: WindowOptions, sessionSeconds: number): number {
  return maySleep(options) ? Math.min(sessionSeconds, WINDOW_TIMEOUT_SECONDS) : sessionSeconds;
}

/** Whether the watch ends at the bookmark it just received: the backlog is drained up to its RV. */
export function endsAtBookmark(options: WindowOptions): boolean {
  return maySleep(options);
}

/**
 * Whether the informer sleeps after the server closed its watch cleanly without a bookmark that
 * ended it: only when the watch delivered nothing, since anything it did deliver may have more behind it.
 */
export function sleepsAfterClose(options: WindowOptions, delivered: number): boolean {
  return maySleep(options) && delivered === 0;
}

/** When the next window opens after one that ended at `now`. */
export function nextWindowAt(options: WindowOptions, now: number): number {
  return now + (options.maxLagSeconds ?? 0) * 1000;
}
