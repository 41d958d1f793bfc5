/**
 * Streams a Kubernetes list response (`{"kind", "apiVersion", "metadata", "items": [...]}`) item by
 * item, so memory is bounded by one item and never by the list (DESIGN invariant 6). A list at a
 * specific resourceVersion has no `limit`, and the watch cache ignores `limit` for RV "0", so one
 * response can hold a whole resource (reference §1.2).
 *
 * Guarantees: `onItem` receives each element of the top-level `items` array in order, parsed (with
 * `itemsAsText`, as its text, for `parseListItem`);
 * every other top-level member is parsed and returned by `end()`; `end()` throws ListDecodeError
 * unless the document was one complete JSON object. Members may come in any order. An item (or
 * other member) longer than MAX_UPSTREAM_ITEM_BYTES is refused with ListDecodeError once that much
 * of it arrived, before it is parsed: the capture never grows past the bound plus one chunk. Its
 * length is counted in UTF-16 code units, each of which took at least one byte on the wire.
 *
 * With `dropManagedFields`, an item's `metadata.managedFields` is cut out of its text before it is
 * parsed, when the scanner can tell for certain that it is that member (compact JSON, as the API
 * server writes it, and not the first member of metadata); otherwise the item is parsed whole. So
 * an item never loses anything else, and the caller's transform, which drops the field anyway,
 * must still run. What it saves: managedFields is a quarter of a pod's text, and its `fieldsV1` keys
 * are all distinct; parsing, transforming and serializing a bench pod took 26.8 µs with it and 22.9
 * without (Node 24, CPU time, BENCHMARKS.md "Issue 28: relist").
 */
import { MAX_UPSTREAM_ITEM_BYTES, MAX_UPSTREAM_ITEM_TEXT } from "./upstream-limits.ts";

export class ListDecodeError extends Error {
  override readonly name = "ListDecodeError";
}

export interface ListHeader {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  [member: string]: unknown;
}

const QUOTE = 34; // "
const BACKSLASH = 92;
const COLON = 58;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** Depth of an item's own members (document 1, `items` 2, the item object 3) and of its metadata's. */
const ITEM_MEMBER_DEPTH = 3;
const METADATA_MEMBER_DEPTH = 4;
/** The key that opens an item's metadata object, and the member cut from it (compact JSON only). */
const METADATA_KEY = '"metadata":{';
const MANAGED_FIELDS_KEY = '"managedFields":[';

export interface ListDecoderOptions {
  /** Cut each item's `metadata.managedFields` before parsing it, where certain (see the header). */
  dropManagedFields?: boolean;
  /**
   * Hand each item over as its JSON text, for the caller to parse with `parseListItem` when it uses
   * it: a batch then holds texts, not parsed objects, while it fills (see client.ts).
   */
  itemsAsText?: boolean;
}

/** Parses an item handed over as text (`itemsAsText`); a malformed one is a ListDecodeError. */
export function parseListItem(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw malformed(text);
  }
}

function malformed(text: string): ListDecodeError {
  return new ListDecodeError(`malformed JSON in the list response near ${JSON.stringify(text.slice(0, 40))}`);
}

/**
 * The index of the quote that closes a string whose contents start at `from`, or, when the text
 * ends first, `-(n + 1)` where n is the number of backslashes it ends with.
 */
