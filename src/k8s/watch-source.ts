/**
 * What the watch hub (watch-hub.ts) reads of an informer, and what a watch asks of it: the
 * contract between the hub and the informer object that serves it (informer-watch-source.ts), or
 * a watch relay serving it from another object (watch-relay.ts): the methods may answer at once
 * or by a promise, and the hub awaits either. Types only.
 */
import type { LogBounds, ReadResult } from "../cache/event-log.ts";
import type { VersionedPage, VersionedQuery } from "../cache/versioned-list.ts";
import type { FieldSelector, LabelSelector } from "../kube/selectors.ts";
import type { ObjectFormat } from "./accept.ts";
import type { ResourceInfo } from "./catalog.ts";
import type { IncludeObject } from "./table.ts";
import type { Refusal } from "./watcher-caps.ts";

/** A value now (the informer's own object) or later (a relay asks the informer's object). */
export type Awaitable<T> = T | Promise<T>;

/** A page of a watch's initial listing; `resourceVersion`: the RV of the state a first page lists. */
export type ListedPage = VersionedPage & { resourceVersion?: string };

/** What the hub needs of the informer (read at each use: the informer object may reconfigure). */
export interface WatchSource {
  /** The log's incarnation (EventLog.incarnation): positions and buffered events belong to one. */
  incarnation: string;
  /** Events after `after`: at most `limit`, and about `maxBytes` of bodies (EventLog.read). */
  read(after: number, limit: number, maxBytes?: number): Awaitable<ReadResult>;
  bounds(): LogBounds;
  /** The RV the cache is complete up to. */
  cacheResourceVersion(): string;
  /**
   * A page of one consistent list (versioned-list.ts); a first page (no `from`) also says the
   * resourceVersion of the state it lists, read with it: a relay's snapshot may be older (review N2).
   */
  listAt(query: VersionedQuery, from?: { at: number; after: string }): Awaitable<ListedPage>;
  positionOf(resourceVersion: string): Awaitable<{ after: number; skipUpTo?: string } | "expired">;
  /** Whether `resourceVersion` was handed out by the API server the cluster moved away from (Informer.fromEarlierServer). */
  fromEarlierServer(resourceVersion: string): Awaitable<boolean>;
  /** The end of the whole transaction runs after `after` (Informer.boundaryAfter). */
  boundaryAfter(after: number, span: number): Awaitable<number | undefined>;
  /** A page of the events of (after, end] in resourceVersion order (EventLog.readInOrder). */
  readInOrder(after: number, end: number, skip: number, limit: number): Awaitable<ReadResult>;
}

/**
 * A watch's initial listing as it was admitted (k8s/admission.ts): its pages, each read in the
 * listing's turn of the informer's heavy-read admission, and its end (the turn is given back).
 */
export interface AdmittedListing {
  listAt(query: VersionedQuery, from?: { at: number; after: string }): Promise<ListedPage>;
  end(): void;
}

export interface WatchRequest {
  info: ResourceInfo;
  format: ObjectFormat;
  includeObject: IncludeObject;
  namespace?: string;
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  /** Absent, "" or "0": any start. Otherwise the changes after it, or initial events at least as new. */
  resourceVersion?: string;
  /** Start with ADDED for every object (a watch-list), then the changes. */
  initialEvents: boolean;
  bookmarks: boolean;
  timeoutSeconds?: number;
  /** The credential's name (Principal.name): its watchers are capped together. */
  principal?: string;
}

/** What `tryOpen` answers: the stream, or why no watch was opened. */
export type WatchOpened = { stream: ReadableStream<Uint8Array> } | Refusal;
