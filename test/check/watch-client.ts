/**
 * A `/k8s` client as a reflector is one: it lists (or watch-lists), watches from the list's RV with
 * bookmarks, applies what it gets in order, re-watches from its last RV when a stream ends, and
 * relists after an ERROR 410. Every frame it reads is checked against the cluster's history
 * (DESIGN invariant 9):
 * - events' RVs strictly increase on a stream and lie after its start; no bookmark is behind an
 *   event already sent;
 * - at every bookmark (the initial-events-end one included) the client's objects are exactly the
 *   cluster's at the bookmark's RV, as far as its selector selects: a bookmark says "you have
 *   everything up to here", so a missed, extra or stale object is a lost or a false event;
 * - every change the informer took from its upstream watch after the stream's start and up to a
 *   bookmark came on the stream (a change a relist folded into another is no change to send);
 * - a list's items are the cluster's at the list's RV.
 */
import { BOOKMARK_BEFORE_DEADLINE_MS, BOOKMARK_INTERVAL_MS } from "../../src/k8s/watch-hub.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type Change, type ClusterModel, keyOf, rvOf, type Selector, selects } from "./cluster-model.ts";
import { DEVIATIONS } from "./deviations.ts";
import { judgeList, same, show } from "./list-check.ts";

export interface Frame {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: KubeObject & { code?: number; message?: string };
}

/** What a client needs of the system: open a watch, list, and what the informer took from its watch. */
export interface K8sEndpoint {
  watch(options: { via: Via; selector: Selector; resourceVersion: string; initialEvents: boolean; timeoutSeconds: number }): ReadableStream<Uint8Array>;
  list(selector: Selector, limit: number | undefined): Promise<{ resourceVersion: string; items: KubeObject[] }>;
  /** Changes the informer applied from its upstream watch, one by one (not folded by a relist). */
  watched: readonly Change[];
  /** The system's (fake) time. */
  now(): number;
}

/** How many of its last standings a client keeps to rewind to. */
const SNAPSHOTS = 50;

/** Who serves its watches: the informer's own hub, or a watch relay (k8s/watch-relay.ts). */
export type Via = "informer" | "relay";

/** Where a client starts: a list then a watch from its RV, or a watch-list (initial events). */
export type Start = "list" | "watchList";

export class WatchClient {
  /** key → RV of the objects it holds, as a reflector's store. */
  readonly state = new Map<string, number>();
  lastRv = "";
  /** Bookmarks received, by RV: the client's proof of where it caught up to. */
  lastBookmarkRv = 0;
  /** Streams opened, lists made: for the report of a failing schedule. */
  readonly history: string[] = [];
  stopped = false;
  /** Frames handled, over all streams: the driver waits until no client handles any. */
  frames = 0;
  /** When its stream's last bookmark before the deadline is due, and a quiet minute's (the hub's schedule). */
  #deadlineBookmarkAt = 0;
  #lastFrameAt = 0;

  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  /** Where it stood after each event and bookmark it got (the newest SNAPSHOTS): a rewind goes back to one. */
  #standings: { rv: string; state: Map<string, number>; highest: number }[] = [];
  #streamStart = 0;
  #highestEvent = 0;
  #inInitialEvents = false;
  #seen = new Set<number>();
  #expired = false;
  #cut = false;
  #cutEnded = false;
  readonly name: string;
  readonly selector: Selector;
  readonly start: Start;
  readonly via: Via;
  readonly cluster: ClusterModel;
  /** The system now (a kill replaces its modules). */
  readonly endpoint: () => K8sEndpoint;
  /** Where what breaks a promise is written (shared by every client of a schedule). */
  readonly violations: string[];
  readonly #timeoutSeconds: number;

  constructor(options: { name: string; selector: Selector; start: Start; via: Via; cluster: ClusterModel; endpoint: () => K8sEndpoint; violations: string[]; timeoutSeconds: number }) {
    this.name = options.name;
    this.selector = options.selector;
    this.start = options.start;
    this.via = options.via;
    this.cluster = options.cluster;
    this.endpoint = options.endpoint;
    this.violations = options.violations;
    this.#timeoutSeconds = options.timeoutSeconds;
  }