export function closingQuote(text: string, from: number): number {
  for (let quote = text.indexOf('"', from); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (quote - backslashes - 1 >= from && text.charCodeAt(quote - backslashes - 1) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  let trailing = 0;
  while (text.length - trailing - 1 >= from && text.charCodeAt(text.length - trailing - 1) === BACKSLASH) trailing++;
  return -(trailing + 1);
}

/** Where the scanner stands in the top-level object. */
type Expect = "document" | "key" | "colon" | "value" | "comma" | "items" | "done";

export class ListDecoder {
  readonly #onItem: (item: unknown) => void;
  readonly #header: ListHeader = {};
  #expect: Expect = "document";
  #depth = 0;
  #inString = false;
  #escaped = false;
  #key = "";
  /** Text of the value (or key, or item) being captured, across chunks; undefined when not capturing. */
  #capture: string[] | undefined;
  /** Length of the text in `#capture`. */
  #captured = 0;
  /** Depth at which the current capture started: it ends when the scanner is back at this depth. */
  #captureDepth = 0;
  #captureIsKey = false;
  #capturePrimitive = false;
  readonly #dropManagedFields: boolean;
  readonly #itemsAsText: boolean;
  /** Whether the scanner is inside the captured item's `metadata` object. */
  #inMetadata = false;
  /** Offsets in the captured item of the text to cut (`,"managedFields":[…]`); -1 when none. */
  #cutFrom = -1;
  #cutTo = -1;

  constructor(onItem: (item: unknown) => void, options: ListDecoderOptions = {}) {
    this.#onItem = onItem;
    this.#dropManagedFields = options.dropManagedFields === true;
    this.#itemsAsText = options.itemsAsText === true;
  }

  push(text: string): void {
    let segment = 0; // start of the part of `text` that belongs to the current capture
    let i = 0;
    while (i < text.length) {
      if (this.#inString) {
        // Jump to the string's closing quote: a quote preceded by an even run of backslashes.
        if (this.#escaped) {
          this.#escaped = false;
          i++;
          continue;
        }
        const close = closingQuote(text, i);
        if (close < 0) {
          this.#escaped = (-close - 1) % 2 === 1; // odd trailing backslashes escape the next chunk's first char
          break;
        }
        i = close;
        this.#inString = false;
        if (this.#capture && this.#depth === this.#captureDepth) this.#finishCapture(text.slice(segment, i + 1));
        i++;
        continue;
      }
      if (this.#capture && !this.#capturePrimitive) {
        i = this.#scanContainer(text, i, segment);
        continue;
      }
      const c = text.charCodeAt(i);
      if (this.#capture) {
        // a primitive (number, true, false, null) ends at a delimiter, which is then read as structure
        if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c <= 32) {
          this.#finishCapture(text.slice(segment, i));
        } else {
          i++;
          continue;
        }
      }
      if (c <= 32) {
        i++;
        continue; // whitespace outside strings
      }
      switch (this.#expect) {
        case "document":
          if (c !== OPEN_BRACE) throw new ListDecodeError("a list response must be a JSON object");
          this.#depth = 1;
          this.#expect = "key";
          break;
        case "key":
          if (c === CLOSE_BRACE) this.#close();
          else if (c === QUOTE) {
            segment = i;
            this.#startCapture(1, { key: true });
            this.#inString = true;
          } else throw new ListDecodeError("expected a member name in the list object");
          break;
        case "colon":
          if (c !== COLON) throw new ListDecodeError("expected ':' in the list object");
          this.#expect = "value";
          break;
        case "value":
          if (this.#key === "items" && c === OPEN_BRACKET) {
            this.#depth = 2;
            this.#expect = "items";
          } else {
            segment = i;
            this.#startValue(c, 1);
          }
          break;
        case "comma":
          if (c === COMMA) this.#expect = "key";
          else if (c === CLOSE_BRACE) this.#close();
          else throw new ListDecodeError("expected ',' or '}' in the list object");
          break;
        case "items":
          if (c === COMMA) break;
          if (c === CLOSE_BRACKET) {
            this.#depth = 1;
            this.#expect = "comma";
          } else {
            segment = i;
            this.#startValue(c, 2);
          }
          break;
        case "done":
          throw new ListDecodeError("unexpected data after the list object");
      }
      i++;
    }
    if (this.#capture) {
      const part = text.slice(segment);
      this.#capture.push(part);
      this.#captured += part.length;
      this.#refuseOversized(this.#captured);
    }
  }

  /** The non-item members read so far (Kubernetes writes kind, apiVersion and metadata before items). */
  get header(): Readonly<ListHeader> {
    return this.#header;
  }

  /** Ends the document and returns its non-item members. */
  end(): ListHeader {
    if (this.#expect !== "done") throw new ListDecodeError("the list response ended early (incomplete JSON)");
    return this.#header;
  }

  /**
   * Scans a captured container from `i` until it closes (then finishes the capture) or the chunk
   * ends; returns where the scanner goes on. Only quotes and brackets matter here, and a string is
   * skipped to its closing quote at once: one tight loop over the chunk, without the per-character
   * state checks of `push` (the scan was 9.5% of an initial list's samples; Node, 20,000 bench pods:
   * BENCHMARKS.md "Issue 28: relist").
   */
  #scanContainer(text: string, i: number, segment: number): number {
    let depth = this.#depth;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        if (this.#dropManagedFields && this.#captureDepth === 2) {
          this.#depth = depth;
          this.#findManagedFields(text, i, segment);
        }
        const close = closingQuote(text, i + 1);
        if (close < 0) {
          // The string goes on in the next chunk; odd trailing backslashes escape its first char.
          this.#depth = depth;
          this.#inString = true;
          this.#escaped = (-close - 1) % 2 === 1;
          return text.length;
        }
        i = close + 1;
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--;
        if (depth === this.#captureDepth) {
          this.#depth = depth;
          this.#finishCapture(text.slice(segment, i + 1));
          return i + 1;
        }
        if (depth === METADATA_MEMBER_DEPTH && this.#cutFrom >= 0 && this.#cutTo < 0) this.#cutTo = this.#captured + (i + 1 - segment);
      }
      i++;
    }
    this.#depth = depth;
    return i;
  }

  /**
   * At a quote opening a string in a captured item, at offset `i` of `text` (whose capture began at
   * `segment`): notes whether it opens the item's metadata, or metadata's managedFields. A string
   * followed by ':' is a key (a value is followed by ',', '}' or ']'), and a quote after ',' is
   * structural, so at depth 4 inside metadata this is metadata's own member. Patterns cut by a
   * chunk's end are not recognized: that item is parsed whole, which is only slower.
   */
  #findManagedFields(text: string, i: number, segment: number): void {
    if (this.#depth === ITEM_MEMBER_DEPTH) {
      this.#inMetadata = text.startsWith(METADATA_KEY, i);
    } else if (
      this.#depth === METADATA_MEMBER_DEPTH &&
      this.#inMetadata &&
      this.#cutFrom < 0 &&
      i > 0 &&
      text.charCodeAt(i - 1) === COMMA &&
      text.startsWith(MANAGED_FIELDS_KEY, i)
    ) {
      this.#cutFrom = this.#captured + (i - 1 - segment);
    }
  }

  #startCapture(depth: number, options: { key?: boolean; primitive?: boolean } = {}): void {
    this.#capture = [];
    this.#captured = 0;
    this.#inMetadata = false;
    this.#cutFrom = -1;
    this.#cutTo = -1;
    this.#captureDepth = depth;
    this.#captureIsKey = options.key ?? false;
    this.#capturePrimitive = options.primitive ?? false;
  }

  /** Starts capturing a value whose first character is `c`, at container depth `depth`. */
  #startValue(c: number, depth: number): void {
    if (c === QUOTE) {
      this.#startCapture(depth);
      this.#inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.#startCapture(depth);
      this.#depth = depth + 1;
    } else {
      this.#startCapture(depth, { primitive: true });
    }
  }

  #finishCapture(last: string): void {
    this.#refuseOversized(this.#captured + last.length);
    let text = this.#capture!.join("") + last;
    this.#capture = undefined;
    if (this.#cutTo > this.#cutFrom && this.#cutFrom >= 0) text = text.slice(0, this.#cutFrom) + text.slice(this.#cutTo);
    // the delimiter that ended a primitive is structural: let the caller see it
    this.#capturePrimitive = false;
    if (this.#itemsAsText && this.#captureDepth === 2) {
      this.#onItem(text);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw malformed(text);
    }
    if (this.#captureIsKey) {
      this.#key = value as string;
      this.#expect = "colon";
    } else if (this.#captureDepth === 2) {
      this.#onItem(value);
    } else {
      this.#header[this.#key] = value;
      this.#expect = "comma";
    }
  }

  #refuseOversized(length: number): void {
    if (length <= MAX_UPSTREAM_ITEM_BYTES) return;
    const what = this.#captureDepth === 2 ? "a list item" : this.#captureIsKey ? "a member name" : `the list's '${this.#key}'`;
    this.#capture = undefined;
    throw new ListDecodeError(`${what} exceeds ${MAX_UPSTREAM_ITEM_TEXT}: refused, not buffered (no Kubernetes object is that large)`);
  }

  #close(): void {
    this.#depth = 0;
    this.#expect = "done";
  }
}
