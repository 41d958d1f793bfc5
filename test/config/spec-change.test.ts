import { describe, expect, it } from "vitest";
import type { ClusterConnection } from "../../src/clusters/cluster.ts";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { specChange } from "../../src/config/spec-change.ts";

const spec = (input: Record<string, unknown> = {}) => parseInformerSpec({ resource: "pods", ...input }, "pods");
const server = (url: string, token?: string): ClusterConnection => ({ server: url, ...(token === undefined ? {} : { token }) });
const equalText = async (a: ClusterConnection | null, b: ClusterConnection | null) => JSON.stringify(a) === JSON.stringify(b);

describe("specChange", () => {
  it("a first spec only starts the loop", async () => {
    expect(await specChange(undefined, spec(), null, equalText)).toEqual({ kind: "changed", created: true, rebuildIndexes: false });
  });

  it("the same spec and connection leave a live watch alone and store nothing", async () => {
    expect(await specChange({ spec: spec(), connection: null }, spec(), null, equalText)).toEqual({ kind: "unchanged", store: false });
  });

  it("other declared subscriptions leave the watch alone but are stored", async () => {
    const previous = { spec: spec(), connection: null };
    const next = spec({ subscriptions: [{ name: "audit", url: "https://example.com/hook", secretBinding: "HOOK_SECRET" }] });
    expect(await specChange(previous, next, null, equalText)).toEqual({ kind: "unchanged", store: true });
  });

  it("a token sealed anew for the same connection is stored, the watch left alone", async () => {
    const previous = { spec: spec(), connection: server("https://a", "sealed-1") };
    expect(await specChange(previous, spec(), server("https://a", "sealed-2"), async () => true)).toEqual({ kind: "unchanged", store: true });
  });

  it.each([
    // what is listed changed: relist
    ["a selector", { labelSelector: "app=x" }, null, { restart: { transformChanged: false, serverMoved: false }, rebuildIndexes: false }],
    // a field the old transform dropped can only come from the server: relist
    ["the transform", { transform: { dropManagedFields: false } }, null, { restart: { transformChanged: true, serverMoved: false }, rebuildIndexes: false }],
    // indexes are rebuilt from the cache, no relist
    ["the indexers", { indexers: { byNode: "spec.nodeName" } }, null, { rebuildIndexes: true }],
    // another API server may be another cluster: relist
    ["the server", {}, server("https://b"), { restart: { transformChanged: false, serverMoved: true }, rebuildIndexes: false }],
  ])("a change of %s", async (_, input, connection, expected) => {
    const previous = { spec: spec(), connection: server("https://a") };
    const change = await specChange(previous, spec(input), connection ?? server("https://a", "new-token"), equalText);
    expect(change).toEqual({ kind: "changed", created: false, ...expected });
  });
});
