/**
 * policy/v1 and coordination.k8s.io/v1 printers (KK printers.go 1.32 printPodDisruptionBudget, printLease):
 *   PodDisruptionBudget  Name "Min Available" "Max Unavailable" "Allowed Disruptions" Age
 *                        (an IntOrString as given, N/A when absent; disruptions an integer)
 *   Lease                Name Holder Age
 */
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, int, text } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

function intOrStringCell(value: unknown): string {
  return typeof value === "number" || typeof value === "string" ? String(value) : "N/A";
}

export const POD_DISRUPTION_BUDGET_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Min Available", "string", "The minimum number of pods that must be available."),
    column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    AGE_COLUMN,
  ],
  (pdb, now) => {
    const spec = at(pdb, "spec");
    return [nameCell(pdb), intOrStringCell(spec.minAvailable), intOrStringCell(spec.maxUnavailable), int(at(pdb, "status").disruptionsAllowed), ageCell(pdb, now)];
  },
);

export const LEASE_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Holder", "string", "coordinationv1.LeaseSpec.holderIdentity"), AGE_COLUMN], (lease, now) => [
  nameCell(lease),
  text(at(lease, "spec").holderIdentity),
  ageCell(lease, now),
]);
