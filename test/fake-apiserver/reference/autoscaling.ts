/**
 * The reference HorizontalPodAutoscaler printer (autoscaling/v2; printers.go 1.32
 * printHorizontalPodAutoscaler, formatHPAMetrics):
 *   Name Reference Targets MinPods MaxPods Replicas Age
 * TARGETS: per spec metric, "current/target" from the status metric at the same index (when it is of
 * the same source), two of them, then ` + N more...`; `<none>` without metrics. Quantities print
 * as stored; a missing one is a nil *Quantity, which prints `<nil>`; a missing status `<unknown>`;
 * an unset utilization target `<auto>`.
 */
import { ageOf, type Json, list, nameOf, num, parts, type ReferencePrinter, str } from "./cells.ts";

/** resource.Quantity's String of an optional (pointer) quantity. */
const quantity = (value: unknown): string => (value === undefined || value === null ? "<nil>" : String(value));
const percent = (value: unknown): string | undefined => (typeof value === "number" ? `${value}%` : undefined);

/**
 * One spec metric as formatHPAMetrics prints it. `status` is the status metric at the same index;
 * its source of the spec's type (`status.pods` …) is a pointer, its `current` a struct.
 */
function metric(spec: Json, status: Json | undefined): string {
  const field = spec.type ? String(spec.type).charAt(0).toLowerCase() + String(spec.type).slice(1) : "";
  const source = (spec[field] ?? {}) as Json;
  const target = (source.target ?? {}) as Json;
  const reported = status?.[field] as Json | undefined;
  const current = (reported?.current ?? {}) as Json;
  switch (spec.type) {
    case "External":
    case "Object":
      if (target.averageValue !== undefined) return `${current.averageValue !== undefined ? quantity(current.averageValue) : "<unknown>"}/${quantity(target.averageValue)} (avg)`;
      return `${reported ? quantity(current.value) : "<unknown>"}/${quantity(target.value)}`;
    case "Pods":
      return `${reported ? quantity(current.averageValue) : "<unknown>"}/${quantity(target.averageValue)}`;
    case "Resource":
    case "ContainerResource":
      if (target.averageValue !== undefined) return `${source.name}: ${reported ? quantity(current.averageValue) : "<unknown>"}/${quantity(target.averageValue)}`;
      return `${source.name}: ${percent(current.averageUtilization) ?? "<unknown>"}/${percent(target.averageUtilization) ?? "<auto>"}`;
    default:
      return "<unknown type>";
  }
}

function targets(spec: Json, status: Json): string {
  const metrics = list(spec.metrics);
  if (metrics.length === 0) return "<none>";
  const statuses = list(status.currentMetrics);
  const printed = metrics.map((m, i) => metric(m, statuses[i]));
  return printed.length > 2 ? `${printed.slice(0, 2).join(", ")} + ${printed.length - 2} more...` : printed.join(", ");
}

export const horizontalPodAutoscaler: ReferencePrinter = (obj, now) => {
  const { spec, status } = parts(obj);
  const ref = (spec.scaleTargetRef ?? {}) as Json;
  return [
    nameOf(obj),
    str("Reference", `${ref.kind ?? ""}/${ref.name ?? ""}`),
    str("Targets", targets(spec, status)),
    // minReplicas is a pointer: <unset> when absent.
    str("MinPods", spec.minReplicas === undefined || spec.minReplicas === null ? "<unset>" : String(spec.minReplicas)),
    num("MaxPods", spec.maxReplicas ?? 0),
    num("Replicas", status.currentReplicas ?? 0),
    ageOf(obj, now),
  ];
};
