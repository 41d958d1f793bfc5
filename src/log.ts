/**
 * Structured logs: one JSON line per notable event, so `wrangler tail --format json` and Workers Logs
 * can filter on its fields (`msg`, `level`, `informer`, `subscription`, `cause`, …).
 *
 * Guarantees:
 * - A line is one `console.*` call with one JSON string: `{"level", "msg", ...fields}`. The level
 *   picks the console method, so the platform's own level filter agrees with ours.
 * - Fields are what the caller names: ids, causes, counts, statuses, error messages. Never pass an
 *   object body, a secret or a token; the fields a line may carry are the small set in
 *   `LogFields`, and the tests grep every line for the secrets and tokens they used.
 * - Volume stays low: `info` is for rare state changes (a relist, a dead letter), `warn` for a
 *   failure that is retried, `error` for one that needs a person; `debug` lines (a watch rotating
 *   at its timeout, every delivery retry) are dropped unless `LOG_LEVEL=debug` (wrangler.toml var).
 *
 * Issue 12 (many clusters) adds a `cluster` field next to `informer`: lines are built from an
 * identity object (`{ informer }` today), never from a formatted string.
 */

export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** What a line may carry besides its message: ids and small facts, never bodies or secrets. */
export interface LogFields {
  informer?: string;
  cluster?: string;
  subscription?: string;
  cause?: string | null;
  reason?: string | null;
  error?: string | null;
  [field: string]: string | number | boolean | null | undefined;
}

/** Error texts are cut to this: enough to act on, never a whole answer body. */
export const MAX_ERROR_CHARS = 300;

let threshold: number = RANK.info;

/** Sets the lowest level written (LOG_LEVEL); an unknown name keeps the default, `info`. */
export function setLogLevel(level: string | undefined): void {
  threshold = RANK[(level ?? "info").toLowerCase() as LogLevel] ?? RANK.info;
}

/** Writes one line at `level` when the level is enabled (audit lines always). */
export function log(level: LogLevel, msg: string, fields: LogFields = {}, always = false): void {
  if (RANK[level] < threshold && !always) return;
  const line: Record<string, unknown> = { level, msg };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    line[name] = typeof value === "string" && value.length > MAX_ERROR_CHARS ? `${value.slice(0, MAX_ERROR_CHARS)}…` : value;
  }
  const text = JSON.stringify(line);
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else if (level === "info") console.info(text);
  else console.debug(text);
}

/** An error's message (not its stack) for a log field. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const logger = {
  debug: (msg: string, fields?: LogFields) => log("debug", msg, fields),
  info: (msg: string, fields?: LogFields) => log("info", msg, fields),
  warn: (msg: string, fields?: LogFields) => log("warn", msg, fields),
  error: (msg: string, fields?: LogFields) => log("error", msg, fields),
  /** Who changed what (credential names, never values): written whatever LOG_LEVEL is. */
  audit: (msg: string, fields: LogFields) => log("info", msg, { audit: true, ...fields }, true),
};
