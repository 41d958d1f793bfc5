/**
 * Server-side Tables on the fake API server, as kube-apiserver 1.32 answers
 * `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (kubectl's human-readable get, list and
 * watch): `{kind:"Table", apiVersion, metadata, columnDefinitions, rows}` with each row's object
 * per `includeObject` (default Metadata: a PartialObjectMetadata with the full metadata; Object;
 * None: null). A watch sends one-row Tables, with columnDefinitions only in the first event
 * (null after); bookmarks and errors pass unchanged. Content-Type stays application/json.
 * Only kinds with a reference printer (reference-printers.ts) get Tables; others fall back to JSON.
 */
import type { IncomingMessage } from "node:http";
import { referencePrinter, type ReferencePrinter } from "./reference-printers.ts";
import type { ResourceDef } from "./resources.ts";
import type { FakeObject } from "./types.ts";

export interface TableFormat {
  apiVersion: "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";
  includeObject: "Metadata" | "Object" | "None";
  printer: ReferencePrinter;
}

/** The Table the request asks for in its first Accept clause, if any and if the kind can be printed. */
export function requestedTable(req: IncomingMessage, params: URLSearchParams, def: ResourceDef): TableFormat | undefined {
  const first = (req.headers.accept ?? "").split(",")[0] ?? "";
  const parameters = new Map(
    first
      .split(";")
      .slice(1)
      .map((p) => p.trim().split("=") as [string, string]),
  );
  if (parameters.get("as") !== "Table" || parameters.get("g") !== "meta.k8s.io") return undefined;
  const version = parameters.get("v");
  if (version !== "v1" && version !== "v1beta1") return undefined;
  const printer = referencePrinter(def);
  if (!printer) return undefined;
  const include = params.get("includeObject") || "Metadata";
  const includeObject = include === "Object" || include === "None" ? include : "Metadata";
  return { apiVersion: `meta.k8s.io/${version}`, includeObject, printer };
}

function rowObject(format: TableFormat, typed: object, metadata: FakeObject["metadata"]): object | null {
  if (format.includeObject === "None") return null;
  if (format.includeObject === "Object") return typed;
  return { kind: "PartialObjectMetadata", apiVersion: format.apiVersion, metadata };
}

/** A Table of `objects` (each already with its type meta, for includeObject=Object). */
export function tableOf(format: TableFormat, objects: { typed: object; obj: FakeObject }[], metadata: Record<string, unknown>, withColumns = true): object {
  const now = Date.now();
  const columns = format.printer({ metadata: {} }, now).map((c) => ({ name: c.column, type: c.type, format: c.format ?? "", description: "", priority: c.priority }));
  return {
    kind: "Table",
    apiVersion: format.apiVersion,
    metadata,
    columnDefinitions: withColumns ? columns : null,
    rows: objects.map(({ typed, obj }) => ({ cells: format.printer(obj, now).map((c) => c.value), object: rowObject(format, typed, obj.metadata) })),
  };
}
