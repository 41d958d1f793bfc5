/**
 * WATCH as the apiserver's watch cache serves it (reference §1.4-§1.6):
 * - HTTP 200, chunked, one `{"type","object"}` JSON line per event, objects WITH kind/apiVersion;
 * - RV N: every change with revision > N in revision order, then live changes; N below the
 *   compaction revision: ONE ERROR event (410 "too old resource version: N (C)") and end;
 * - RV ""/"0" (defaulted to a watch-list while the WatchList gate is on) or sendInitialEvents=true:
 *   synthetic ADDED per current object in key order, then (with allowWatchBookmarks) the
 *   `k8s.io/initial-events-end` BOOKMARK at the snapshot RV, then changes after it;
 * - selectors turn transitions into ADDED / DELETED (old content, new RV); DELETED carries the deletion RV;
 * - BOOKMARK every `bookmarkIntervalMs` and `bookmarkBeforeTimeoutMs` before the timeout;
 * - `timeoutSeconds` ends the body cleanly (default 1800 s).
 * Events are written synchronously from store commits, so a stream never misses or reorders a change.
 */
import type { ServerResponse } from "node:http";
import type { Cluster, OpenWatch } from "./cluster.ts";
import type { StreamFault } from "./faults.ts";
import { sendStatus, sleep } from "./http.ts";
import { noteFault, type KubeRequest } from "./kube-request.ts";
import { matchesSelectors } from "./list.ts";
import type { ListOptions } from "./list-options.ts";
import { apiVersionOf, withTypeMeta, type ResourceDef } from "./resources.ts";
import { asPartialObjectMetadata, type MetadataOnly, metadataOnly } from "./metadata-only.ts";
import { statusForCode, tooLargeResourceVersion, watchTooOld, type KubeStatus } from "./status.ts";
import type { Change } from "./store.ts";
import { requestedTable, tableOf, type TableFormat } from "./table.ts";
import type { FakeObject } from "./types.ts";

const DEFAULT_TIMEOUT_SECONDS = 1800;
const INITIAL_EVENTS_END = "k8s.io/initial-events-end";
const LIST_BLUEPRINT = "kubernetes.io/initial-events-list-blueprint";

export async function serveWatch(ctx: KubeRequest, o: ListOptions): Promise<void> {
  const { cluster, def, res, record } = ctx;
  const delay = cluster.faults.takeDelay(def.name, "watch");
  if (delay) noteFault(record, "delay");
  const injected = cluster.faults.takeStatus(def.name, "watch");
  if (injected) noteFault(record, "status");
  const streamFault = injected ? undefined : cluster.faults.takeStream(def.name);
  if (streamFault) noteFault(record, streamFault.kind);
  if (delay) await sleep(delay.ms);
  if (res.destroyed) return;
  if (injected) {
    const watchWording = injected.code === 410 && !injected.message ? { message: "The resourceVersion for the provided watch is too old." } : {};
    sendStatus(res, statusForCode(injected.code, { ...injected, ...watchWording }));
    return;
  }
  // A watch-list request never gets a Table (the API server's watchListEndpointRestrictions).
  const tableFormat = o.sendInitialEvents ? undefined : requestedTable(ctx.req, ctx.params, def);
  new WatchStream(cluster, def, ctx.namespace, o, res, streamFault, tableFormat, metadataOnly(ctx.req)).start();
}

type EventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

class WatchStream implements OpenWatch {
  private readonly cluster: Cluster;
  private readonly def: ResourceDef;
  private readonly namespace: string | undefined;
  private readonly o: ListOptions;
  private readonly res: ServerResponse;
  private readonly fault: StreamFault | undefined;
  /** Each event's object as PartialObjectMetadata, bookmarks included (a metadata-only Accept). */
  private readonly metadataOnly: MetadataOnly | undefined;
  private faultDone = false;
  /** Event lines written so far (what the fault counters count). */
  private written = 0;
  private ended = false;
  /** Changes at or below this revision are never sent (start RV, or the initial snapshot). */
  private after = 0n;
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private unsubscribe: (() => void) | undefined;
  private readonly tableFormat: TableFormat | undefined;
  /** Only the first Table event carries columnDefinitions. */
  private tableColumnsSent = false;

