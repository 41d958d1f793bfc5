/**
 * Get and list answers as the API server writes them (kubernetes-api-server-facts.md §2, §4): a
 * get is the object with its kind and apiVersion; a list is `{kind: PodList, apiVersion,
 * metadata: {resourceVersion, continue?, remainingItemCount?}, items}` whose items of a built-in type carry no kind or
 * apiVersion (the server's long-standing quirk, kubernetes#3030; a custom resource's items, served
 * unstructured, keep theirs); with the Table media type, either becomes a
 * `Table`. A list without `limit` is one answer however large the cache, as the API server's:
 * its pages are fetched one after another and streamed, so no answer is held whole in memory.
 */
import type { KubeObject } from "../kube/types.ts";
import type { ObjectFormat } from "./accept.ts";
import { type ResourceInfo, groupVersion } from "./catalog.ts";
import { columnDefinitions, type IncludeObject, printedKindOf, table, tableRow } from "./table.ts";
import { partialListHead, partialObjectMetadata } from "./metadata-only.ts";

export interface ListPageAnswer {
  items: string[];
  /** The client's continue token for the page after this one. */
  continue?: string;
  /** How many items follow this page, when known (only with `continue`). */
  remainingItemCount?: number;
}

export interface ListAnswerInput {
  info: ResourceInfo;
  format: ObjectFormat;
  includeObject: IncludeObject;
  resourceVersion: string;
  now: number;
  first: ListPageAnswer;
  /** Further pages, when the client asked for no limit (the answer is then streamed). */
  rest?: AsyncIterable<string[]>;
}

/** A list item: the stored object without kind and apiVersion. */
export function listItem(body: string): string {
  const object = JSON.parse(body) as Record<string, unknown>;
  delete object.kind;
  delete object.apiVersion;
  return JSON.stringify(object);
}

/** A get's answer: the stored object (it has its kind and apiVersion), or a one-row Table. */
export function objectBody(info: ResourceInfo, body: string, format: ObjectFormat, includeObject: IncludeObject, now: number): string {
  if (format.kind === "json") return body;
  if (format.kind === "metadata") return partialObjectMetadata(body, format.apiVersion);
  const object = JSON.parse(body) as KubeObject;
  const rv = object.metadata.resourceVersion;
  return JSON.stringify(table(printedKindOf(info), [object], rv === undefined ? {} : { resourceVersion: rv }, { now, includeObject, apiVersion: format.apiVersion }));
}

/** The whole list answer: a string when it is one page, a stream when more pages follow. */
export function listBody(input: ListAnswerInput): string | ReadableStream<Uint8Array> {
  const { info, format, resourceVersion } = input;
  const { continue: token, remainingItemCount } = input.first;
  const metadata = {
    resourceVersion,
    ...(token === undefined ? {} : { continue: token }),
    ...(token === undefined || remainingItemCount === undefined ? {} : { remainingItemCount }),
  };
  let head: string;
  let encode: (body: string) => string;
  if (format.kind === "json") {
    head = `{"kind":${JSON.stringify(`${info.kind}List`)},"apiVersion":${JSON.stringify(groupVersion(info))},"metadata":${JSON.stringify(metadata)},"items":[`;
    encode = info.builtIn ? listItem : (body) => body;
  } else if (format.kind === "metadata") {
    head = partialListHead(format.apiVersion, metadata);
    encode = (body) => partialObjectMetadata(body, format.apiVersion);
  } else {
    const options = { now: input.now, includeObject: input.includeObject, apiVersion: format.apiVersion };
    const printed = printedKindOf(info);
    head = `{"kind":"Table","apiVersion":${JSON.stringify(format.apiVersion)},"metadata":${JSON.stringify(metadata)},"columnDefinitions":${JSON.stringify(columnDefinitions(printed))},"rows":[`;
    encode = (body) => JSON.stringify(tableRow(printed, JSON.parse(body) as KubeObject, options));
  }
  const tail = "]}";
  const firstItems = input.first.items.map(encode).join(",");
  if (!input.rest) return head + firstItems + tail;
  const rest = input.rest;
  const encoder = new TextEncoder();
  let written = input.first.items.length > 0;
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  void (async () => {
    try {
      await writer.write(encoder.encode(head + firstItems));
      for await (const items of rest) {
        if (items.length === 0) continue;
        await writer.write(encoder.encode((written ? "," : "") + items.map(encode).join(",")));
        written = true;
      }
      await writer.write(encoder.encode(tail));
      await writer.close();
    } catch (error) {
      // The status line is sent: all a client can be told now is that the body broke off.
      await writer.abort(error).catch(() => {});
    }
  })();
  return readable;
}
