/**
 * HorizontalPodAutoscaler printer (KK printers.go 1.32 printHorizontalPodAutoscaler, formatHPAMetrics):
 *   Name Reference Targets MinPods MaxPods Replicas Age
 * REFERENCE is `kind/name`; MINPODS `<unset>` when absent (a string), MAXPODS and REPLICAS integers.
 * TARGETS lists "current/target" per metric (two, then ` + N more...`), `<none>` without metrics;
 * a missing current metric is `<unknown>`, a reported one without its value Go's nil quantity
 * `<nil>`, an unset utilization target `<auto>`. autoscaling/v2 objects are read as they are; an
 * autoscaling/v1 object's CPU target becomes its one metric, as the server's v1→internal
 * conversion does.
 */
import { ageCell, listWithMore, nameCell } from "./cells.ts";
import { AGE_COLUMN, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, int, record, records, specAndStatus, text, type JsonRecord } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

const MAX_LISTED_METRICS = 2;

/** The metric source of `type` inside a spec or status entry: `Resource` → `resource`, … */
function source(entry: JsonRecord | undefined, type: string): JsonRecord | undefined {
  return entry ? record(entry[type.charAt(0).toLowerCase() + type.slice(1)]) : undefined;
}

/** A resource.Quantity pointer's String(): the quantity as stored, `<nil>` when absent. */
function quantity(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "<nil>";
}

function percent(value: unknown, fallback: string): string {
  return typeof value === "number" ? `${int(value)}%` : fallback;
}

/**
 * formatHPAMetrics for one metric. `status` is the status metric at the same index; printers.go
 * reads its current value whenever the status has a source of the spec's type, so a missing value
 * prints `<nil>`, except the current average of an averaged External or Object metric, whose
 * pointer it checks (`<unknown>`).
 */
function metricCell(spec: JsonRecord, status: JsonRecord | undefined): string {
  const type = text(spec.type);
  const target = at(source(spec, type), "target");
  const reported = source(status, type);
  const current = at(reported, "current");
  const currentQuantity = (field: string) => (reported ? quantity(current[field]) : "<unknown>");
  switch (type) {
    case "External":
    case "Object":
      if (target.averageValue !== undefined) return `${current.averageValue !== undefined ? quantity(current.averageValue) : "<unknown>"}/${quantity(target.averageValue)} (avg)`;
      return `${currentQuantity("value")}/${quantity(target.value)}`;
    case "Pods":
      return `${currentQuantity("averageValue")}/${quantity(target.averageValue)}`;
    case "Resource":
    case "ContainerResource": {
      const name = text(source(spec, type)?.name);
      if (target.averageValue !== undefined) return `${name}: ${currentQuantity("averageValue")}/${quantity(target.averageValue)}`;
      return `${name}: ${percent(current.averageUtilization, "<unknown>")}/${percent(target.averageUtilization, "<auto>")}`;
    }
    default:
      return "<unknown type>";
  }
}

/** autoscaling/v1 has one CPU utilization target instead of metrics. */
function metricsOf(spec: JsonRecord, status: JsonRecord): [specs: JsonRecord[], statuses: JsonRecord[]] {
  if (spec.metrics !== undefined || spec.targetCPUUtilizationPercentage === undefined) {
    return [records(spec.metrics), records(status.currentMetrics)];
  }
  const specs = [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: spec.targetCPUUtilizationPercentage } } }];
  const current = status.currentCPUUtilizationPercentage;
  const statuses = current === undefined ? [] : [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: current } } }];
  return [specs, statuses];
}

function targetsCell(spec: JsonRecord, status: JsonRecord): string {
  const [specs, statuses] = metricsOf(spec, status);
  if (specs.length === 0) return "<none>";
  return listWithMore(
    specs.map((metric, i) => metricCell(metric, statuses[i])),
    MAX_LISTED_METRICS,
    ", ",
  );
}

export const HORIZONTAL_POD_AUTOSCALER_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("Reference", "string", "autoscalingv2beta1.HorizontalPodAutoscalerSpec.scaleTargetRef"),
    fieldColumn("Targets", "string", "autoscalingv2beta1.HorizontalPodAutoscalerSpec.metrics"),
    fieldColumn("MinPods", "string", "autoscalingv2beta1.HorizontalPodAutoscalerSpec.minReplicas"),
    fieldColumn("MaxPods", "string", "autoscalingv2beta1.HorizontalPodAutoscalerSpec.maxReplicas"),
    fieldColumn("Replicas", "string", "autoscalingv2beta1.HorizontalPodAutoscalerStatus.currentReplicas"),
    AGE_COLUMN,
  ],
  (hpa, now) => {
    const [spec, status] = specAndStatus(hpa);
    const target = at(spec, "scaleTargetRef");
    return [
      nameCell(hpa),
      `${text(target.kind)}/${text(target.name)}`,
      targetsCell(spec, status),
      typeof spec.minReplicas === "number" ? String(int(spec.minReplicas)) : "<unset>",
      int(spec.maxReplicas),
      int(status.currentReplicas),
      ageCell(hpa, now),
    ];
  },
);
