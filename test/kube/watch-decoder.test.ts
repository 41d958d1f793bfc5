import { describe, expect, it } from "vitest";
import { MAX_UPSTREAM_ITEM_BYTES } from "../../src/kube/upstream-limits.ts";
import { WatchDecodeError, WatchDecoder } from "../../src/kube/watch-decoder.ts";
import { PIECE_UNITS, pushUntilRefused } from "../helpers/push-until-refused.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const line = (type: string, name: string) => `${JSON.stringify({ type, object: { metadata: { name } } })}\n`;

describe("WatchDecoder", () => {
  it("returns every event of a chunk that holds several", () => {
    const decoder = new WatchDecoder();
    const events = decoder.push(encode(line("ADDED", "a") + line("MODIFIED", "b")));
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ["ADDED", "a"],
      ["MODIFIED", "b"],
    ]);
  });

  it("joins an event split across chunks and parses it only when its newline arrives", () => {
    const decoder = new WatchDecoder();
    const text = line("ADDED", "split");
    expect(decoder.push(encode(text.slice(0, 10)))).toEqual([]);
    expect(decoder.push(encode(text.slice(10, -1)))).toEqual([]);
    expect(decoder.push(encode("\n"))).toHaveLength(1);
    expect(decoder.end()).toBe(false);
  });

  it("decodes a multi-byte character split between chunks", () => {
    const decoder = new WatchDecoder();
    const bytes = encode(line("ADDED", "naïve-ü"));
    const cut = bytes.indexOf(0xc3) + 1; // inside the two-byte ï
    decoder.push(bytes.slice(0, cut));
    expect(decoder.push(bytes.slice(cut))[0]!.object.metadata.name).toBe("naïve-ü");
  });

  it("reports a line cut off by the end of the stream", () => {
    const decoder = new WatchDecoder();
    decoder.push(encode('{"type":"ADDED","obj'));
    expect(decoder.end()).toBe(true);
  });

  it.each([
    ["not JSON", "{nope\n"],
    ["no type", '{"object":{}}\n'],
    ["unknown type", '{"type":"WHATEVER","object":{}}\n'],
    ["no object", '{"type":"ADDED"}\n'],
  ])("rejects a malformed line (%s)", (_, text) => {
    expect(() => new WatchDecoder().push(encode(text))).toThrow(WatchDecodeError);
  });

  it("skips blank lines", () => {
    expect(new WatchDecoder().push(encode(`\n\n${line("BOOKMARK", "x")}\n`))).toHaveLength(1);
  });

  describe("bounded lines (issue 17, review A9)", () => {
    const padded = (bytes: number) => `{"type":"ADDED","object":{"metadata":{"name":"big"},"pad":"${"x".repeat(bytes)}"}}\n`;

    it("refuses a line over the bound as soon as that much of it arrived, before its newline", () => {
      const decoder = new WatchDecoder();
      const piece = encode("y".repeat(PIECE_UNITS));
      expect(decoder.push(encode('{"type":"ADDED","object":{"pad":"'))).toEqual([]);
      const { error, pushed } = pushUntilRefused(() => decoder.push(piece));
      expect(error).toEqual(new WatchDecodeError("a watch event line exceeds 3 MiB: refused, not buffered (no Kubernetes object is that large)"));
      // Never more than one chunk past the bound was held.
      expect(pushed).toBeLessThanOrEqual(MAX_UPSTREAM_ITEM_BYTES);
    });

    it("counts the bound in bytes: a line of multi-byte characters is refused by its encoded length", () => {
      const decoder = new WatchDecoder();
      const chars = Math.ceil(MAX_UPSTREAM_ITEM_BYTES / 3) + 10; // fewer characters than the bound, more bytes
      expect(() => decoder.push(encode(`{"type":"ADDED","object":{"pad":"${"€".repeat(chars)}"}}\n`))).toThrow(WatchDecodeError);
    });

    it("keeps a line just under the bound, and the lines after it", () => {
      const decoder = new WatchDecoder();
      const big = padded(MAX_UPSTREAM_ITEM_BYTES - 200);
      const events = [...decoder.push(encode(big.slice(0, 100))), ...decoder.push(encode(big.slice(100) + line("DELETED", "after")))];
      expect(events.map((e) => e.type)).toEqual(["ADDED", "DELETED"]);
    });
  });
});
