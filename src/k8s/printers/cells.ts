/**
 * Cell formatters several printers share, each the TypeScript reading of one apimachinery or
 * printers.go helper named in its comment. All are pure.
 */
import type { KubeObject } from "../../kube/types.ts";
import { humanDuration, parseTimestamp, timestampAge } from "../duration.ts";
import { at, record, records, text, type JsonRecord } from "./json.ts";
import { labelSelectorString } from "./label-selector.ts";

export function nameCell(object: KubeObject): string {
  return text(object.metadata.name);
}

/** translateTimestampSince(creationTimestamp). */
export function ageCell(object: KubeObject, now: number): string {
  return timestampAge(object.metadata.creationTimestamp, now);
}

/** translateTimestampSince of any timestamp field, `<unknown>` when it is absent. */
export function sinceCell(timestamp: unknown, now: number): string {
  return timestampAge(timestamp, now);
}

/** HumanDuration of `to - from` (two timestamps); "" when `from` is absent. */
export function durationBetween(from: unknown, to: unknown, now: number): string {
  const start = parseTimestamp(from);
  if (start === undefined) return "";
  return humanDuration((parseTimestamp(to) ?? now) - start);
}

/** layoutContainerCells: container names and images of a pod spec, each joined by ",". */
export function containerCells(podSpec: JsonRecord): [names: string, images: string] {
  const containers = records(podSpec.containers);
  return [containers.map((c) => text(c.name)).join(","), containers.map((c) => text(c.image)).join(",")];
}

/** The pod spec inside `spec.template` (Deployment, ReplicaSet, Job …). */
export function templatePodSpec(spec: JsonRecord): JsonRecord {
  return at(spec, "template", "spec");
}

/** labels.FormatLabels: `k=v` sorted by key, joined by ","; `<none>` when empty. */
export function formatLabels(labels: unknown): string {
  const entries = Object.entries(record(labels) ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? "<none>" : entries.map(([k, v]) => `${k}=${text(v)}`).join(",");
}

/** metav1.FormatLabelSelector: the selector text, `<none>` when it selects everything or nothing, `<error>` when invalid. */
export function formatLabelSelector(selector: unknown): string {
  const formatted = labelSelectorString(selector);
  if (formatted === "<invalid>") return "<error>";
  return formatted === "" ? "<none>" : formatted;
}

/** The first `max` items joined by ",", then ` + N more...` for the rest (printers.go listWithMoreString). */
export function listWithMore(items: readonly string[], max: number, separator = ","): string {
  const shown = items.slice(0, max).join(separator);
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}

/** A load balancer's ingress points: each IP, else hostname; distinct, sorted, joined by "," (loadBalancerStatusStringer, wide). */
export function loadBalancerIngress(loadBalancer: JsonRecord): string {
  const points = new Set<string>();
  for (const ingress of records(loadBalancer.ingress)) {
    const point = text(ingress.ip) || text(ingress.hostname);
    if (point !== "") points.add(point);
  }
  return [...points].sort().join(",");
}

/** printBoolPtr: "True" / "False", `<unset>` when absent. */
export function boolPointerCell(value: unknown): string {
  return typeof value === "boolean" ? (value ? "True" : "False") : "<unset>";
}
