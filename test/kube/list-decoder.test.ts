import { describe, expect, it } from "vitest";
import { ListDecodeError, ListDecoder } from "../../src/kube/list-decoder.ts";

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
});
