/**
 * A range of log events in resourceVersion order, as the watch hub hands it to every watcher that
 * reaches it, with what those watchers derive from the events computed once for all of them, as the
 * API server's watch cache computes an event's attributes once and encodes each frame once per
 * encoder (kubernetes-api-server-facts.md §6; review F12):
 * - each event's object and old object parsed once (`parsed`), shared read-only;
 * - each frame (JSON, PartialObjectMetadata or a one-row Table without column definitions) encoded
 *   once per encoding and watch type (`frame`); a Table frame is shared only within the second it
 *   was printed in, since its Age cells are measured at that time;
 * - the plain JSON frames of the whole range, joined and encoded in chunks (`chunks`), for watchers
 *   that take every event as it is.
 *
 * What a range keeps of its own is bounded by HELD_BYTES (frames by their length, parsed states by
 * twice their text's): past it, work is done for each watcher again rather than kept, so the four
 * ranges a hub keeps add at most ~16 MiB to an isolate several objects share.
 *
 * Counters (`FrameCounters`) tell tests and benchmarks how often the work was actually done.
 */
import type { LogEvent } from "../cache/event-log.ts";
import type { KubeObject } from "../kube/types.ts";
import { type FrameEncoding, jsonFrame, type ParsedEvent, type WatchType } from "./watch-events.ts";

/** How often events were parsed and frames encoded, summed over every range of a hub. */
export interface FrameCounters {
  parsed: number;
  framed: number;
}

/** Characters of frames encoded into one chunk. */
export const CHUNK_CHARS = 256 * 1024;
/** Encodings whose frames one range keeps (a new one replaces the oldest). */
const ENCODINGS_KEPT = 8;
/** Bytes of frames and parsed states one range keeps at most (see the contract). */
export const HELD_BYTES = 4 * 1024 * 1024;
const WATCH_TYPES = { add: "ADDED", update: "MODIFIED", delete: "DELETED" } as const;

export class EventRange {
  readonly ordered: readonly LogEvent[];
  readonly #counters: FrameCounters;
  readonly #parsed: (ParsedEvent | undefined)[];
  readonly #frames = new Map<string, Map<string, string>>();
  #chunks: Uint8Array[] | undefined;
  #held = 0;

  constructor(ordered: readonly LogEvent[], counters: FrameCounters) {
    this.ordered = ordered;
    this.#counters = counters;
    this.#parsed = new Array<ParsedEvent | undefined>(ordered.length);
  }

  /** The parsed states of event `index`. */
  parsed(index: number): ParsedEvent {
    let parsed = this.#parsed[index];
    if (!parsed) {
      const event = this.ordered[index]!;
      let object: KubeObject | undefined;
      let oldObject: KubeObject | undefined;
      parsed = {
        object: () => object ?? this.#parse(event.object, (kept) => (object = kept)),
        oldObject: () => oldObject ?? this.#parse(event.oldObject, (kept) => (oldObject = kept)),
      };
      this.#parsed[index] = parsed;
    }
    return parsed;
  }

  /** Event `index`'s frame of `type` in `encoding`, with the event's own (new) object. */
  frame(index: number, type: WatchType, encoding: FrameEncoding): string {
    let frames = this.#frames.get(encoding.key);
    if (!frames) {
      frames = new Map();
      this.#frames.set(encoding.key, frames);
      if (this.#frames.size > ENCODINGS_KEPT) {
        const [oldest, dropped] = this.#frames.entries().next().value!;
        for (const frame of dropped.values()) this.#held -= frame.length;
        this.#frames.delete(oldest);
      }
    }
    const slot = `${index}:${type}`;
    let frame = frames.get(slot);
    if (frame === undefined) {
      const event = this.ordered[index]!;
      frame = encoding.encode(type, event.object!, () => this.parsed(index).object());
      this.#counters.framed++;
      if (this.#hold(frame.length)) frames.set(slot, frame);
    }
    return frame;
  }

  /** The plain JSON frames of every event (syncs aside), joined and encoded in chunks of about CHUNK_CHARS. */
  chunks(): Uint8Array[] {
    if (!this.#chunks) {
      const frames = this.ordered.flatMap((e) => (e.type === "sync" || e.object === null ? [] : [jsonFrame(WATCH_TYPES[e.type], e.object)]));
      this.#counters.framed += frames.length;
      this.#chunks = encodeChunks(frames);
    }
    return this.#chunks;
  }

  #parse(text: string | null, keep: (object: KubeObject) => void): KubeObject {
    if (text === null) throw new Error("no state to parse");
    this.#counters.parsed++;
    const object = JSON.parse(text) as KubeObject;
    // A parsed object takes about twice its text's bytes.
    if (this.#hold(2 * text.length)) keep(object);
    return object;
  }

  /** Whether `bytes` more fit under HELD_BYTES (and if so, counts them). */
  #hold(bytes: number): boolean {
    if (this.#held + bytes > HELD_BYTES) return false;
    this.#held += bytes;
    return true;
  }
}

/** Frames joined and encoded in chunks of about CHUNK_CHARS. */
function encodeChunks(frames: string[]): Uint8Array[] {
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let text = "";
  for (const frame of frames) {
    text += frame;
    if (text.length >= CHUNK_CHARS) {
      chunks.push(encoder.encode(text));
      text = "";
    }
  }
  if (text !== "") chunks.push(encoder.encode(text));
  return chunks;
}
