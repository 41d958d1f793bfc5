/**
 * The server-side Table envelope: what kube-apiserver 1.32 answers to
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, built from plain JSON objects. The
 * columns and cells of each kind come from its printer (src/k8s/printers/registry.ts).
 *
 * Contract:
 * - Pure and synchronous: no I/O, no clock (the caller passes `now`), inputs are never mutated.
 *   Rows share the caller's metadata / object references (no deep copy), so serialize before
 *   changing the objects.
 * - Like the real server (printers/storage `Wide: true`), the wide (priority 1) columns are always
 *   generated; kubectl hides them unless `-o wide`.
 * - A kind is named by its group and kind (its built-in printer, or the CRD convertor's Name/Age),
 *   or comes with a Printer, e.g. `printerFor(groupKind, crd.additionalPrinterColumns)` for a
 *   custom resource.
 * - Row `object` follows `includeObject` (AS `endpoints/handlers/response.go` asTable):
 *   "Metadata" (the default) → `{kind:"PartialObjectMetadata", apiVersion:<Table apiVersion>,
 *   metadata:<the full ObjectMeta>}`; "Object" → the full object with its `kind` and `apiVersion`
 *   set (list items arrive without them); "None" → `null`, because the server's RawExtension
 *   marshals to `null` and `omitempty` never drops a struct, so the key is present.
 * - Row `conditions` appear only when the printer sets them (Succeeded / Failed pods).
 * - `table()` always has `metadata` (possibly `{}`) and a `rows` array; `columnDefinitions` is
 *   `null` when `withColumns` is false, as in every watch event after the first.
 *
 * Not covered: the server checks `includeObject` only while converting rows, so a bad value with
 * zero rows is not an error there; parseIncludeObject rejects it up front.
 */

import { ValidationError } from "../errors.ts";
import type { KubeObject, ObjectMeta } from "../kube/types.ts";
import type { ColumnDefinition, Printer, TableCell, TableRowCondition } from "./printers/printer.ts";
import { printerFor, type GroupKind } from "./printers/registry.ts";
import type { PrinterColumn, PrinterColumnSource } from "./printers/default.ts";

export type { ColumnDefinition, TableCell, TableRowCondition } from "./printers/printer.ts";
export type { GroupKind, PrinterColumn, PrinterColumnSource };
export { printerFor } from "./printers/registry.ts";

/** Which object each row embeds (`?includeObject=`). */
export type IncludeObject = "None" | "Metadata" | "Object";

/** The negotiated Table group/version (`v=v1` or `v=v1beta1` in the Accept header). */
export type TableApiVersion = "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";

export interface TableOptions {
  /** The time ages are measured at, in milliseconds since the epoch. */
  now: number;
  includeObject: IncludeObject;
  apiVersion: TableApiVersion;
  /**
   * With includeObject "Object": the apiVersion written into an object that lacks one (list items
   * have none), e.g. "v1" or "apps/v1". Without it such an object gets only its `kind`.
   */
  objectApiVersion?: string;
}

export interface PartialObjectMetadata {
  kind: "PartialObjectMetadata";
  apiVersion: TableApiVersion;
  metadata: ObjectMeta;
}

export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  /** Per includeObject; `null` for "None". */
  object: PartialObjectMetadata | KubeObject | null;
}

/** The Table's ListMeta: a list's resourceVersion/continue/remainingItemCount, or an object's resourceVersion. */
export interface TableMetadata {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface Table {
  kind: "Table";
  apiVersion: TableApiVersion;
  metadata: TableMetadata;
  columnDefinitions: ColumnDefinition[] | null;
  rows: TableRow[];
}

/**
 * Parses the `includeObject` query parameter: absent or "" is "Metadata".
 * Throws ValidationError (a 400) `unrecognized includeObject value: "x"` for anything else.
 */
export function parseIncludeObject(value: string | undefined): IncludeObject {
  switch (value) {
    case undefined:
    case "":
    case "Metadata":
      return "Metadata";
    case "Object":
    case "None":
      return value;
    default:
      throw new ValidationError(`unrecognized includeObject value: ${JSON.stringify(value)}`);
  }
}

/**
 * What to print: a group and kind (its built-in printer, or Name/Age for a custom resource), or a
 * kind with a printer the caller built, e.g. `{ kind, printer: printerFor(groupKind, crdColumns) }`.
 */
export type PrintedKind = GroupKind | { kind: string; printer: Printer };

/** What prints a resource: its group and kind's built-in printer, or its CRD's additionalPrinterColumns (read by resource-description.ts). */
export function printedKindOf(info: GroupKind & { printerColumns: readonly PrinterColumn[] }): PrintedKind {
  const { group, kind } = info;
  return info.printerColumns.length === 0 ? { group, kind } : { kind, printer: printerFor(info, info.printerColumns) };
}

function printerOf(printed: PrintedKind): Printer {
  return "printer" in printed ? printed.printer : printerFor(printed);
}

/** The column definitions (wide ones included) for objects of `kind`; a fresh array each call. */
export function columnDefinitions(kind: PrintedKind): ColumnDefinition[] {
  return printerOf(kind).columns.map((c) => ({ ...c }));
}

// ---------------------------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------------------------

/** One row for `object` of `kind`: its cells, pod conditions, and the embedded object per includeObject. */
export function tableRow(kind: PrintedKind, object: KubeObject, options: TableOptions): TableRow {
  const printed = printerOf(kind).print(object, options.now);
  // Key order as the server writes a row: cells, conditions (only when set), object.
  const embedded = embeddedObject(kind.kind, object, options);
  return printed.conditions
    ? { cells: printed.cells, conditions: printed.conditions, object: embedded }
    : { cells: printed.cells, object: embedded };
}

/**
 * A Table of `objects` (in the order given). `metadata` is the list's ListMeta, or for a single
 * object (a get, a watch event) `{ resourceVersion: <the object's> }`. `withColumns` false gives
 * `columnDefinitions: null`, for watch events after the first.
 */
export function table(
  kind: PrintedKind,
  objects: readonly KubeObject[],
  metadata: TableMetadata,
  options: TableOptions,
  withColumns = true,
): Table {
  const listMeta: TableMetadata = {};
  // ListMeta's omitempty: "" strings are dropped; remainingItemCount is a pointer, so 0 stays.
  if (metadata.resourceVersion) listMeta.resourceVersion = metadata.resourceVersion;
  if (metadata.continue) listMeta.continue = metadata.continue;
  if (metadata.remainingItemCount !== undefined) listMeta.remainingItemCount = metadata.remainingItemCount;
  return {
    kind: "Table",
    apiVersion: options.apiVersion,
    metadata: listMeta,
    columnDefinitions: withColumns ? columnDefinitions(kind) : null,
    rows: objects.map((o) => tableRow(kind, o, options)),
  };
}

function embeddedObject(kind: string, object: KubeObject, options: TableOptions): TableRow["object"] {
  switch (options.includeObject) {
    case "None":
      return null;
    case "Metadata":
      return { kind: "PartialObjectMetadata", apiVersion: options.apiVersion, metadata: object.metadata };
    case "Object": {
      const { kind: ownKind, apiVersion: ownApiVersion, ...rest } = object;
      const apiVersion = ownApiVersion ?? options.objectApiVersion;
      // TypeMeta first, as the server encodes it.
      return apiVersion === undefined ? { kind: ownKind ?? kind, ...rest } : { kind: ownKind ?? kind, apiVersion, ...rest };
    }
  }
}