  constructor(
    cluster: Cluster,
    def: ResourceDef,
    namespace: string | undefined,
    o: ListOptions,
    res: ServerResponse,
    fault: StreamFault | undefined,
    tableFormat: TableFormat | undefined,
    metadataOnly: MetadataOnly | undefined,
  ) {
    this.tableFormat = tableFormat;
    this.metadataOnly = metadataOnly;
    this.cluster = cluster;
    this.def = def;
    this.namespace = namespace;
    this.o = o;
    this.res = res;
    this.fault = fault;
  }

  start(): void {
    const { res, o, cluster } = this;
    const store = cluster.store;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private" });
    res.flushHeaders();
    cluster.watches.add(this);
    res.on("close", () => this.cleanup());
    this.afterEvent(); // faults set to act after 0 events
    if (this.ended) return;

    const rv = o.resourceVersion;
    if (o.sendInitialEvents === true) {
      if (rv !== "" && rv !== "0" && BigInt(rv) > store.revision) {
        // A watch-list waits for its cache to reach N, then fails with an ERROR event (reference §1.6.4).
        this.fail(tooLargeResourceVersion(rv, store.revision));
        return;
      }
      this.sendInitialState();
      if (this.ended) return;
      if (o.allowWatchBookmarks) this.bookmark(true);
    } else if (rv === "" || rv === "0") {
      // sendInitialEvents=false starts "now"; an undefaulted legacy watch (WatchList gate off) gets the state first.
      if (o.sendInitialEvents === undefined) this.sendInitialState();
      this.after = store.revision;
    } else {
      const from = BigInt(rv);
      if (from < store.compactedRevision) {
        this.fail(watchTooOld(from, store.compactedRevision));
        return;
      }
      this.after = from;
      for (const change of store.table(this.def).changesAfter(from)) {
        this.onChange(change);
        if (this.ended) return;
      }
    }
    if (this.ended) return;
    this.unsubscribe = store.subscribe((change) => {
      if (change.def === this.def) this.onChange(change);
    });

    const timeoutMs = (o.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    this.timers.push(setTimeout(() => this.end(), timeoutMs));
    if (o.allowWatchBookmarks) {
      const { bookmarkIntervalMs, bookmarkBeforeTimeoutMs } = cluster.settings;
      if (bookmarkIntervalMs > 0) this.timers.push(setInterval(() => this.bookmark(false), bookmarkIntervalMs));
      const preTimeout = timeoutMs - bookmarkBeforeTimeoutMs;
      if (bookmarkBeforeTimeoutMs > 0 && preTimeout > 0) this.timers.push(setTimeout(() => this.bookmark(false), preTimeout));
    }
  }

  /** Ends the body cleanly (timeout, close-watches, closeAfter fault, shutdown). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.cleanup();
    if (!this.res.destroyed) this.res.end();
  }

  private cleanup(): void {
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.length = 0;
    this.cluster.watches.delete(this);
  }

  private sendInitialState(): void {
    const store = this.cluster.store;
    for (const obj of store.table(this.def).currentItems(this.namespace)) {
      if (!matchesSelectors(this.o, obj)) continue;
      this.send("ADDED", obj);
      if (this.ended) return;
    }
    this.after = store.revision;
  }

  private onChange(change: Change): void {
    if (this.ended || change.rev <= this.after) return;
    const ns = change.object.metadata.namespace;
    if (this.namespace !== undefined && this.def.namespaced && ns !== this.namespace) return;
    const o = this.o;
    if (o.everything) {
      this.send(change.type, change.object);
      return;
    }
    // cache_watcher.go convertToWatchEvent: selector transitions become ADDED / DELETED.
    const now = change.type === "DELETED" ? false : matchesSelectors(o, change.object);
    const before = change.previous !== undefined && matchesSelectors(o, change.previous);
    if (change.type === "DELETED") {
      if (before) this.send("DELETED", change.object);
    } else if (now && before) {
      this.send("MODIFIED", change.object);
    } else if (now) {
      this.send("ADDED", change.object);
    } else if (before) {
      const previous = change.previous!;
      this.send("DELETED", { ...previous, metadata: { ...previous.metadata, resourceVersion: String(change.rev) } });
    }
  }

  private bookmark(initialEventsEnd: boolean): void {
    const store = this.cluster.store;
    const rv = store.revision > this.after ? store.revision : this.after;
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (initialEventsEnd) metadata.annotations = { [INITIAL_EVENTS_END]: "true", [LIST_BLUEPRINT]: this.listBlueprint() };
    this.writeEvent("BOOKMARK", { kind: this.def.kind, apiVersion: apiVersionOf(this.def), metadata });
  }

  /**
   * kube-apiserver 1.32 (response.go watchListTransformer; removed again in 1.34) puts an empty list
   * of the answer's type, base64 of its encoding, on the initial-events-end bookmark.
   */
  private listBlueprint(): string {
    const list = this.metadataOnly
      ? { kind: "PartialObjectMetadataList", apiVersion: this.metadataOnly.apiVersion, metadata: {}, items: [] }
      : { kind: `${this.def.kind}List`, apiVersion: apiVersionOf(this.def), metadata: {}, items: [] };
    return Buffer.from(JSON.stringify(list)).toString("base64");
  }

  private send(type: EventType, obj: FakeObject): void {
    const typed = withTypeMeta(this.def, obj);
    if (!this.tableFormat) {
      this.writeEvent(type, typed);
      return;
    }
    const withColumns = !this.tableColumnsSent;
    this.tableColumnsSent = true;
    this.writeEvent(type, tableOf(this.tableFormat, [{ typed, obj }], { resourceVersion: obj.metadata.resourceVersion }, withColumns));
  }

  /** One ERROR event, then the end of the stream. */
  private fail(s: KubeStatus): void {
    if (this.ended) return;
    this.res.write(`${JSON.stringify({ type: "ERROR", object: s })}\n`);
    this.end();
  }

  private writeEvent(type: EventType, object: object): void {
    if (this.ended || this.res.destroyed) return;
    const sent = this.metadataOnly ? asPartialObjectMetadata(this.metadataOnly, object as { metadata: object }) : object;
    const line = `${JSON.stringify({ type, object: sent })}\n`;
    const f = this.fault;
    if (f?.kind === "dropStream" && !this.faultDone && this.written === f.afterEvents) {
      this.faultDone = true;
      this.cleanup();
      const socket = this.res.socket;
      // Half an event, then the connection dies without the terminating chunk.
      this.res.write(line.slice(0, Math.max(1, Math.floor(line.length / 2))), () => socket?.destroy());
      setTimeout(() => socket?.destroy(), 50);
      return;
    }
    this.res.write(line);
    this.written++;
    this.afterEvent();
  }

  /** Applies a stream fault whose event count has been reached. */
  private afterEvent(): void {
    const f = this.fault;
    if (!f || this.faultDone) return;
    switch (f.kind) {
      case "closeAfter":
        if (this.written >= f.events) {
          this.faultDone = true;
          this.end();
        }
        break;
      case "malformedLine":
        if (this.written === f.afterEvents) {
          this.faultDone = true;
          this.res.write('{"type":"MODIFIED","object":{"kind": this is not JSON\n');
        }
        break;
      case "errorEvent":
        if (this.written === f.afterEvents) {
          this.faultDone = true;
          const store = this.cluster.store;
          const requested = this.o.resourceVersion === "" || this.o.resourceVersion === "0" ? this.after : this.o.resourceVersion;
          let s: KubeStatus;
          if (f.code === 410 && !f.reason && !f.message) s = watchTooOld(requested, store.revision);
          else if (f.code === 504 && !f.reason && !f.message) s = tooLargeResourceVersion(requested, store.revision);
          else s = statusForCode(f.code, f);
          this.fail(s);
        }
        break;
      case "dropStream":
        break;
    }
  }
}
