import { describe, expect, it } from "vitest";
import { ListDecodeError, ListDecoder } from "../../src/kube/list-decoder.ts";
import { MAX_UPSTREAM_ITEM_BYTES } from "../../src/kube/upstream-limits.ts";
import { PIECE_UNITS, pushUntilRefused } from "../helpers/push-until-refused.ts";

function decodeInChunks(text: string, size: number) {
  const items: unknown[] = [];
  const decoder = new ListDecoder((item) => items.push(item));
  for (let i = 0; i < text.length; i += size) decoder.push(text.slice(i, i + size));
  return { items, header: decoder.end() };
}

const list = {
  kind: "PodList",
  apiVersion: "v1",
  metadata: { resourceVersion: "42", continue: "tok", remainingItemCount: 3 },
  items: [
    { metadata: { name: "a", labels: { "x/y": "}{][\"," } }, spec: { list: [1, [2, { z: null }]] } },
    { metadata: { name: "b\\\"" }, n: -1.5e3, t: true, f: false },
    "a string item",
    7,
  ],
};

describe("ListDecoder", () => {
  it.each([1, 2, 3, 7, 64, 100_000])("streams every item in order whatever the chunk size (%i)", (size) => {
    const { items, header } = decodeInChunks(JSON.stringify(list, null, size % 2 === 0 ? 2 : 0), size);
    expect(items).toEqual(list.items);
    expect(header).toEqual({ kind: "PodList", apiVersion: "v1", metadata: list.metadata });
  });

  it("reads members that come after the items", () => {
    const { items, header } = decodeInChunks('{"items":[{"a":1}],"metadata":{"resourceVersion":"9"}}', 5);
    expect(items).toEqual([{ a: 1 }]);
    expect(header.metadata?.resourceVersion).toBe("9");
  });

  it("handles an empty list", () => {
    const { items, header } = decodeInChunks('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}', 4);
    expect(items).toEqual([]);
    expect(header.kind).toBe("PodList");
  });

  it("hands out each item before the rest of the document is read", () => {
    const items: unknown[] = [];
    const decoder = new ListDecoder((item) => items.push(item));
    decoder.push('{"items":[{"n":1},{"n":');
    expect(items).toEqual([{ n: 1 }]);
  });

  it.each([
    ["a truncated document", '{"items":[{"a":1}'],
    ["an array", "[1,2]"],
    ["trailing data", '{"items":[]} {}'],
    ["broken item JSON", '{"items":[{"a":tru}]}'],
  ])("rejects %s", (_, text) => {
    expect(() => decodeInChunks(text, 3)).toThrow(ListDecodeError);
  });

  describe("bounded items (issue 17, review A9)", () => {
    it("refuses an item over the bound once that much of it arrived, before parsing it", () => {
      const items: unknown[] = [];
      const decoder = new ListDecoder((item) => items.push(item));
      decoder.push('{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"small"}},{"pad":"');
      const piece = "y".repeat(PIECE_UNITS);
      const { error, pushed } = pushUntilRefused(() => decoder.push(piece));
      expect(error).toEqual(new ListDecodeError("a list item exceeds 3 MiB: refused, not buffered (no Kubernetes object is that large)"));
      expect(pushed).toBeLessThanOrEqual(MAX_UPSTREAM_ITEM_BYTES);
      expect(items).toEqual([{ metadata: { name: "small" } }]);
    });

    it("refuses an oversized item that arrives in one chunk, and any other oversized member", () => {
      const item = `{"pad":"${"x".repeat(MAX_UPSTREAM_ITEM_BYTES)}"}`;
      expect(() => decodeInChunks(`{"items":[${item}]}`, 16 * 1024 * 1024)).toThrow(/^a list item exceeds 3 MiB/);
      expect(() => decodeInChunks(`{"metadata":${item},"items":[]}`, 64 * 1024)).toThrow(/^the list's 'metadata' exceeds 3 MiB/);
    });

    it("keeps an item just under the bound", () => {
      const pad = "x".repeat(MAX_UPSTREAM_ITEM_BYTES - 100);
      const { items } = decodeInChunks(`{"items":[{"pad":"${pad}"},{"n":2}]}`, 64 * 1024);
      expect(items).toHaveLength(2);
    });
  });
});
