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

type TableFormat = Extract<ObjectFormat, { kind: "table" }>;

/** An event's states, each parsed on first use and shared between watchers: never mutated. */
export interface ParsedEvent {
  object(): KubeObject;
  oldObject(): KubeObject;
}

/** How a watcher encodes an object's frame; equal `key`s give equal bytes for the same event and type. */
export interface FrameEncoding {
  key: string;
  encode(type: WatchType, object: string, parsed: () => KubeObject): string;
}

/**
 * What one watcher is shown of a log event: its type and object (JSON text), or nothing. `own` says
 * the object is the event's new state as logged, so its frame is the same for every watcher of the
 * same encoding; a DELETED for leaving the selection carries the old state re-stamped instead.
 * `parsed` is the event's states parsed once for every watcher (event-range.ts); they are not mutated.
 */
export function translate(
  event: LogEvent,
  matches: ((object: KubeObject) => boolean) | undefined,
  parsed: ParsedEvent,
): { type: WatchType; object: string; own: boolean } | undefined {
  if (event.type === "sync" || event.object === null) return undefined;
  const own = (type: WatchType) => ({ type, object: event.object!, own: true });
  if (event.type === "add") return !matches || matches(parsed.object()) ? own("ADDED") : undefined;
  if (event.type === "delete") return !matches || matches(parsed.object()) ? own("DELETED") : undefined;
  if (!matches || event.oldObject === null) return !matches || matches(parsed.object()) ? own("MODIFIED") : undefined;
  const before = matches(parsed.oldObject());
  const after = matches(parsed.object());
  if (before && after) return own("MODIFIED");
  if (after) return own("ADDED");
  if (before) {
    // Left the selection: DELETED with the state it left in, at the change's resourceVersion (a
    // copy: the parsed state is shared).
    const left = parse(event.oldObject);
    left.metadata.resourceVersion = event.resourceVersion;
    return { type: "DELETED", object: JSON.stringify(left), own: false };
  }
  return undefined;
}

function parse(text: string): KubeObject {
  return JSON.parse(text) as KubeObject;
}

const JSON_ENCODING: FrameEncoding = { key: "json", encode: (type, object) => jsonFrame(type, object) };

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

  /** Whether this watcher takes objects as they are (plain JSON, the same bytes for every such watcher). */
  get plain(): boolean {
    return this.#format.kind === "json";
  }

  /**
   * How this watcher's frames are encoded at `now`, shared with every watcher of the same encoding
   * (event-range.ts); undefined while its next frame must be its own: a Table watcher's first, which
   * carries the column definitions.
   */
  sharedEncoding(now: number): FrameEncoding | undefined {
    const format = this.#format;
    if (format.kind === "json") return JSON_ENCODING;
    if (format.kind === "metadata") {
      return { key: `metadata:${format.apiVersion}`, encode: (type, _object, parsed) => jsonFrame(type, partialObjectMetadata(parsed(), format.apiVersion)) };
    }
    if (!this.#columnsSent) return undefined;
    // Age cells are printed at `now`: frames are shared within the second only.
    return {
      key: `table:${format.apiVersion}:${this.#includeObject}:${Math.floor(now / 1000)}`,
      encode: (type, _object, parsed) => this.#tableFrame(type, parsed(), now, false),
    };
  }

  /** This watcher's own frame of `object` (JSON text; `parsed`, when given, is the same object parsed). */
  frame(type: WatchType, object: string, now: number, parsed: () => KubeObject = () => parse(object)): string {
    if (this.#format.kind === "json") return jsonFrame(type, object);
    if (this.#format.kind === "metadata") return jsonFrame(type, partialObjectMetadata(parsed(), this.#format.apiVersion));
    const frame = this.#tableFrame(type, parsed(), now, !this.#columnsSent);
    this.#columnsSent = true;
    return frame;
  }

  #tableFrame(type: WatchType, object: KubeObject, now: number, withColumns: boolean): string {
    const rv = object.metadata.resourceVersion;
    const row = table(
      printedKindOf(this.#info),
      [object],
      rv === undefined ? {} : { resourceVersion: rv },
      { now, includeObject: this.#includeObject, apiVersion: (this.#format as TableFormat).apiVersion },
      withColumns,
    );
    return `{"type":${JSON.stringify(type)},"object":${JSON.stringify(row)}}\n`;
  }

  /**
   * A BOOKMARK: an empty object of the watched kind carrying only the resourceVersion. The one that
   * ends a watch-list's initial events is annotated `k8s.io/initial-events-end`, and, as 1.32 does
   * (response.go watchListTransformer; 1.34 dropped it and clients ignore it), with the empty list
   * of the answer's type, base64 of its JSON, so a client can rebuild the list in that type.
   */
  bookmark(resourceVersion: string, initialEventsEnd = false): string {
    const apiVersion = this.#info.group === "" ? this.#info.version : `${this.#info.group}/${this.#info.version}`;
    const annotations = { "k8s.io/initial-events-end": "true", "kubernetes.io/initial-events-list-blueprint": this.#listBlueprint(apiVersion) };
    const metadata = { resourceVersion, ...(initialEventsEnd ? { annotations } : {}) };
    const object = { kind: this.#info.kind, apiVersion, metadata };
    if (this.#format.kind === "metadata") return jsonFrame("BOOKMARK", partialObjectMetadata(object, this.#format.apiVersion));
    return `{"type":"BOOKMARK","object":${JSON.stringify(object)}}\n`;
  }

  #listBlueprint(apiVersion: string): string {
    const list =
      this.#format.kind === "metadata"
        ? { kind: "PartialObjectMetadataList", apiVersion: this.#format.apiVersion, metadata: {}, items: [] }
        : { kind: `${this.#info.kind}List`, apiVersion, metadata: {}, items: [] };
    return btoa(JSON.stringify(list));
  }
}

export function jsonFrame(type: WatchType | "BOOKMARK", object: string): string {
  return `{"type":"${type}","object":${object}}\n`;
}

/** An ERROR event carrying a Status; the stream ends after it. */
export function errorFrame(status: object): string {
  return `{"type":"ERROR","object":${JSON.stringify(status)}}\n`;
}
