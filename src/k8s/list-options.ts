/**
 * The ListOptions of a `/k8s` list or watch, checked as kube-apiserver 1.32 checks them before it
 * reads anything (apimachinery `internalversion/validation.ValidateListOptions`, facts §3 422 and §4
 * Watch-list), and a watch's start as the server defaults it (`SetListOptionsDefaults`):
 *
 * - every rule broken is one cause of a single 422 Invalid Status on `ListOptions.meta.k8s.io`,
 *   worded as the server words it, so kubectl and client-go print and branch on the same text;
 * - a resourceVersion that is not a decimal is a 400 (etcd3 `ValidateListOptions`): the RVs we hand
 *   out are the upstream server's, always decimal, so no other spelling can name a point of ours;
 * - a watch starts with the current objects (a watch-list) when it says `sendInitialEvents=true`, or
 *   says nothing at RV ""/"0" (the WatchList gate is on in 1.32); otherwise it starts after its RV.
 *
 * - a watch's `timeoutSeconds` is a non-negative integer (else 400), bounded by
 *   MAX_WATCH_TIMEOUT_SECONDS; 0 or absent leaves the choice to the watch hub (random in [30, 60) min).
 *
 * It holds no state and reads no cache: the route calls it first, so a bad request touches nothing.
 */
import { StatusError } from "./status.ts";

/** The options these rules read, as the query gave them (absent or empty → undefined). */
export interface ListOptionsQuery {
  watch: boolean;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: string | undefined;
  continue?: string | undefined;
  /** Present (whatever its value) is what the rules test; its value only picks the watch's start. */
  sendInitialEvents?: boolean | undefined;
}

/** One broken rule: apimachinery's field.Error of type Forbidden or NotSupported. */
interface FieldError {
  field: "resourceVersionMatch" | "sendInitialEvents";
  type: "Forbidden" | "NotSupported";
  /** Forbidden: why. NotSupported: the value given. */
  detail: string;
  supported?: readonly string[];
}

const forbidden = (field: FieldError["field"], detail: string): FieldError => ({ field, type: "Forbidden", detail });
const notSupported = (value: string, supported: readonly string[]): FieldError => ({ field: "resourceVersionMatch", type: "NotSupported", detail: value, supported });

/** A rule of ValidateListOptions: the error when `broken` holds of the options. */
interface Rule {
  broken(o: ListOptionsQuery, match: string): boolean;
  error(o: ListOptionsQuery, match: string): FieldError;
}

const MATCH_WITHOUT_RV: Rule = {
  broken: (o) => o.resourceVersion === undefined,
  error: () => forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"),
};
const MATCH_WITH_CONTINUE: Rule = {
  broken: (o) => o.continue !== undefined,
  error: () => forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"),
};

/** A list's rules, in the server's order (the order of the causes in the Status). */
const LIST_MATCH_RULES: readonly Rule[] = [
  MATCH_WITHOUT_RV,
  MATCH_WITH_CONTINUE,
  {
    broken: (_, match) => match !== "Exact" && match !== "NotOlderThan",
    error: (_, match) => notSupported(match, ["Exact", "NotOlderThan", ""]),
  },
  {
    broken: (o, match) => match === "Exact" && o.resourceVersion === "0",
    error: () => forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
  },
];

/** A watch's rules about resourceVersionMatch, in the server's order. */
const WATCH_MATCH_RULES: readonly Rule[] = [
  {
    broken: (o) => o.sendInitialEvents === undefined,
    error: () => forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
  },
  {
    broken: (_, match) => match !== "NotOlderThan",
    error: (_, match) => notSupported(match, ["NotOlderThan"]),
  },
  MATCH_WITH_CONTINUE,
];

function brokenRules(o: ListOptionsQuery): FieldError[] {
  const match = o.resourceVersionMatch;
  const errors: FieldError[] = [];
  if (o.watch && o.sendInitialEvents !== undefined && match !== "NotOlderThan") {
    errors.push(forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
  }
  if (match !== undefined) {
    for (const rule of o.watch ? WATCH_MATCH_RULES : LIST_MATCH_RULES) if (rule.broken(o, match)) errors.push(rule.error(o, match));
  }
  if (!o.watch && o.sendInitialEvents !== undefined) errors.push(forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
  return errors;
}

/** errors.NewInvalid(ListOptions.meta.k8s.io, "", errs): one cause per error, the message aggregating them. */
function invalid(errors: FieldError[]): StatusError {
  const text = (e: FieldError) =>
    e.type === "Forbidden" ? `Forbidden: ${e.detail}` : `Unsupported value: "${e.detail}": supported values: ${e.supported!.map((v) => `"${v}"`).join(", ")}`;
  const rendered = errors.map((e) => `${e.field}: ${text(e)}`);
  return new StatusError(422, "Invalid", `ListOptions.meta.k8s.io "" is invalid: ${rendered.length === 1 ? rendered[0] : `[${rendered.join(", ")}]`}`, {
    group: "meta.k8s.io",
    kind: "ListOptions",
    causes: errors.map((e) => ({ reason: `FieldValue${e.type}`, message: text(e), field: e.field })),
  });
}

/** Throws the server's 422 for broken rules, then its 400 for a resourceVersion that is not a decimal. */
export function checkListOptions(o: ListOptionsQuery): void {
  const errors = brokenRules(o);
  if (errors.length > 0) throw invalid(errors);
  checkResourceVersionSyntax(o.resourceVersion);
}

/** Throws the storage's 400 for a resourceVersion that is not a decimal (lists, watches and gets alike). */
export function checkResourceVersionSyntax(rv: string | undefined): void {
  if (rv !== undefined && !/^[0-9]+$/.test(rv)) {
    // strconv.ParseUint's error inside the storage's field error (APIObjectVersioner.ParseResourceVersion).
    throw new StatusError(400, "BadRequest", `invalid resource version: resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`);
  }
}

/**
 * Whether a valid watch starts with the current objects: as asked, or — asked nothing — at RV ""/"0"
 * (SetListOptionsDefaults with the WatchList gate on, as in 1.32).
 */
export function sendsInitialEvents(o: ListOptionsQuery): boolean {
  if (o.sendInitialEvents !== undefined) return o.sendInitialEvents;
  return o.resourceVersionMatch === undefined && (o.resourceVersion === undefined || o.resourceVersion === "0");
}

/**
 * The longest a `/k8s` watch runs: kube-apiserver's default --min-request-timeout. kube-apiserver
 * itself takes a client's timeoutSeconds as given; we bound it, so that no stream holds a watcher's
 * place and buffers for a year (review A7). A client re-watches from its last resourceVersion, as it
 * does after every timeout.
 */
export const MAX_WATCH_TIMEOUT_SECONDS = 1_800;

/** A watch's `timeoutSeconds` as given (absent: undefined), bounded by MAX_WATCH_TIMEOUT_SECONDS; a 400 when it is no count. */
export function watchTimeoutSeconds(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const seconds = Number(text);
  if (!Number.isSafeInteger(seconds) || seconds < 0) throw new StatusError(400, "BadRequest", `invalid timeoutSeconds: ${JSON.stringify(text)}`);
  return Math.min(seconds, MAX_WATCH_TIMEOUT_SECONDS);
}
