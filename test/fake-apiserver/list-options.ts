/**
 * metav1.ListOptions from a query string, checked the way the apiserver checks them:
 * malformed values and selectors → 400 BadRequest; unsupported field selector paths → 400;
 * rule violations of ValidateListOptions → 422 Invalid (reference §1.1.4). With the WatchList
 * feature on, a watch at RV ""/"0" without sendInitialEvents is defaulted to a watch-list
 * (SetListOptionsDefaults, reference §1.4.8).
 */
import {
  isEverything,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
  type FieldSelector,
  type LabelSelector,
} from "../../src/kube/selectors.ts";
import type { ResourceDef } from "./resources.ts";
import { unsupportedFieldMessage } from "./resources.ts";
import { badRequest, invalidListOptions, StatusError, type FieldError } from "./status.ts";

export interface ListOptions {
  watch: boolean;
  labelSelector: LabelSelector;
  fieldSelector: FieldSelector;
  /** True when neither selector restricts anything. */
  everything: boolean;
  /** "" when absent. */
  resourceVersion: string;
  /** "" when absent. */
  resourceVersionMatch: string;
  /** 0 when absent. */
  limit: number;
  /** "" when absent. */
  continue: string;
  timeoutSeconds: number | undefined;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
}

// strconv.ParseBool
const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

function parseBool(params: URLSearchParams, name: string): boolean | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v) || v === "") return false;
  throw new StatusError(badRequest(`invalid value for ${name}: "${v}" is not a boolean`));
}

function parseInteger(params: URLSearchParams, name: string): number | undefined {
  const v = params.get(name);
  if (v === null || v === "") return undefined;
  if (!/^-?[0-9]+$/.test(v)) throw new StatusError(badRequest(`invalid value for ${name}: "${v}" is not an integer`));
  return Number(v);
}

/** Parses and validates; throws StatusError (400 or 422) on bad input. */
export function parseListOptions(
  params: URLSearchParams,
  def: ResourceDef,
  opts: { forceWatch: boolean; watchListEnabled: boolean },
): ListOptions {
  const watch = opts.forceWatch || parseBool(params, "watch") === true;
  let labelSelector: LabelSelector;
  let fieldSelector: FieldSelector;
  try {
    labelSelector = parseLabelSelector(params.get("labelSelector") ?? "");
    fieldSelector = parseFieldSelector(params.get("fieldSelector") ?? "");
  } catch (error) {
    if (error instanceof SelectorError) throw new StatusError(badRequest(error.message));
    throw error;
  }
  for (const r of fieldSelector.requirements) {
    if (!def.fieldLabels.includes(r.path)) throw new StatusError(badRequest(unsupportedFieldMessage(def, r.path)));
  }
  const limit = parseInteger(params, "limit") ?? 0;
  const timeoutSeconds = parseInteger(params, "timeoutSeconds");
  const options: ListOptions = {
    watch,
    labelSelector,
    fieldSelector,
    everything: isEverything(labelSelector) && isEverything(fieldSelector),
    resourceVersion: params.get("resourceVersion") ?? "",
    resourceVersionMatch: params.get("resourceVersionMatch") ?? "",
    limit: limit > 0 ? limit : 0,
    continue: params.get("continue") ?? "",
    timeoutSeconds: timeoutSeconds !== undefined && timeoutSeconds > 0 ? timeoutSeconds : undefined,
    allowWatchBookmarks: parseBool(params, "allowWatchBookmarks") ?? false,
    sendInitialEvents: parseBool(params, "sendInitialEvents"),
  };
  const errors = watch ? validateWatch(options, opts.watchListEnabled) : validateList(options);
  if (errors.length > 0) throw new StatusError(invalidListOptions(errors));
  if (options.resourceVersion !== "" && !/^[0-9]+$/.test(options.resourceVersion)) {
    // etcd3 ValidateListOptions: NewBadRequest("invalid resource version: " + the versioner's field error).
    const rv = options.resourceVersion;
    throw new StatusError(badRequest(`invalid resource version: resourceVersion: Invalid value: "${rv}": strconv.ParseUint: parsing "${rv}": invalid syntax`));
  }
  // SetListOptionsDefaults: with the WatchList gate on, a legacy "get state" watch becomes a watch-list.
  if (
    watch &&
    opts.watchListEnabled &&
    options.sendInitialEvents === undefined &&
    options.resourceVersionMatch === "" &&
    (options.resourceVersion === "" || options.resourceVersion === "0")
  ) {
    options.sendInitialEvents = true;
    options.resourceVersionMatch = "NotOlderThan";
  }
  return options;
}

function validateList(o: ListOptions): FieldError[] {
  const errors: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (match !== "") {
    if (o.resourceVersion === "") {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden unless resourceVersion is provided" });
    }
    if (o.continue !== "") {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden when continue is provided" });
    }
    if (match !== "Exact" && match !== "NotOlderThan") {
      errors.push({ field: "resourceVersionMatch", type: "NotSupported", detail: "", value: match, supported: ["Exact", "NotOlderThan", ""] });
    }
    if (match === "Exact" && o.resourceVersion === "0") {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"' });
    }
  }
  if (o.sendInitialEvents !== undefined) {
    errors.push({ field: "sendInitialEvents", type: "Forbidden", detail: "sendInitialEvents is forbidden for list" });
  }
  return errors;
}

function validateWatch(o: ListOptions, watchListEnabled: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined) {
    if (match !== "NotOlderThan") {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan" });
    }
    if (!watchListEnabled) {
      errors.push({ field: "sendInitialEvents", type: "Forbidden", detail: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled" });
    }
  }
  if (match !== "") {
    if (o.sendInitialEvents === undefined) {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided" });
    }
    if (match !== "NotOlderThan") {
      errors.push({ field: "resourceVersionMatch", type: "NotSupported", detail: "", value: match, supported: ["NotOlderThan"] });
    }
    if (o.continue !== "") {
      errors.push({ field: "resourceVersionMatch", type: "Forbidden", detail: "resourceVersionMatch is forbidden when continue is provided" });
    }
  }
  return errors;
}
