/**
 * The system under check, at the module level: an Informer over a Db, the WatchHub serving its
 * `/k8s` watches (watchSourceOf) and the CacheReads serving its lists, fed from the ClusterModel as
 * the reflector feeds it (watch chunks, bookmarks, relists). A kill -9 drops every in-memory module
 * and builds them anew over the same storage; only what was committed survives, and the informer
 * resumes its upstream watch from the lastSyncResourceVersion it stored (DESIGN invariant 1).
 */
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import type { Position } from "../../src/cache/versioned-list.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { attempt, unwrap } from "../../src/errors.ts";
import { ReadAdmission } from "../../src/k8s/admission.ts";
import { CacheReads } from "../../src/k8s/cache-reads.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { watchSourceOf } from "../../src/k8s/informer-watch-source.ts";
import { WatchHub, type WatchRequest } from "../../src/k8s/watch-hub.ts";
import { parseSelectors } from "../../src/k8s/watch-params.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { FakeClock } from "../helpers/fakes.ts";
import { type Wiring, wire } from "../helpers/relay-wiring.ts";
import { type Change, type ClusterModel, type Selector, SELECTED, watchEventOf } from "./cluster-model.ts";
import { KillableDb } from "./killable-db.ts";
import type { K8sEndpoint, Via } from "./watch-client.ts";

const pods = describeResource("pods", undefined)!;
const INFORMER = "check";
/** As src/http/k8s-reads.ts pages a list. */
const FIRST_PAGE_LIMIT = 500;

export class K8sSystem implements K8sEndpoint {
  readonly clock = new FakeClock();
  readonly watched: Change[] = [];
  informer!: Informer;
  hub!: WatchHub;
  reads!: CacheReads;
  /** A relist was cut by a kill before its commit: the reflector lists again before it watches. */
  needsRelist = false;
  /** Called as a kill starts: the connections to the dead incarnation break before it does anything more. */
  beforeKill: () => void = () => {};
  #db!: KillableDb;
  /** A watch relay (another object: it outlives the informer's kills), made when a watcher first asks for one. */
  #relay: Wiring | undefined;

  readonly storage: DurableObjectStorage;
  readonly cluster: ClusterModel;

  constructor(storage: DurableObjectStorage, cluster: ClusterModel) {
    this.storage = storage;
    this.cluster = cluster;
    this.#build();
  }

