/**
 * The namespaces a read may cover, when it may not cover the whole cluster (issue 31: a caller
 * whose RBAC allows listing a resource in some namespaces only; auth/rbac ListScope). Routes decide
 * the set once per request; the cache reads only those namespaces' key ranges (Indexer.listIn) and
 * drops other keys unparsed (`holdsKey`) — no per-object authorization.
 *
 * Guarantees:
 * - A cluster-scoped object (key without '/') is never in a set: a set stands for "these
 *   namespaces", not "the cluster scope too"; a read that may cover the cluster scope has no set.
 * - `ranges` is in key order of the namespaces' ranges (`ns/` to `ns0`), which is not name order
 *   ("a-b/" sorts before "a/"): a list walks them as it walks keys.
 */

export class NamespaceSet {
  readonly #names: ReadonlySet<string>;
  /** The namespaces in the order of their key ranges. */
  readonly ranges: readonly string[];

  constructor(names: Iterable<string>) {
    const unique = new Set([...names].filter((name) => name !== ""));
    this.#names = unique;
    this.ranges = [...unique].sort((a, b) => compare(`${a}/`, `${b}/`));
  }

  has(namespace: string): boolean {
    return this.#names.has(namespace);
  }

  /** Whether the object at `key` (`namespace/name`, or `name` when cluster-scoped) is in one of the namespaces. */
  holdsKey(key: string): boolean {
    const slash = key.indexOf("/");
    return slash !== -1 && this.#names.has(key.slice(0, slash));
  }

  get size(): number {
    return this.#names.size;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
