/**
 * Content negotiation as kube-apiserver does it (kubernetes-api-server-facts.md §1.3, §2): the first
 * acceptable clause of `Accept` wins. For discovery, a clause naming apidiscovery.k8s.io v2/v2beta1
 * `APIGroupDiscoveryList` gets the aggregated document; plain JSON gets the legacy one, and clauses
 * with other `as`/`g`/`v` are skipped (so kubectl's header falls back, never 406). For objects, a
 * meta.k8s.io v1/v1beta1 `Table` clause gets a Table, a `PartialObjectMetadata(List)` clause metadata
 * only (k8s/metadata-only.ts), plain JSON the object. Protobuf is not
 * offered: kubectl's `protobuf,json` header gets JSON.
 */
import { type MetadataFormat, metadataTarget } from "./metadata-only.ts";

interface Clause {
  type: string;
  params: Map<string, string>;
}

function parseAccept(header: string | undefined): Clause[] {
  if (header === undefined || header.trim() === "") return [{ type: "*/*", params: new Map() }];
  return header.split(",").map((part) => {
    const [type, ...rest] = part.split(";");
    const params = new Map<string, string>();
    for (const param of rest) {
      const eq = param.indexOf("=");
      if (eq > 0) params.set(param.slice(0, eq).trim().toLowerCase(), param.slice(eq + 1).trim());
    }
    return { type: (type ?? "").trim().toLowerCase(), params };
  });
}

const isJson = (clause: Clause) => clause.type === "application/json" || clause.type === "application/*" || clause.type === "*/*";
/** A clause asking for a converted form (as/g/v) rather than the plain object. */
const isConversion = (clause: Clause) => clause.params.has("as") || clause.params.has("g") || clause.params.has("v");

export type DiscoveryFormat = { kind: "legacy" } | { kind: "aggregated"; version: "v2" | "v2beta1" };

/** The discovery format to answer with, or undefined when nothing offered is acceptable (406). */
export function negotiateDiscovery(accept: string | undefined): DiscoveryFormat | undefined {
  for (const clause of parseAccept(accept)) {
    if (!isJson(clause)) continue;
    if (!isConversion(clause)) return { kind: "legacy" };
    const version = clause.params.get("v");
    if (
      clause.params.get("g") === "apidiscovery.k8s.io" &&
      clause.params.get("as") === "APIGroupDiscoveryList" &&
      (version === "v2" || version === "v2beta1")
    ) {
      return { kind: "aggregated", version };
    }
  }
  return undefined;
}

export type ObjectFormat = { kind: "json" } | { kind: "table"; apiVersion: "meta.k8s.io/v1" | "meta.k8s.io/v1beta1" } | MetadataFormat;

/** How to answer a get, list or watch, or undefined (406). */
export function negotiateObject(accept: string | undefined): ObjectFormat | undefined {
  for (const clause of parseAccept(accept)) {
    if (!isJson(clause)) continue;
    if (!isConversion(clause)) return { kind: "json" };
    const version = clause.params.get("v");
    if (clause.params.get("g") === "meta.k8s.io" && clause.params.get("as") === "Table" && (version === "v1" || version === "v1beta1")) {
      return { kind: "table", apiVersion: `meta.k8s.io/${version}` };
    }
    const metadata = metadataTarget(clause.params.get("as"));
    if (clause.params.get("g") === "meta.k8s.io" && metadata && (version === "v1" || version === "v1beta1")) {
      return { kind: "metadata", apiVersion: `meta.k8s.io/${version}`, list: metadata.list };
    }
  }
  return undefined;
}

export const OBJECT_MEDIA_TYPES =
  "application/json, application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
export const DISCOVERY_MEDIA_TYPES = "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
