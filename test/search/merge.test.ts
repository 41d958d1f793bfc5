/**
 * The k-way merge of a search's cluster pages (src/search/merge.ts): items in (key, cluster) order,
 * nothing beyond the cut of a cluster still reading, and positions that neither repeat nor skip.
 */
import { describe, expect, it } from "vitest";
import { type ClusterPage, mergePages } from "../../src/search/merge.ts";

function page(cluster: string, keys: string[], next?: string, from = ""): ClusterPage {
  return { cluster, from, at: 7, keys, items: keys.map((k) => `${cluster}:${k}`), ...(next === undefined ? {} : { next: { at: 7, after: next } }) };
}

describe("mergePages", () => {
  it("interleaves by key, ties by cluster name, up to the limit", () => {
    const merged = mergePages([page("b", ["n/1", "n/3"]), page("a", ["n/1", "n/2"])], 3);
    expect(merged.items.map((i) => i.body)).toEqual(["a:n/1", "b:n/1", "a:n/2"]);
    // a is done; b continues after its last item taken.
    expect(merged.positions).toEqual(new Map([["b", { at: 7, after: "n/1" }], ["a", undefined]]));
  });

  it("takes nothing beyond the last key a cluster still reading examined", () => {
    // c's page stopped at n/2 (bytes or scan bound): b's n/3 may come after c's next items.
    const merged = mergePages([page("b", ["n/1", "n/3"]), page("c", ["n/2"], "n/2")], 10);
    expect(merged.items.map((i) => i.body)).toEqual(["b:n/1", "c:n/2"]);
    expect(merged.positions).toEqual(new Map([["b", { at: 7, after: "n/1" }], ["c", { at: 7, after: "n/2" }]]));
  });

  it("moves a cluster whose page matched nothing to its page's end, and keeps one it took nothing from", () => {
    const merged = mergePages([page("a", [], "n/9", "n/0"), page("b", ["x/1"], undefined, "n/5")], 10);
    expect(merged.items).toEqual([]);
    expect(merged.positions).toEqual(new Map([["a", { at: 7, after: "n/9" }], ["b", { at: 7, after: "n/5" }]]));
  });
});
