/**
 * HumanDuration: the short "age" text kubectl shows (`5d`, `3m20s`, `2y45d`), computed exactly as
 * apimachinery's `pkg/util/duration.HumanDuration` (unchanged from v0.32 to today), which the API
 * server's Table printers use for AGE cells and for the "(5m2s ago)" part of RESTARTS.
 *
 * Guarantees:
 * - Pure: the duration is an argument; nothing reads a clock.
 * - Every quantity truncates toward zero, as Go's int conversions and integer divisions do, so
 *   119.9 s is "119s" and -1.9 s is "0s".
 * - About two significant figures; a unit is dropped when its remainder is zero ("2m", not "2m0s").
 *
 * Branches, with d the duration:
 *   d <= -2 s → "<invalid>" (a clock skew of under 2 s counts as "now")
 *   d < 0 s   → "0s"
 *   < 120 s   → "Ns"
 *   < 10 min  → "XmYs" / "Xm"
 *   < 3 h     → "Xm"
 *   < 8 h     → "XhYm" / "Xh"
 *   < 48 h    → "Xh"
 *   < 8 d     → "XdYh" / "Xd"
 *   < 2 y     → "Xd"           (a year is 365 days)
 *   < 8 y     → "XyYd" / "Xy"
 *   else      → "Xy"
 */

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;
const HOURS_PER_DAY = 24;
const DAYS_PER_YEAR = 365;

/** HumanDuration of `durationMs` milliseconds (negative for a time in the future). */
export function humanDuration(durationMs: number): string {
  const seconds = Math.trunc(durationMs / MS_PER_SECOND);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 2 * 60) return `${seconds}s`;

  const minutes = Math.trunc(durationMs / MS_PER_MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 3 * 60) return `${minutes}m`;

  const hours = Math.trunc(durationMs / MS_PER_HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;

  const days = Math.trunc(hours / HOURS_PER_DAY);
  if (hours < 8 * HOURS_PER_DAY) {
    const h = hours % HOURS_PER_DAY;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 2 * DAYS_PER_YEAR * HOURS_PER_DAY) return `${days}d`;

  const years = Math.trunc(days / DAYS_PER_YEAR);
  if (hours < 8 * DAYS_PER_YEAR * HOURS_PER_DAY) {
    const dy = days % DAYS_PER_YEAR;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

/**
 * Age of a Kubernetes timestamp (RFC 3339, e.g. `metadata.creationTimestamp`) at `nowMs`, as the
 * printers' translateTimestampSince gives it: `<unknown>` when the timestamp is absent (Go's zero
 * time) or unreadable, else humanDuration(now - timestamp).
 */
export function timestampAge(timestamp: unknown, nowMs: number): string {
  const at = parseTimestamp(timestamp);
  return at === undefined ? "<unknown>" : humanDuration(nowMs - at);
}

/** Milliseconds since the epoch of an RFC 3339 timestamp, or undefined when absent or unreadable. */
export function parseTimestamp(timestamp: unknown): number | undefined {
  if (typeof timestamp !== "string" || timestamp === "") return undefined;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? undefined : ms;
}
