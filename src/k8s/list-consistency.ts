/**
 * The resourceVersion a `/k8s` list is served at, decided as kube-apiserver 1.32 decides it
 * (kubernetes-api-server-facts.md §4 "List resourceVersion"; cacher.go `shouldDelegateList`,
 * etcd3 store.go `GetList`), from ListOptions list-options.ts already validated:
 *
 * - unset or "0": the cache as it is. At "0" the watch cache ignores `limit` (the whole list, no
 *   continue); a continued list is etcd's, which keeps its limit;
 * - N with Exact, or the legacy N + limit: the cache only while it is at exactly N;
 * - N otherwise (NotOlderThan): the cache once it is at least at N;
 * - `continue` with a resourceVersion other than "0" is the server's 400.
 *
 * It holds no state and reads no cache: the route calls it before it reads anything.
 */
import type { ListOptionsQuery } from "./list-options.ts";
import { statusErrors } from "./status.ts";

/** What a list's pages must be served at. */
export type ListResourceVersion = { match: "any" } | { match: "notOlderThan"; rv: string } | { match: "exact"; rv: string };

/** The resourceVersion a list is served at and the limit that applies to its page (undefined: none). */
export function listResourceVersion(o: ListOptionsQuery, limit: number | undefined): { at: ListResourceVersion; limit: number | undefined } {
  const { resourceVersion: rv, resourceVersionMatch: match } = o;
  const continues = o.continue !== undefined;
  // etcd3 store.go: only a resourceVersion that names a point conflicts with a token's own.
  if (continues && rv !== undefined && rv !== "0") throw statusErrors.badRequest("specifying resource version is not allowed when using continue");
  const pageLimit = limit === 0 || (rv === "0" && !continues) ? undefined : limit;
  if (rv === undefined || rv === "0") return { at: { match: "any" }, limit: pageLimit };
  const exact = match === "Exact" || (match === undefined && limit !== undefined && limit > 0);
  return { at: exact ? { match: "exact", rv } : { match: "notOlderThan", rv }, limit: pageLimit };
}
