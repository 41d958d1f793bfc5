/**
 * The lister's pages are bounded by bytes as well as by count (#7.18): a page of large objects or
 * long index values is cut early with a `continue`, and following it yields everything in order.
 */
import { describe, expect, it } from "vitest";
import type { Indexer, ListOptions } from "../../src/cache/indexer.ts";
import { listIndexValues, listObjects, listObjectsInTurns, MAX_PAGE_BYTES, SCAN_PER_TURN } from "../../src/cache/lister.ts";
import { parseLabelSelector } from "../../src/kube/selectors.ts";

/** An index holding `values` (sorted), read the way Indexer.indexValuesPage reads; records each read's limit. */
function fakeIndex(values: string[]) {
  const reads: number[] = [];
  const indexer: Pick<Indexer, "indexValuesPage"> = {
    indexValuesPage: (_index: string, options: ListOptions) => {
      reads.push(options.limit);
      return values.filter((v) => options.after === undefined || v > options.after).slice(0, options.limit);
    },
  };
  return { indexer, reads };
}

function allPages(indexer: Pick<Indexer, "indexValuesPage">, limit: number) {
  const pages: string[][] = [];
  let token: string | undefined;
  do {
    const page = listIndexValues(indexer, "byX", { limit, ...(token === undefined ? {} : { continue: token }) });
    pages.push(page.values);
    token = page.continue;
  } while (token !== undefined);
  return pages;
}

describe("listIndexValues", () => {
  it("cuts a page of long values at MAX_PAGE_BYTES and reads storage in byte-sized batches", () => {
    const values = Array.from({ length: 100 }, (_, i) => `${String(i).padStart(3, "0")}${"v".repeat(100_000)}`);
    const { indexer, reads } = fakeIndex(values);
    const pages = allPages(indexer, 5_000);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) expect(page.join("").length).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    expect(pages.flat()).toEqual(values);
    // after the first small read, no read asks for more rows than fit in a page
    expect(Math.max(...reads.slice(1))).toBeLessThanOrEqual(Math.floor(MAX_PAGE_BYTES / 100_003) + 1);
  });

  it("pages by count, with continue only when more follow", () => {
    const { indexer } = fakeIndex(["", "a", "b", "c"]);
    expect(allPages(indexer, 2)).toEqual([["", "a"], ["b", "c"]]);
    expect(listIndexValues(indexer, "byX", { limit: 4 })).toEqual({ values: ["", "a", "b", "c"] });
  });

  it("returns one value larger than a page on a page of its own", () => {
    const huge = "h".repeat(MAX_PAGE_BYTES + 1);
    const { indexer } = fakeIndex(["a", huge, "z"]);
    expect(allPages(indexer, 10).map((p) => p.length)).toEqual([1, 1, 1]);
  });
});

describe("listObjectsInTurns", () => {
  it("scans a selector in parts of SCAN_PER_TURN objects with other work between them, and answers the page one call makes (B3)", async () => {
    const objects = Array.from({ length: 5_000 }, (_, i) => {
      const name = `p${String(i).padStart(5, "0")}`;
      return { key: `ns/${name}`, body: JSON.stringify({ metadata: { name, namespace: "ns", labels: { app: i % 2 ? "web" : "db" } } }) };
    });
    const indexer = {
      list: (options: ListOptions) => objects.filter((o) => options.after === undefined || o.key > options.after).slice(0, options.limit),
    } as unknown as Indexer;
    const query = { labelSelector: parseLabelSelector("app=web"), limit: 5_000 };
    let pauses = 0;
    const page = await listObjectsInTurns(indexer, query, async () => void pauses++);
    expect(pauses).toBe(Math.ceil(5_000 / SCAN_PER_TURN) - 1);
    expect(page).toEqual(listObjects(indexer, query));
    expect(page.items).toHaveLength(2_500);
  });
});
