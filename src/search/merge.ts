/**
 * One page of a search from the pages its clusters answered: a k-way merge by (key, cluster), so a
 * search lists every cluster's objects in one key order, each cluster's as its informer lists them.
 *
 * Guarantees (per cluster, for one snapshot of its cache):
 * - The merged items are a prefix of the (key, cluster) order of everything not yet answered: an
 *   item is taken only when no cluster still reading may hold a smaller key (its page ended at
 *   `next.after`, the last key it examined: the cut), and at most `limit` are taken.
 * - Each cluster's new position follows its last item taken, or its page's own `next` when every
 *   item of its page was taken (the keys it examined beyond its last match hold no match), or
 *   nothing when its list is complete. So the next page neither repeats nor skips a key.
 * Memory: the clusters' pages, which the caller already holds; the merge copies no bodies.
 */
import type { Position } from "../cache/versioned-list.ts";

/** A cluster's page, read after key `from` (versioned-list.ts VersionedPage, not expired). */
export interface ClusterPage {
  cluster: string;
  from: string;
  at: number;
  items: string[];
  keys: string[];
  next?: Position;
}

export interface MergedPage {
  items: { cluster: string; body: string }[];
  /** Each cluster's position for the next page; undefined when its list is complete. */
  positions: Map<string, Position | undefined>;
}

export function mergePages(pages: readonly ClusterPage[], limit: number): MergedPage {
  let cut: string | undefined;
  for (const page of pages) if (page.next && (cut === undefined || page.next.after < cut)) cut = page.next.after;
  const taken = pages.map(() => 0);
  const items: MergedPage["items"] = [];
  while (items.length < limit) {
    let best = -1;
    for (let p = 0; p < pages.length; p++) {
      const key = pages[p]!.keys[taken[p]!];
      if (key === undefined || (cut !== undefined && key > cut)) continue;
      const bestKey = best === -1 ? undefined : pages[best]!.keys[taken[best]!]!;
      if (bestKey === undefined || key < bestKey || (key === bestKey && pages[p]!.cluster < pages[best]!.cluster)) best = p;
    }
    if (best === -1) break;
    const page = pages[best]!;
    items.push({ cluster: page.cluster, body: page.items[taken[best]!]! });
    taken[best]!++;
  }
  const positions = new Map<string, Position | undefined>();
  pages.forEach((page, p) => {
    const count = taken[p]!;
    if (count === page.keys.length) positions.set(page.cluster, page.next);
    else positions.set(page.cluster, { at: page.at, after: count === 0 ? page.from : page.keys[count - 1]! });
  });
  return { items, positions };
}
