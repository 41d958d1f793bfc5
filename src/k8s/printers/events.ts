/**
 * Event printer (KK printers.go 1.32 printEvent), for core/v1 Events and for events.k8s.io/v1
 * Events, which the server prints through the same internal type:
 *   "Last Seen" Type Reason Object Message | wide: Subobject Source "First Seen" Count Name
 * Cells in column order: Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen,
 * Count, Name. FIRST SEEN falls back to eventTime, LAST SEEN to FIRST SEEN; a series gives LAST
 * SEEN and COUNT; a count of 0 prints 1. OBJECT is `kind/name` lower-cased kind (just the kind
 * without a name). SOURCE is "component, host", the reporter and its instance standing in for an
 * empty source (core/v1 `reportingComponent`, events.k8s.io/v1 `reportingController`, both
 * `reportingInstance`). The events.k8s.io/v1 field names (regarding, note, deprecated*) are read too.
 */
import type { KubeObject } from "../../kube/types.ts";
import { nameCell, sinceCell } from "./cells.ts";
import { fieldColumn, NAME_COLUMN } from "./columns.ts";
import { int, record, text } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

/** The first present of a core/v1 field and its events.k8s.io/v1 name. */
function field(event: KubeObject, coreName: string, eventsName: string): unknown {
  return event[coreName] ?? event[eventsName];
}

function isSet(timestamp: unknown): boolean {
  return typeof timestamp === "string" && timestamp !== "";
}

export const EVENT_PRINTER: Printer = cellPrinter(
  [
    fieldColumn("Last Seen", "string", "apiv1.Event.lastTimestamp"),
    fieldColumn("Type", "string", "apiv1.Event.type"),
    fieldColumn("Reason", "string", "apiv1.Event.reason"),
    fieldColumn("Object", "string", "apiv1.Event.involvedObject"),
    fieldColumn("Subobject", "string", "apiv1.ObjectReference.fieldPath", 1),
    fieldColumn("Source", "string", "apiv1.Event.source", 1),
    fieldColumn("Message", "string", "apiv1.Event.message"),
    fieldColumn("First Seen", "string", "apiv1.Event.firstTimestamp", 1),
    fieldColumn("Count", "string", "apiv1.Event.count", 1),
    { ...NAME_COLUMN, priority: 1 },
  ],
  (event, now) => {
    const involved = record(field(event, "involvedObject", "regarding")) ?? {};
    const source = record(field(event, "source", "deprecatedSource")) ?? {};
    const series = record(event.series);
    const firstTimestamp = field(event, "firstTimestamp", "deprecatedFirstTimestamp");
    const lastTimestamp = field(event, "lastTimestamp", "deprecatedLastTimestamp");
    const firstSeen = isSet(firstTimestamp) ? sinceCell(firstTimestamp, now) : sinceCell(event.eventTime, now);
    let lastSeen = isSet(lastTimestamp) ? sinceCell(lastTimestamp, now) : firstSeen;
    let count = int(field(event, "count", "deprecatedCount"));
    if (series) {
      lastSeen = sinceCell(series.lastObservedTime, now);
      count = int(series.count);
    } else if (count === 0) {
      count = 1; // a singleton event of the new API has no count
    }
    const kind = text(involved.kind).toLowerCase();
    // The internal ReportingController is `reportingComponent` in core/v1 JSON, `reportingController` in events.k8s.io/v1.
    const component = text(source.component) || text(field(event, "reportingComponent", "reportingController"));
    const instance = text(source.host) || text(event.reportingInstance);
    return [
      lastSeen,
      text(event.type),
      text(event.reason),
      text(involved.name) === "" ? kind : `${kind}/${text(involved.name)}`,
      text(involved.fieldPath),
      instance === "" ? component : `${component}, ${instance}`,
      text(field(event, "message", "note")).trim(),
      firstSeen,
      count,
      nameCell(event),
    ];
  },
);
