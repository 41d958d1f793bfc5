/**
 * Metadata-only answers (`Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`,
 * or `as=PartialObjectMetadataList` for a list), as kube-apiserver converts them in
 * `asPartialObjectMetadata(List)` (AS pkg/endpoints/handlers/response.go): an object becomes
 * `{kind: PartialObjectMetadata, apiVersion: meta.k8s.io/v1, metadata}` — its whole ObjectMeta,
 * nothing else — and a list `{kind: PartialObjectMetadataList, apiVersion, metadata: ListMeta,
 * items}` whose items carry their kind and apiVersion (unlike a typed list's). A watch sends each
 * event's object, bookmarks included, converted the same way. controller-runtime's metadata caches
 * (client-go's metadata client) and kube-rs `metadata_watcher` send these, and cannot decode a full
 * object from a watch.
 *
 * The server refuses the list form for one object and the object form for a list (406: "you
 * requested PartialObjectMetadata, but the requested object is a list"); so do we, before the
 * answer starts (the server finds out per event for a watch; the request is wrong either way).
 */
import type { KubeObject } from "../kube/types.ts";
import { statusErrors } from "./status.ts";

export type MetadataApiVersion = "meta.k8s.io/v1" | "meta.k8s.io/v1beta1";

/** A negotiated metadata-only answer: the version asked for, and whether the list form was. */
export interface MetadataFormat {
  kind: "metadata";
  apiVersion: MetadataApiVersion;
  list: boolean;
}

/** The kind an `as=` clause may name for metadata only, and whether it is the list form. */
export function metadataTarget(as: string | undefined): { list: boolean } | undefined {
  if (as === "PartialObjectMetadata") return { list: false };
  if (as === "PartialObjectMetadataList") return { list: true };
  return undefined;
}

/** Refuses the object form for a list and the list form for one object (or a watch's events), as the server does. */
export function requireMetadataTarget(format: MetadataFormat, answersList: boolean): void {
  if (format.list === answersList) return;
  throw statusErrors.notAcceptable(
    answersList
      ? "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1 (you requested PartialObjectMetadata, but the requested object is a list)"
      : "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1 (you requested PartialObjectMetadataList, but the requested object is not a list)",
  );
}

/** One object as PartialObjectMetadata (JSON text). */
export function partialObjectMetadata(body: string | KubeObject, apiVersion: MetadataApiVersion): string {
  const object = typeof body === "string" ? (JSON.parse(body) as KubeObject) : body;
  return JSON.stringify({ kind: "PartialObjectMetadata", apiVersion, metadata: object.metadata });
}

/** The opening of a PartialObjectMetadataList up to its first item: `items` follows as a JSON array. */
export function partialListHead(apiVersion: MetadataApiVersion, listMeta: object): string {
  return `{"kind":"PartialObjectMetadataList","apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(listMeta)},"items":[`;
}
