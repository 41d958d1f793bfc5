/**
 * Splits a watch response body into events. The server writes one JSON object per line but flushes
 * whenever its channel is empty, so one chunk may hold many events and one event may span chunks
 * (reference §1.4.2). Guarantees: every complete line is returned exactly once, in order; a line
 * is never parsed before its newline arrives; a partial line left at the end of the body is
 * reported by `end()` (a stream cut mid-event), never parsed; a line longer than
 * MAX_UPSTREAM_ITEM_BYTES is refused (WatchDecodeError) as soon as that many bytes of it arrived,
 * so the carried partial line never grows past the bound. An object's event is read from the object's
 * own text, which is kept for the cache to store (object-text.ts); with `omitManagedFields` its
 * `metadata.managedFields` are left out (for a caller that drops them: they are never parsed).
 */
import { readWatchLine } from "./object-text.ts";
import type { WatchEvent } from "./types.ts";
import { MAX_UPSTREAM_ITEM_BYTES, MAX_UPSTREAM_ITEM_TEXT } from "./upstream-limits.ts";

export class WatchDecodeError extends Error {
  override readonly name = "WatchDecodeError";
}

const WATCH_EVENT_TYPES = new Set(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);
const NEWLINE = 10;

export interface WatchDecoderOptions {
  /** The caller drops `metadata.managedFields`: events may come without them. */
  omitManagedFields?: boolean;
}

export class WatchDecoder {
  readonly #text = new TextDecoder();
  readonly #omitManagedFields: boolean;
  #carry = "";
  /** Bytes of the line being received (`#carry`'s on the wire): counted in bytes, as the bound is. */
  #lineBytes = 0;

  constructor(options: WatchDecoderOptions = {}) {
    this.#omitManagedFields = options.omitManagedFields === true;
  }

  /** Decodes a chunk and returns the events whose lines it completed. Throws WatchDecodeError on a malformed or oversized line. */
  push(chunk: Uint8Array): WatchEvent[] {
    this.#countLineBytes(chunk);
    const text = this.#carry + this.#text.decode(chunk, { stream: true });
    const events: WatchEvent[] = [];
    let start = 0;
    for (let newline = text.indexOf("\n"); newline !== -1; newline = text.indexOf("\n", start)) {
      const line = text.slice(start, newline);
      start = newline + 1;
      if (line.trim() !== "") events.push(readWatchLine(line, this.#omitManagedFields) ?? parseWatchLine(line));
    }
    this.#carry = text.slice(start);
    return events;
  }

  /** Ends the body. Returns true when an incomplete line was cut off (the stream broke mid-event). */
  end(): boolean {
    const rest = this.#carry + this.#text.decode();
    this.#carry = "";
    this.#lineBytes = 0;
    return rest.trim() !== "";
  }

  /** Follows line lengths in `chunk`'s bytes (a newline byte is never part of a multi-byte character); throws before decoding an oversized line. */
  #countLineBytes(chunk: Uint8Array): void {
    let start = 0;
    for (let newline = chunk.indexOf(NEWLINE); newline !== -1; newline = chunk.indexOf(NEWLINE, start)) {
      this.#refuseOversized(this.#lineBytes + newline - start);
      this.#lineBytes = 0;
      start = newline + 1;
    }
    this.#lineBytes += chunk.length - start;
    this.#refuseOversized(this.#lineBytes);
  }

  #refuseOversized(lineBytes: number): void {
    if (lineBytes <= MAX_UPSTREAM_ITEM_BYTES) return;
    this.#carry = "";
    throw new WatchDecodeError(`a watch event line exceeds ${MAX_UPSTREAM_ITEM_TEXT}: refused, not buffered (no Kubernetes object is that large)`);
  }
}

export function parseWatchLine(line: string): WatchEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new WatchDecodeError(`malformed watch event (${line.length} bytes): not JSON`);
  }
  const event = parsed as Partial<WatchEvent> | null;
  if (
    !event ||
    typeof event !== "object" ||
    typeof event.type !== "string" ||
    !WATCH_EVENT_TYPES.has(event.type) ||
    !event.object ||
    typeof event.object !== "object"
  ) {
    throw new WatchDecodeError("malformed watch event: expected {type, object}");
  }
  return event as WatchEvent;
}