  #build(): void {
    this.#db = new KillableDb(this.storage);
    const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5 }, INFORMER);
    const admission = new ReadAdmission();
    let hub: WatchHub | undefined;
    const informer = new Informer(this.#db, informerSettings(spec), this.clock, () => 0.5, () => {
      hub?.notify();
      this.#relay?.informerHub.notify();
    });
    hub = new WatchHub(() => watchSourceOf(informer), { now: () => this.clock.now(), random: () => 0.5, admission });
    this.informer = informer;
    this.hub = hub;
    this.reads = new CacheReads((fn) => attempt(() => fn({ name: INFORMER }, informer)), admission);
  }

  /** kill -9: the incarnation's modules are gone mid-whatever; a new one starts from storage, as `tick` does. */
  async kill(): Promise<void> {
    this.beforeKill();
    this.#db.kill();
    this.#build();
    this.#relay?.restartInformer();
    await this.informer.processQueue();
  }

  now(): number {
    return this.clock.now();
  }

  /** The cluster's changes the informer's upstream watch has yet to send (after its stored RV). */
  pending(): Change[] {
    return this.cluster.changesAfter(Number(this.informer.lastSyncResourceVersion() || "0"));
  }

  /** The next `count` changes, as one watch chunk. */
  async ingest(count: number): Promise<void> {
    if (this.needsRelist) return this.relist(1);
    const chunk = this.pending().slice(0, count);
    if (chunk.length === 0) return;
    this.informer.applyWatch(chunk.map(watchEventOf), String(chunk.at(-1)!.rv));
    this.watched.push(...chunk);
    await this.informer.processQueue();
  }

  /** An upstream bookmark: the RV everything before the next unsent change (or the cluster's RV) is sent up to. */
  async bookmark(): Promise<void> {
    if (this.needsRelist) return;
    const next = this.pending()[0];
    const rv = next ? next.rv - 1 : this.cluster.rv;
    if (rv <= Number(this.informer.lastSyncResourceVersion() || "0")) return;
    this.informer.applyWatch([], String(rv));
    await this.informer.processQueue();
  }

  /** A 410 upstream, then a relist of the cluster as it is, in `pages`; `killAt` cuts it there. */
  async relist(pages: number, killAt?: "staged" | "committed"): Promise<void> {
    const objects = this.cluster.objects();
    const rv = String(this.cluster.rv);
    this.informer.beginList();
    const size = Math.max(1, Math.ceil(objects.length / pages));
    for (let i = 0; i < objects.length; i += size) this.informer.stage(objects.slice(i, i + size));
    if (killAt === "staged") {
      this.needsRelist = true;
      return this.kill();
    }
    this.informer.commitList(rv, { state: { kind: "watching" }, memory: initialMemory });
    this.needsRelist = false;
    if (killAt === "committed") return this.kill();
    await this.informer.processQueue();
  }

  /** A reconfiguration that keeps what is listed: the streams end, the informer relists. */
  async reconfigure(): Promise<void> {
    this.informer.restart();
    this.hub.closeAll();
    await this.relist(1);
  }

  /** The relay restarts (a deploy, an eviction): its streams end, its watchers come back to a new one. */
  restartRelay(): void {
    this.#relay?.stop();
    this.#relay = undefined;
  }

  /** The schedule is over: nothing of it may poll on into the next one's object (whose storage it cannot touch). */
  close(): void {
    this.restartRelay();
    this.hub.closeAll();
  }

  /** Watchers served by the relay follow the informer through its own polls (watch-relay.ts). */
  #relayWiring(): Wiring {
    this.#relay ??= wire(() => watchSourceOf(this.informer), new ReadAdmission(), { now: () => this.clock.now() });
    return this.#relay;
  }

  watch(options: { via: Via; selector: Selector; resourceVersion: string; initialEvents: boolean; timeoutSeconds: number }): ReadableStream<Uint8Array> {
    const open = options.via === "relay" ? (request: WatchRequest) => this.#relayWiring().open(request) : (request: WatchRequest) => this.hub.open(request);
    return open({
      info: pods,
      format: { kind: "json" },
      includeObject: "Object",
      bookmarks: true,
      initialEvents: options.initialEvents,
      resourceVersion: options.resourceVersion,
      timeoutSeconds: options.timeoutSeconds,
      ...(options.selector === "web" ? parseSelectors({ labelSelector: SELECTED }) : {}),
    });
  }

  /**
   * A `/k8s` list as src/http/k8s-reads.ts makes it: pages from the informer's CacheReads, heavy
   * when it has no limit or a selector; the list's RV is its first answer's, and so is every page's.
   */
  async list(selector: Selector, limit: number | undefined, between?: () => Promise<void>): Promise<{ resourceVersion: string; items: KubeObject[] }> {
    const query = selector === "web" ? { labelSelector: SELECTED } : {};
    const heavy = limit === undefined || selector === "web";
    const items: KubeObject[] = [];
    let resourceVersion: string | undefined;
    let from: Position | undefined;
    do {
      const part = from === undefined || limit !== undefined ? "first" : "next";
      const answer = unwrap(await this.reads.listAt({ ...query, limit: limit ?? FIRST_PAGE_LIMIT }, from, from ? INFORMER : undefined, heavy ? { part } : undefined));
      if (answer.value.expired) throw new Error("a list's position expired (the model keeps far fewer changes than MAX_CONTINUE_LAG)");
      resourceVersion ??= answer.resourceVersion;
      items.push(...answer.value.items.map((text) => JSON.parse(text) as KubeObject));
      from = answer.value.next;
      if (from) await between?.();
    } while (from);
    return { resourceVersion, items };
  }

  /** Relay watchers are told of changes by the relay's poll: the poll's wait ends at the informer hub's notify. */
  notify(): void {
    this.hub.notify();
    this.#relay?.informerHub.notify();
    this.#relay?.relayHub.notify();
  }

  /** Every cached object as key → RV. */
  cached(): Map<string, number> {
    return new Map(this.informer.indexer.list({ limit: 10_000 }).map((o) => [o.key, Number((JSON.parse(o.body) as KubeObject).metadata.resourceVersion)]));
  }
}
