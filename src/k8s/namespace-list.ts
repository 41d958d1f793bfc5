/**
 * `GET /api/v1/namespaces` (list and watch) when namespaces are not mirrored (issue 30 item 2,
 * review G7): namespace pickers (k9s, Headlamp, Lens, `kubectl get ns`) list namespaces before
 * anything else. As the single-name stand-in (namespace-stand-in.ts), the list holds the
 * namespaces the cluster's served namespaced resources hold objects in, each an Active stand-in.
 * A mirrored `namespaces` informer serves the real objects instead (the route asks it first).
 * Discovery lists `namespaces` then too (withSynthesizedNamespaces).
 *
 * Guarantees:
 * - Cheap: one read per served namespaced resource, of its cache's namespaces (the indexer's
 *   namespace index skips from one namespace's key range to the next: a row per namespace, not per
 *   object; cache/indexer.ts). No object is parsed. At most NAMESPACE_READ_CONCURRENCY of those
 *   calls are in flight at once, however many resources the cluster serves.
 * - The list's resourceVersion is the greatest of those resources' caches' RVs when they were read
 *   (RVs of one cluster are etcd revisions, comparable across resources): every namespace listed
 *   held an object at or before it. It means nothing to any informer's log, and a watch takes it
 *   only as "the list I hold is the current one" (below).
 * - A watch compares the namespaces every NAMESPACE_WATCH_POLL_SECONDS and sends ADDED when one
 *   first holds an object, DELETED (its stand-in) when its last object goes, each at the RV of the
 *   read that saw it; a BOOKMARK (when asked for) every NAMESPACE_BOOKMARK_SECONDS. A watch with no
 *   RV or RV "0" starts with an ADDED for each namespace (and, for a watch-list, the initial-events
 *   end bookmark); a watch from an RV starts from the namespaces as they are then: a namespace that
 *   came or went between a client's list and its watch shows at its next relist. Not a replay.
 * - `labelSelector` and `fieldSelector` (`metadata.name`, `status.phase`) select among the
 *   stand-ins, list and watch alike (namespaceFilter).
 * - Ends at `timeoutSeconds`, after MAX_WATCH_TIMEOUT_SECONDS, or after `maxReads` reads (the
 *   route allows NAMESPACE_WATCH_MAX_CALLS informer calls a watch: a request's subrequests are
 *   bounded), cleanly; the client re-watches, as after a timeout.
 */
import { makeFilter } from "../cache/lister.ts";
import { withConcurrency } from "../concurrency.ts";
import { compareResourceVersions } from "../kube/resource-version.ts";
import type { KubeObject } from "../kube/types.ts";
import type { ObjectFormat } from "./accept.ts";
import type { ResourceInfo } from "./catalog.ts";
import { listBody } from "./answer.ts";
import { MAX_WATCH_TIMEOUT_SECONDS } from "./list-options.ts";
import { NAMESPACES, standInNamespace } from "./namespace-stand-in.ts";
import type { IncludeObject } from "./table.ts";
import { WatchFramer } from "./watch-events.ts";
import { parseSelectors } from "./watch-params.ts";

/** How often a namespaces watch reads the namespaces again: what a namespace's appearance may lag. */
export const NAMESPACE_WATCH_POLL_SECONDS = 10;
/**
 * Informer calls one read of the namespaces has in flight at most (one per served namespaced
 * resource; the cron and /metrics allow as many): a cluster serving hundreds of resources costs a
 * list request as many calls, never as many at once.
 */
export const NAMESPACE_READ_CONCURRENCY = 6;
/** Informer calls one namespaces watch makes at most (one per served namespaced resource a read). */
export const NAMESPACE_WATCH_MAX_CALLS = 500;
/** How often a namespaces watch sends a BOOKMARK, when asked for (the API server's is about a minute). */
export const NAMESPACE_BOOKMARK_SECONDS = 60;

/** The namespaces that hold objects, and the RV that read saw (namespace names in any order). */
export interface NamespaceRead {
  names: string[];
  resourceVersion: string;
}

/** One served namespaced resource's answer: its cache's namespaces and RV. */
export interface ResourceNamespaces {
  namespaces: string[];
  resourceVersion: string;
}

/**
 * The served resources as discovery shows them: with `namespaces` (get, list, watch) when some
 * namespaced resource is served and namespaces are not mirrored, so that `kubectl get ns` finds the
 * resource and pickers see they may list it.
 */
export function withSynthesizedNamespaces(infos: ResourceInfo[]): ResourceInfo[] {
  const mirrored = infos.some((info) => info.group === "" && info.plural === "namespaces");
  return mirrored || !infos.some((info) => info.namespaced) ? infos : [...infos, NAMESPACES];
}

