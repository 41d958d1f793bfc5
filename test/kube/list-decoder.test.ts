import { describe, expect, it, vi } from "vitest";
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

  describe("dropManagedFields (issue 28: relist)", () => {
    const managedFields = [
      { manager: "kube-controller-manager", operation: "Update", apiVersion: "v1", time: "2026-11-20T08:14:03Z", fieldsType: "FieldsV1",
        fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:app": {} }, "f:ownerReferences": { 'k:{"uid":"1"}': {} } } } },
      { manager: "kubelet", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", subresource: "status",
        fieldsV1: { "f:status": { "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:status": {} } } } } },
    ];
    const pod = (name: string, extra: Record<string, unknown> = {}) => ({
      metadata: { name, namespace: "ns", uid: `uid-${name}`, resourceVersion: "7", labels: { app: "a" }, managedFields, annotations: { note: ',"managedFields":[' } },
      spec: { containers: [{ name: "app", image: "nginx" }] },
      ...extra,
    });
    const withoutManagedFields = (item: unknown) => {
      const copy = structuredClone(item) as { metadata?: { managedFields?: unknown } };
      if (copy.metadata) delete copy.metadata.managedFields;
      return copy;
    };
    const decode = (text: string, size: number) => {
      const items: unknown[] = [];
      const decoder = new ListDecoder((item) => items.push(item), { dropManagedFields: true });
      for (let i = 0; i < text.length; i += size) decoder.push(text.slice(i, i + size));
      decoder.end();
      return items;
    };
    const listOf = (items: unknown[], space?: number) => JSON.stringify({ kind: "PodList", metadata: { resourceVersion: "9" }, items }, null, space);

    it.each([1, 2, 3, 7, 64, 100_000])("loses nothing else, whatever the chunk size (%i)", (size) => {
      const items = [pod("a"), pod("b", { status: { phase: "Running" } }), pod("c")];
      expect(decode(listOf(items), size).map(withoutManagedFields)).toEqual(items.map(withoutManagedFields));
    });

    it("cuts metadata.managedFields of compact items, also when it ends in a later chunk", () => {
      const text = listOf([pod("a"), pod("b"), pod("c")]);
      const decoded = decode(text, 100_000) as ReturnType<typeof pod>[];
      expect(decoded.map((p) => p.metadata.managedFields)).toEqual([undefined, undefined, undefined]);
      expect(decoded[1]).toEqual(withoutManagedFields(pod("b")));
      const items: unknown[] = [];
      const decoder = new ListDecoder((item) => items.push(item), { dropManagedFields: true });
      const split = text.indexOf('"managedFields":[') + 40;
      for (const part of [text.slice(0, split), text.slice(split, split + 30), text.slice(split + 30)]) decoder.push(part);
      decoder.end();
      expect(items).toEqual(decoded);
    });

    it("keeps any managedFields it cannot be certain of: the transform drops metadata's later", () => {
      const first = { metadata: { managedFields, name: "first" } };
      const elsewhere = { metadata: { name: "e", labels: { managedFields: "x" } }, spec: { managedFields: [1] }, managedFields: [2] };
      const nested = { metadata: { name: "n" }, spec: { template: { metadata: { name: "t", managedFields: [3] } } } };
      expect(decode(listOf([first, elsewhere, nested]), 100_000)).toEqual([first, elsewhere, nested]);
      // Pretty-printed (not as the API server writes it): parsed whole.
      expect(decode(listOf([pod("p")], 2), 100_000)).toEqual([pod("p")]);
      // Without the option nothing is cut.
      expect(decodeInChunks(listOf([pod("a")]), 100_000).items).toEqual([pod("a")]);
    });

    it("parses each item once and never its managedFields (the budget of the relist's decode)", () => {
      const items = Array.from({ length: 20 }, (_, i) => pod(`p${i}`));
      const parse = vi.spyOn(JSON, "parse");
      try {
        decode(listOf(items), 64 * 1024);
        const parsed = parse.mock.calls.map(([text]) => text as string);
        const itemTexts = parsed.filter((text) => text.startsWith('{"metadata"'));
        expect(itemTexts).toHaveLength(items.length);
        expect(parsed.filter((text) => text.includes('"managedFields"'))).toEqual([]);
        expect(itemTexts.map((text) => text.length)).toEqual(items.map((item) => JSON.stringify(withoutManagedFields(item)).length));
      } finally {
        parse.mockRestore();
      }
    });
  });
});
