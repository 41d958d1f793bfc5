/**
 * One resource of an API server in simulated time (SimulatedClock), served as the watch cache
 * serves it (reference §1.4, §1.5):
 * - the cluster's revision moves on once a second (other resources' writes); a change of this
 *   resource is scheduled at a time and takes that second's revision;
 * - a list answers the resource as it is, at the current revision;
 * - a watch from RV N sends every change after N at once, then each as it happens, a BOOKMARK at
 *   the revision every minute and 2 s before its timeout, and ends at its timeout. An N older than
 *   the watch cache's history (75 s) gets one ERROR 410 instead.
 * It records every list and every watch with when it was open, so a test can tell how much of the
 * time the informer held a watch.
 */
import type { ListerWatcher, ListPage, ListRequest, WatchRequest, WatchStream } from "../../src/kube/client.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import type { SimulatedClock } from "./simulated-clock.ts";
import { pod } from "./fakes.ts";

const FIRST_REVISION = 1_000;
/** kube-apiserver's watch cache aims at 75 s of history (kubernetes-api-server-facts.md). */
export const HISTORY_MS = 75_000;
const BOOKMARK_INTERVAL_MS = 60_000;
const BOOKMARK_BEFORE_TIMEOUT_MS = 2_000;

export interface SimulatedWatch {
  resourceVersion: string;
  timeoutSeconds: number;
  openedAt: number;
  /** When it ended or was cancelled; absent while open. */
  closedAt?: number;
}

interface Change {
  at: number;
  rv: number;
  object: KubeObject;
}

export class SimulatedApiServer implements ListerWatcher {
  readonly lists: ListRequest[] = [];
  readonly watches: SimulatedWatch[] = [];
  readonly #clock: SimulatedClock;
  readonly #start: number;
  readonly #initial: KubeObject[];
  #changes: Change[] = [];

  constructor(clock: SimulatedClock, options: { objects?: number } = {}) {
    this.#clock = clock;
    this.#start = clock.now();
    this.#initial = Array.from({ length: options.objects ?? 10 }, (_, i) => pod({ name: `pod-${i}`, rv: String(FIRST_REVISION) }));
  }

  /** The cluster's revision at `at`. */
  revisionAt(at: number): number {
    return FIRST_REVISION + Math.floor((at - this.#start) / 1000);
  }

  /** Schedules an update of pod `name` at `at` (its second's revision); answers its resourceVersion. */
  change(at: number, name: string): string {
    const rv = this.revisionAt(at);
    this.#changes = [...this.#changes, { at, rv, object: pod({ name, rv: String(rv) }) }].sort((a, b) => a.at - b.at);
    return String(rv);
  }

  async listPage(request: ListRequest, onItems: (items: KubeObject[]) => void): Promise<ListPage> {
    this.lists.push(request);
    const now = this.#clock.now();
    const current = new Map(this.#initial.map((o) => [o.metadata.name, o]));
    for (const change of this.#changes) if (change.at <= now) current.set(change.object.metadata.name, change.object);
    onItems([...current.values()]);
    return { resourceVersion: String(this.revisionAt(now)), items: current.size };
  }

  async watch(request: WatchRequest): Promise<WatchStream> {
    const clock = this.#clock;
    const opened = clock.now();
    const record: SimulatedWatch = { resourceVersion: request.resourceVersion, timeoutSeconds: request.timeoutSeconds, openedAt: opened };
    this.watches.push(record);
    const { items, end } = this.#timeline(Number(request.resourceVersion), opened, opened + request.timeoutSeconds * 1000);
    let cancelTimer = () => {};
    return {
      next: () =>
        new Promise((resolve) => {
          const item = items.shift();
          const deliver = () => {
            if (item === undefined) record.closedAt = clock.now();
            resolve(item?.events ?? null);
          };
          const at = item?.at ?? end;
          if (at <= clock.now()) deliver();
          else cancelTimer = clock.setTimer(at - clock.now(), deliver);
        }),
      cancel: () => {
        cancelTimer();
        record.closedAt ??= clock.now();
      },
    };
  }

  /** What a watch from `from` opened at `opened` sends, and when, until `end`. */
  #timeline(from: number, opened: number, end: number): { items: { at: number; events: WatchEvent[] }[]; end: number } {
    const oldest = this.revisionAt(opened - HISTORY_MS);
    if (from < oldest) {
      const status = { kind: "Status", code: 410, reason: "Expired", message: `too old resource version: ${from} (${oldest})` };
      return { items: [{ at: opened, events: [{ type: "ERROR", object: status as unknown as KubeObject }] }], end: opened };
    }
    const modified = (change: Change): WatchEvent => ({ type: "MODIFIED", object: change.object });
    const bookmark = (at: number) => ({ at, events: [{ type: "BOOKMARK", object: { kind: "Pod", metadata: { resourceVersion: String(this.revisionAt(at)) } } } as WatchEvent] });
    const backlog = this.#changes.filter((c) => c.rv > from && c.at <= opened);
    const items = [
      ...(backlog.length > 0 ? [{ at: opened, events: backlog.map(modified) }] : []),
      ...this.#changes.filter((c) => c.at > opened && c.at < end).map((c) => ({ at: c.at, events: [modified(c)] })),
    ];
    for (let at = opened + BOOKMARK_INTERVAL_MS; at < end - BOOKMARK_BEFORE_TIMEOUT_MS; at += BOOKMARK_INTERVAL_MS) items.push(bookmark(at));
    if (end - BOOKMARK_BEFORE_TIMEOUT_MS > opened) items.push(bookmark(end - BOOKMARK_BEFORE_TIMEOUT_MS));
    return { items: items.sort((a, b) => a.at - b.at), end };
  }

  /** Milliseconds of [from, to) during which a watch was open. */
  watchOpenMs(from: number, to: number): number {
    return this.watches.reduce((sum, w) => sum + Math.max(0, Math.min(w.closedAt ?? to, to) - Math.max(w.openedAt, from)), 0);
  }
}