/**
 * One read of the namespaces: each resource's `namespacesOf` (its cache's namespaces and RV; none
 * when its informer does not answer), NAMESPACE_READ_CONCURRENCY at a time, merged.
 */
export async function readNamespaces<R>(resources: readonly R[], namespacesOf: (resource: R) => Promise<ResourceNamespaces[]>): Promise<NamespaceRead> {
  const answers = await withConcurrency(
    resources.map((resource) => () => namespacesOf(resource)),
    NAMESPACE_READ_CONCURRENCY,
  );
  return mergeNamespaces(answers.flat());
}

/** The union of resources' namespaces, sorted, at the greatest of their RVs ("0" when none answered). */
export function mergeNamespaces(answers: readonly ResourceNamespaces[]): NamespaceRead {
  const names = new Set<string>();
  let resourceVersion = "0";
  for (const answer of answers) {
    for (const name of answer.namespaces) if (name !== "") names.add(name);
    if (answer.resourceVersion !== "" && compareResourceVersions(answer.resourceVersion, resourceVersion) > 0) resourceVersion = answer.resourceVersion;
  }
  return { names: [...names].sort(), resourceVersion };
}

/**
 * Which namespaces a list's or watch's selectors admit (`kubectl get ns x -w` watches with
 * `metadata.name=x`), tested on their stand-ins; undefined selects all. Throws SelectorError on a
 * malformed selector.
 */
export function namespaceFilter(labelSelector: string | undefined, fieldSelector: string | undefined): ((name: string) => boolean) | undefined {
  const filter = makeFilter(parseSelectors({ ...(labelSelector === undefined ? {} : { labelSelector }), ...(fieldSelector === undefined ? {} : { fieldSelector }) }));
  return filter && ((name) => filter(JSON.parse(standInNamespace(name)) as KubeObject));
}

/** The NamespaceList (or Table) of `read`. */
export function namespaceListBody(read: NamespaceRead, format: ObjectFormat, includeObject: IncludeObject, now: number): string {
  const items = read.names.map((name) => standInNamespace(name));
  return listBody({ info: NAMESPACES, format, includeObject, resourceVersion: read.resourceVersion, now, first: { items } }) as string;
}

export interface NamespaceWatchOptions {
  format: ObjectFormat;
  includeObject: IncludeObject;
  /** ADDED for every namespace first (RV unset or "0", or sendInitialEvents). */
  initialEvents: boolean;
  /** BOOKMARKs, the initial-events-end one included. */
  bookmarks: boolean;
  /** Absent or 0: MAX_WATCH_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /** Reads of the namespaces at most, the first included. */
  maxReads: number;
}

export interface NamespaceWatchDeps {
  read: () => Promise<NamespaceRead>;
  /** Resolves after `ms` (a test's clock moves at once). */
  sleep: (ms: number) => Promise<void>;
  now: () => number;
}

/** The watch's frames, one string per event, ending at its deadline. */
export async function* namespaceWatchFrames(options: NamespaceWatchOptions, deps: NamespaceWatchDeps): AsyncGenerator<string> {
  const framer = new WatchFramer(NAMESPACES, options.format, options.includeObject);
  const start = deps.now();
  const deadline = start + (options.timeoutSeconds || MAX_WATCH_TIMEOUT_SECONDS) * 1000;
  let read = await deps.read();
  let known = new Set(read.names);
  if (options.initialEvents) {
    for (const name of read.names) yield framer.frame("ADDED", standInNamespace(name, read.resourceVersion), deps.now());
    if (options.bookmarks) yield framer.bookmark(read.resourceVersion, true);
  }
  let lastBookmark = start;
  for (let reads = 1; reads < options.maxReads; reads++) {
    const wait = Math.min(NAMESPACE_WATCH_POLL_SECONDS * 1000, deadline - deps.now());
    if (wait <= 0) return;
    await deps.sleep(wait);
    if (deps.now() >= deadline) return;
    read = await deps.read();
    const now = deps.now();
    const current = new Set(read.names);
    for (const name of read.names) if (!known.has(name)) yield framer.frame("ADDED", standInNamespace(name, read.resourceVersion), now);
    for (const name of [...known].sort()) if (!current.has(name)) yield framer.frame("DELETED", standInNamespace(name, read.resourceVersion), now);
    known = current;
    if (options.bookmarks && now - lastBookmark >= NAMESPACE_BOOKMARK_SECONDS * 1000) {
      lastBookmark = now;
      yield framer.bookmark(read.resourceVersion);
    }
  }
}
