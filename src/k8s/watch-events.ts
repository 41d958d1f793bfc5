/**
 * Watch events as the API server sends them to one watcher (kubernetes-api-server-facts.md §2, §4):
 * a log event becomes ADDED, MODIFIED or DELETED by the selector's enter/leave rule — tested against
 * the old and the new state, only-new is ADDED, both MODIFIED, only-old DELETED with the previous
 * state stamped with the change's resourceVersion — and is framed as one NDJSON line, with the
 * object as JSON or as a one-row Table (column definitions in the first Table event only).
 * `sync` events are the informer's resync markers: no watcher sees them.
 */
import type { LogEvent } from "../cache/event-log.ts";
import type { KubeObject } from "../kube/types.ts";
import type { ObjectFormat } from "./accept.ts";
import type { ResourceInfo } from "./catalog.ts";
import { type IncludeObject, printedKindOf, table } from "./table.ts";
import { partialObjectMetadata } from "./metadata-only.ts";

export type WatchType = "ADDED" | "MODIFIED" | "DELETED";

/** What one watcher is shown of a log event: its type and object (JSON text), or nothing. */
export function translate(event: LogEvent, matches: ((object: KubeObject) => boolean) | undefined): { type: WatchType; object: string } | undefined {
  if (event.type === "sync" || event.object === null) return undefined;
  if (event.type === "add") return !matches || matches(parse(event.object)) ? { type: "ADDED", object: event.object } : undefined;
  if (event.type === "delete") return !matches || matches(parse(event.object)) ? { type: "DELETED", object: event.object } : undefined;
  if (!matches || event.oldObject === null) return !matches || matches(parse(event.object)) ? { type: "MODIFIED", object: event.object } : undefined;
  const before = matches(parse(event.oldObject));
  const after = matches(parse(event.object));
  if (before && after) return { type: "MODIFIED", object: event.object };
  if (after) return { type: "ADDED", object: event.object };
  if (before) {
    // Left the selection: DELETED with the state it left in, at the change's resourceVersion.
    const left = parse(event.oldObject);
    left.metadata.resourceVersion = event.resourceVersion;
    return { type: "DELETED", object: JSON.stringify(left) };
  }
  return undefined;
}

function parse(text: string): KubeObject {
  return JSON.parse(text) as KubeObject;
}

/** Frames events for one watcher; remembers whether its first Table event went out. */
export class WatchFramer {
  readonly #info: ResourceInfo;
  readonly #format: ObjectFormat;
  readonly #includeObject: IncludeObject;
  #columnsSent = false;

  constructor(info: ResourceInfo, format: ObjectFormat, includeObject: IncludeObject) {
    this.#info = info;
    this.#format = format;
    this.#includeObject = includeObject;
  }

  /** Whether frames of this watcher equal every other plain-JSON watcher's (and can be shared). */
  get plain(): boolean {
    return this.#format.kind === "json";
  }

  frame(type: WatchType, object: string, now: number): string {
    if (this.#format.kind === "json") return jsonFrame(type, object);
    if (this.#format.kind === "metadata") return jsonFrame(type, partialObjectMetadata(object, this.#format.apiVersion));
    const parsed = parse(object);
    const rv = parsed.metadata.resourceVersion;
    const row = table(
      printedKindOf(this.#info),
      [parsed],
      rv === undefined ? {} : { resourceVersion: rv },
      { now, includeObject: this.#includeObject, apiVersion: this.#format.apiVersion },
      !this.#columnsSent,
    );
    this.#columnsSent = true;
    return `{"type":${JSON.stringify(type)},"object":${JSON.stringify(row)}}\n`;
  }

  /** A BOOKMARK: an empty object of the watched kind carrying only the resourceVersion. */
  bookmark(resourceVersion: string, initialEventsEnd = false): string {
    const metadata = { resourceVersion, ...(initialEventsEnd ? { annotations: { "k8s.io/initial-events-end": "true" } } : {}) };
    const apiVersion = this.#info.group === "" ? this.#info.version : `${this.#info.group}/${this.#info.version}`;
    const object = { kind: this.#info.kind, apiVersion, metadata };
    if (this.#format.kind === "metadata") return jsonFrame("BOOKMARK", partialObjectMetadata(object, this.#format.apiVersion));
    return `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`;
  }
}

export function jsonFrame(type: WatchType | "BOOKMARK", object: string): string {
  return `{"type":"${type}","object":${object}}\n`;
}

/** An ERROR event carrying a Status; the stream ends after it. */
export function errorFrame(status: object): string {
  return `{"type":"ERROR","object":${JSON.stringify(status)}}\n`;
}