  /** Lists (or watch-lists) and starts watching. */
  async begin(): Promise<void> {
    if (this.start === "list") {
      await this.#relist();
      this.#open(this.lastRv, false);
    } else {
      this.state.clear();
      this.#open("", true);
    }
  }

  /** The connection breaks (kill, cut): the client re-watches from its last RV once `reconnect` is called. */
  cut(): void {
    this.#cut = true;
    void this.#reader?.cancel().catch(() => {});
  }

  /**
   * The client goes back to where it stood at an RV its streams showed (`pick` chooses which), as a
   * controller restarted from a checkpoint does, and its connection breaks: it re-watches from that
   * RV, and must lose nothing and get nothing back in time.
   */
  rewind(pick: number): void {
    const standing = this.#standings[pick % Math.max(1, this.#standings.length)];
    if (standing === undefined) return;
    this.history.push(`rewound to ${standing.rv}`);
    this.state.clear();
    for (const [key, rv] of standing.state) this.state.set(key, rv);
    this.lastRv = standing.rv;
    this.#highestEvent = standing.highest;
    this.cut();
  }

  #stand(): void {
    this.#standings.push({ rv: this.lastRv, state: new Map(this.state), highest: this.#highestEvent });
    if (this.#standings.length > SNAPSHOTS) this.#standings.shift();
  }

  /** Its stream was cut and has ended: it waits for `reconnect`. */
  get cutPending(): boolean {
    return this.#cutEnded;
  }

  /** Re-watches from the last RV it got, or relists when that expired. */
  async reconnect(): Promise<void> {
    this.#cutEnded = false;
    if (this.stopped) return;
    if (this.#expired) {
      this.#expired = false;
      await this.#relist();
    }
    this.#open(this.lastRv, false);
  }

