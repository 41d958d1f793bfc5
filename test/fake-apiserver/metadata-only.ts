/**
 * Metadata-only answers as kube-apiserver 1.32 gives them (AS pkg/endpoints/handlers/response.go
 * `asPartialObjectMetadata`/`asPartialObjectMetadataList`): a clause
 * `application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` chosen by the Accept header
 * (the first clause the server can answer wins) turns an object into
 * `{kind: PartialObjectMetadata, apiVersion: meta.k8s.io/v1, metadata}` and a list into a
 * PartialObjectMetadataList whose items carry their kind and apiVersion. The list form for one
 * object, or the object form for a list, is a 406.
 */
import type { IncomingMessage } from "node:http";
import { notAcceptable, StatusError } from "./status.ts";

export interface MetadataOnly {
  apiVersion: string;
  list: boolean;
}

/** What the request's Accept header asks for: metadata only (and which form), or undefined for whole objects. */
export function metadataOnly(req: IncomingMessage): MetadataOnly | undefined {
  for (const clause of (req.headers.accept ?? "").split(",")) {
    const [type, ...rest] = clause.split(";").map((part) => part.trim());
    const params = new Map(rest.map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)] as const));
    if (!/^(application\/json|application\/\*|\*\/\*)$/.test(type ?? "")) continue;
    if (!params.has("as")) return undefined;
    const as = params.get("as");
    const version = params.get("v");
    if (params.get("g") === "meta.k8s.io" && (version === "v1" || version === "v1beta1") && (as === "PartialObjectMetadata" || as === "PartialObjectMetadataList")) {
      return { apiVersion: `meta.k8s.io/${version}`, list: as === "PartialObjectMetadataList" };
    }
  }
  return undefined;
}

/** Throws the server's 406 when the form asked for does not fit the answer (a list, or one object or watch event). */
export function requireForm(wanted: MetadataOnly | undefined, answersList: boolean): void {
  if (!wanted || wanted.list === answersList) return;
  const status = notAcceptable();
  status.message = answersList
    ? "you requested PartialObjectMetadata, but the requested object is a list"
    : "you requested PartialObjectMetadataList, but the requested object is not a list";
  throw new StatusError(status);
}

export function asPartialObjectMetadata(wanted: MetadataOnly, object: { metadata: object }): object {
  return { kind: "PartialObjectMetadata", apiVersion: wanted.apiVersion, metadata: object.metadata };
}
