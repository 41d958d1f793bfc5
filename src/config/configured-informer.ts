/**
 * Whether an informer's object is configured, and if so its spec row (spec-store.ts), its list of
 * subscriptions (delivery/subscriber-list.ts) and an Informer over its stored spec: the state every
 * RPC of InformerObject starts from.
 *
 * Guarantees:
 * - An object that was never configured, or was deleted, has no tables and creates none (#7.17):
 *   `migrate(false)` only brings existing tables up to date, `migrate(true)` (the first configure)
 *   creates them. Until then `stored()` is undefined and `withInformer` answers NotFound, naming
 *   the informer (#10: the isolate's registry may still hold a name deleted since).
 * - The Informer is kept in memory between calls (subscriptions read the log once per delivery
 *   each) and made anew after any change of the spec (`put`), of the schema (`migrate`) or of the
 *   configuration (`forget`): only this object changes them, so the copy is never stale.
 */
import { type Informer, migrateInformer } from "../cache/informer.ts";
import { migrateResourceDescriptions } from "../cache/resource-description-store.ts";
import type { ClusterConnection } from "../clusters/cluster.ts";
import { SubscriberList } from "../delivery/subscriber-list.ts";
import { attempt, fail, type Result } from "../errors.ts";
import { type Db, hasSchema } from "../sql.ts";
import type { InformerSpec } from "./informer-spec.ts";
import { SpecStore, type StoredSpec } from "./spec-store.ts";

export class ConfiguredInformer {
  readonly #db: Db;
  /** The object's name, for NotFound; undefined for an object made from an id. */
  readonly #name: string | undefined;
  /** Makes an Informer over a spec (the object wires its storage, clock and watchers in). */
  readonly #informerOf: (spec: InformerSpec) => Informer;
  #specs!: SpecStore;
  #subscribers!: SubscriberList;
  /** Whether this object has its tables: set by the first configure(), cleared by destroy(). */
  #configured = false;
  /** The stored spec and an Informer over it, for queries and feed reads. */
  #current: { spec: InformerSpec; informer: Informer } | undefined;

  constructor(db: Db, name: string | undefined, informerOf: (spec: InformerSpec) => Informer) {
    this.#db = db;
    this.#name = name;
    this.#informerOf = informerOf;
  }

  get configured(): boolean {
    return this.#configured;
  }

  /** The spec row; only while configured. */
  get specs(): SpecStore {
    return this.#specs;
  }

  /** The subscriptions that follow the informer; only while configured. */
  get subscribers(): SubscriberList {
    return this.#subscribers;
  }

  /** The spec the Informer in memory was made from, if one is. */
  get current(): InformerSpec | undefined {
    return this.#current?.spec;
  }

  /**
   * Brings the schema up to date; creates it only when `create` (configure), so an unconfigured
   * object keeps no storage. Storage that has tables (configured, or from before lazy creation) is
   * migrated as it wakes.
   */
  migrate(create: boolean): void {
    this.#current = undefined;
    this.#configured = create || hasSchema(this.#db);
    if (!this.#configured) return;
    migrateInformer(this.#db);
    this.#specs = new SpecStore(this.#db);
    this.#subscribers = new SubscriberList(this.#db);
    migrateResourceDescriptions(this.#db);
  }

  /** Gone from here on (a deletion under way): nothing finds an informer, not even tables being deleted. */
  forget(): void {
    this.#current = undefined;
    this.#configured = false;
  }

  /** The stored spec; none while unconfigured (no tables to read). */
  stored(): StoredSpec | undefined {
    return this.#configured ? this.#specs.get() : undefined;
  }

  put(spec: InformerSpec, connection: ClusterConnection | null, now: number): void {
    this.#specs.put(spec, connection, now);
    this.#current = undefined;
  }

  /** Runs `fn` on the stored spec and its Informer, or answers NotFound; what `fn` throws becomes the error. */
  withInformer<T>(fn: (spec: InformerSpec, informer: Informer) => T): Result<T> {
    if (!this.#current) {
      const stored = this.stored();
      if (!stored) return fail("NotFound", this.#name === undefined ? "informer not found" : `informer '${this.#name}' not found`);
      this.#current = { spec: stored.spec, informer: this.#informerOf(stored.spec) };
    }
    const { spec, informer } = this.#current;
    return attempt(() => fn(spec, informer));
  }
}
