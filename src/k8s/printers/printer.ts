/**
 * What a Table printer is: the column definitions of one kind (wide ones included, in order) and a
 * function from one object to its row's cells. The API server always prints wide (printers/storage
 * `Wide: true`), so `print` returns one cell per column, priority-1 cells included.
 *
 * Contract for every printer: pure and synchronous (the caller passes `now`, in ms since the epoch),
 * never mutates the object, reads absent fields as Go's zero value, and returns cells whose JSON
 * types are the server's: strings, JSON integers where the Go printer appends an int64, booleans
 * where it appends a bool (whatever the column's declared `type`).
 */
import type { KubeObject } from "../../kube/types.ts";

/** metav1.TableColumnDefinition; every field is always serialized. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A cell as the server encodes it; null where a CRD column's JSONPath finds nothing. */
export type TableCell = string | number | boolean | null;

/** metav1.TableRowCondition as the pod printer sets it. */
export interface TableRowCondition {
  type: "Completed";
  status: "True";
  reason: string;
  message: string;
}

export interface PrintedRow {
  cells: TableCell[];
  /** Only the pod printer sets these (Succeeded / Failed pods). */
  conditions?: TableRowCondition[];
}

export interface Printer {
  readonly columns: readonly ColumnDefinition[];
  print(object: KubeObject, now: number): PrintedRow;
}

/** A printer whose rows never carry conditions: every kind but Pod. */
export function cellPrinter(columns: readonly ColumnDefinition[], cells: (object: KubeObject, now: number) => TableCell[]): Printer {
  return { columns, print: (object, now) => ({ cells: cells(object, now) }) };
}
