/**
 * The row layout most printers.go handlers share: Name, the kind's own columns, Age, then its
 * wide (priority 1) columns. A kind states only its own and wide columns and cells; this module
 * adds the Name and Age around them, so they cannot drift apart between kinds.
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, NAME_COLUMN } from "./columns.ts";
import { cellPrinter, type ColumnDefinition, type Printer, type TableCell } from "./printer.ts";

export interface NameAgeCells {
  /** One cell per own column, between Name and Age. */
  own: TableCell[];
  /** One cell per wide column, after Age. */
  wide?: TableCell[];
}

export function nameAgePrinter(
  ownColumns: readonly ColumnDefinition[],
  wideColumns: readonly ColumnDefinition[],
  cells: (object: KubeObject, now: number) => NameAgeCells,
): Printer {
  return cellPrinter([NAME_COLUMN, ...ownColumns, AGE_COLUMN, ...wideColumns], (object, now) => {
    const { own, wide = [] } = cells(object, now);
    return [nameCell(object), ...own, ageCell(object, now), ...wide];
  });
}