  #violate(what: string): void {
    this.violations.push(`${this.name} (${this.selector}, ${this.start}, via ${this.via}): ${what}`);
    this.stopped = true;
  }

  async #relist(): Promise<void> {
    const listed = await this.endpoint().list(this.selector, undefined);
    this.history.push(`list at ${listed.resourceVersion}`);
    this.state.clear();
    for (const object of listed.items) this.state.set(keyOf(object), rvOf(object));
    const verdict = judgeList(this.cluster, listed, this.selector);
    if ("wrong" in verdict) return this.#violate(verdict.wrong);
    this.lastRv = String(verdict.at);
    this.#highestEvent = verdict.at;
  }

  #open(resourceVersion: string, initialEvents: boolean): void {
    this.history.push(`watch from ${JSON.stringify(resourceVersion)}${initialEvents ? " with initial events" : ""}`);
    this.#streamStart = Number(resourceVersion);
    this.#inInitialEvents = initialEvents;
    this.#seen = new Set();
    this.#cut = false;
    this.#lastFrameAt = this.endpoint().now();
    this.#deadlineBookmarkAt = this.#lastFrameAt + this.#timeoutSeconds * 1000 - BOOKMARK_BEFORE_DEADLINE_MS;
    const stream = this.endpoint().watch({ via: this.via, selector: this.selector, resourceVersion, initialEvents, timeoutSeconds: this.#timeoutSeconds });
    void this.#pump(stream);
  }

  async #pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    this.#reader = reader;
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done || this.stopped) break;
      text += decoder.decode(chunk.value, { stream: true });
      for (let newline = text.indexOf("\n"); newline >= 0 && !this.stopped; newline = text.indexOf("\n")) {
        const line = text.slice(0, newline);
        text = text.slice(newline + 1);
        if (line !== "") this.#onFrame(JSON.parse(line) as Frame);
      }
    }
    if (this.#reader === reader) this.#reader = undefined;
    if (this.stopped) return void reader.cancel().catch(() => {});
    this.history.push(this.#cut ? "stream cut" : this.#expired ? "stream ended by 410" : "stream ended");
    // A stream the server ended: the client goes on at once; a cut one, when the driver says.
    if (this.#cut) this.#cutEnded = true;
    else await this.reconnect();
  }

  /** When the hub owes this client its next bookmark, at the latest (watch-hub.ts's schedule). */
  nextBookmarkDue(): number {
    return Math.min(this.#deadlineBookmarkAt, this.#lastFrameAt + BOOKMARK_INTERVAL_MS);
  }

  #onFrame(frame: Frame): void {
    this.frames++;
    this.#lastFrameAt = this.endpoint().now();
    const { type, object } = frame;
    if (type === "ERROR") {
      if (object.code === 410) this.#expired = true;
      else this.#violate(`ERROR ${object.code}: ${object.message}`);
      return;
    }
    const rv = rvOf(object);
    if (type === "BOOKMARK") return this.#onBookmark(rv, object.metadata.annotations?.["k8s.io/initial-events-end"] === "true");
    const key = keyOf(object);
    if (this.#inInitialEvents) {
      if (type !== "ADDED") return this.#violate(`${type} ${key}@${rv} among initial events`);
      this.state.set(key, rv);
      return;
    }
    const held = this.state.get(key);
    if (DEVIATIONS.inferredDeletesShareTheRelistRv && type === "DELETED" && (rv === this.#highestEvent || rv === this.#streamStart)) {
      if (held === undefined) return;
      this.state.delete(key);
      this.#seen.add(rv);
      return;
    }
    if (rv <= this.#highestEvent) return this.#violate(`${type} ${key}@${rv} after an event or list at ${this.#highestEvent} (RVs must increase)`);
    if (rv <= this.#streamStart) return this.#violate(`${type} ${key}@${rv} on a watch from ${this.#streamStart}`);
    if (type === "DELETED") {
      if (held === undefined) return this.#violate(`DELETED of ${key}@${rv}, which the client does not hold`);
      this.state.delete(key);
    } else {
      if (type === "ADDED" && held !== undefined) return this.#violate(`ADDED of ${key}@${rv}, which the client holds at ${held}`);
      if (type === "MODIFIED" && held === undefined) return this.#violate(`MODIFIED of ${key}@${rv}, which the client does not hold`);
      if (!selects(this.selector, object)) return this.#violate(`${type} ${key}@${rv} outside the selector`);
      this.state.set(key, rv);
    }
    this.#seen.add(rv);
    this.#highestEvent = Math.max(this.#highestEvent, rv);
    this.lastRv = String(rv); // as client-go's reflector: every event's RV
    this.#stand();
  }

  #onBookmark(rv: number, initialEventsEnd: boolean): void {
    if (initialEventsEnd) {
      if (!this.#inInitialEvents) return this.#violate(`initial-events-end at ${rv} on a watch without initial events`);
      this.#inInitialEvents = false;
      this.#streamStart = rv;
      this.#expectState(rv, "the initial-events-end bookmark");
    } else {
      if (this.#inInitialEvents) return this.#violate(`a bookmark at ${rv} among initial events`);
      if (rv < this.#highestEvent) return this.#violate(`a bookmark at ${rv} behind an event at ${this.#highestEvent}`);
      this.#expectState(rv, "a bookmark");
      this.#expectEveryChange(rv);
    }
    this.#highestEvent = Math.max(this.#highestEvent, rv);
    this.lastBookmarkRv = rv;
    this.lastRv = String(rv);
    this.#stand();
  }

  /** The client's objects are the cluster's at `rv` (what it selects). */
  #expectState(rv: number, what: string): void {
    const truth = this.cluster.stateAt(rv, this.selector);
    if (!same(truth, this.state)) this.#violate(`at ${what} (rv ${rv}): the client holds ${show(this.state)}, the cluster ${show(truth)}`);
  }

  /** Every change the informer watched in (stream start, rv] that the selector sees came on this stream. */
  #expectEveryChange(rv: number): void {
    const missing = this.endpoint()
      .watched.filter((c) => c.rv > this.#streamStart && c.rv <= rv && (selects(this.selector, c.object) || selects(this.selector, c.before)))
      .filter((c) => !this.#seen.has(c.rv));
    if (missing.length > 0) this.#violate(`stream from ${this.#streamStart} to a bookmark at ${rv} lacks ${missing.map((c) => `${c.type} ${c.key}@${c.rv}`).join(", ")}`);
  }
}
