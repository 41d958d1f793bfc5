import { describe, expect, it } from "vitest";
import { WatchDecodeError, WatchDecoder } from "../../src/kube/watch-decoder.ts";

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
});
