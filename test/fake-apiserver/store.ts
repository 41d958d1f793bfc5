/**
 * MVCC state of one fake cluster, modelled on etcd behind a kube-apiserver:
 * - one global revision counter; every create/update/delete takes the next revision and stamps it
 *   into `metadata.resourceVersion` (creates also set uid, creationTimestamp, generation);
 * - per-key version history, so a list can be served at any revision ≥ the compaction revision;
 * - a per-resource change log (with the previous state of each change) that watches replay from;
 * - compaction drops history and changes at or below a revision (reads below it must answer 410).
 * Stored objects are never mutated after they are stored (they are shared by history, the change
 * log and open watches), and carry no kind/apiVersion.
 */
import type { FakeObject } from "./types.ts";
import { RESOURCES, type ResourceDef } from "./resources.ts";
import { alreadyExists, badRequest, conflict, notFound, status, StatusError } from "./status.ts";

export type ChangeType = "ADDED" | "MODIFIED" | "DELETED";

export interface Change {
  rev: bigint;
  def: ResourceDef;
  type: ChangeType;
  key: string;
  /** New state; for DELETED the last state re-stamped with the deletion revision (as the watch cache does). */
  object: FakeObject;
  /** State before the change; undefined for ADDED. */
  previous: FakeObject | undefined;
}

interface Version {
  rev: bigint;
  /** null: deleted at `rev`. */
  obj: FakeObject | null;
}

export function objectKey(def: ResourceDef, namespace: string | undefined, name: string): string {
  return def.namespaced ? `${namespace}/${name}` : name;
}

/** First index in sorted `keys` whose key is ≥ `s`. */
export function lowerBound(keys: readonly string[], s: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < s) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** History and change log of one resource type. */
export class ResourceTable {
  readonly def: ResourceDef;
  private readonly history = new Map<string, Version[]>();
  private readonly live = new Map<string, FakeObject>();
  /** Every key that has history (including deleted ones until compaction); sorted lazily. */
  private keys: string[] = [];
  private sorted = true;
  /** In revision order. */
  private changes: Change[] = [];
  /** "rev/namespace" → keys live at that revision, sorted. Valid until compaction: history at or below
   * the current revision never changes. Makes each page of a long paginated list O(log n + limit). */
  private readonly snapshots = new Map<string, string[]>();

  constructor(def: ResourceDef) {
    this.def = def;
  }

  get liveCount(): number {
    return this.live.size;
  }

  current(key: string): FakeObject | undefined {
    return this.live.get(key);
  }

  /** State of `key` at `rev` (only meaningful for rev ≥ the compaction revision). */
  at(key: string, rev: bigint): FakeObject | undefined {
    const versions = this.history.get(key);
    if (!versions) return undefined;
    for (let i = versions.length - 1; i >= 0; i--) {
      const v = versions[i]!;
      if (v.rev <= rev) return v.obj ?? undefined;
    }
    return undefined;
  }

  /** Keys in etcd order (byte order of "namespace/name"). Do not mutate. */
  sortedKeys(): readonly string[] {
    if (!this.sorted) {
      this.keys.sort();
      this.sorted = true;
    }
    return this.keys;
  }

  /** Index range [lo, hi) of sortedKeys() holding one namespace (or everything), starting at `start`. */
  range(namespace: string | undefined, start?: string): [number, number] {
    const keys = this.sortedKeys();
    let lo = 0;
    let hi = keys.length;
    if (namespace !== undefined && this.def.namespaced) {
      // "/" < "0", so every "ns/…" key sorts in ["ns/", "ns0").
      lo = lowerBound(keys, `${namespace}/`);
      hi = lowerBound(keys, `${namespace}0`);
    }
    if (start !== undefined) lo = Math.max(lo, lowerBound(keys, start));
    return [lo, Math.max(lo, hi)];
  }

  /** Keys that exist at `rev` (in one namespace, or all), in key order. Do not mutate. */
  keysAt(rev: bigint, namespace?: string): readonly string[] {
    const id = `${rev}/${namespace ?? ""}`;
    let keys = this.snapshots.get(id);
    if (keys) {
      this.snapshots.delete(id); // re-insert: most recently used last
    } else {
      const all = this.sortedKeys();
      const [lo, hi] = this.range(namespace);
      keys = [];
      for (let i = lo; i < hi; i++) if (this.at(all[i]!, rev) !== undefined) keys.push(all[i]!);
      if (this.snapshots.size >= 16) this.snapshots.delete(this.snapshots.keys().next().value!);
    }
    this.snapshots.set(id, keys);
    return keys;
  }

  /** Current objects in key order. */
  currentItems(namespace?: string): FakeObject[] {
    const keys = this.sortedKeys();
    const [lo, hi] = this.range(namespace);
    const items: FakeObject[] = [];
    for (let i = lo; i < hi; i++) {
      const obj = this.live.get(keys[i]!);
      if (obj) items.push(obj);
    }
    return items;
  }

  /** Changes with revision > rev, in order. */
  changesAfter(rev: bigint): Change[] {
    let lo = 0;
    let hi = this.changes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.changes[mid]!.rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    return this.changes.slice(lo);
  }

  /** Records a change made at `change.rev`. */
  apply(change: Change): void {
    let versions = this.history.get(change.key);
    if (!versions) {
      versions = [];
      this.history.set(change.key, versions);
      const last = this.keys[this.keys.length - 1];
      if (last !== undefined && change.key < last) this.sorted = false;
      this.keys.push(change.key);
    }
    if (change.type === "DELETED") {
      versions.push({ rev: change.rev, obj: null });
      this.live.delete(change.key);
    } else {
      versions.push({ rev: change.rev, obj: change.object });
      this.live.set(change.key, change.object);
    }
    this.changes.push(change);
  }

  /** Forgets everything not needed to read at revisions ≥ rev. */
  compact(rev: bigint): void {
    this.snapshots.clear();
    let removedKeys = false;
    for (const [key, versions] of this.history) {
      let i = versions.length - 1;
      while (i >= 0 && versions[i]!.rev > rev) i--;
      if (i < 0) continue;
      // Keep the version visible at `rev`, unless it is a deletion (then the key did not exist at `rev`).
      const drop = versions[i]!.obj === null ? i + 1 : i;
      if (drop > 0) versions.splice(0, drop);
      if (versions.length === 0) {
        this.history.delete(key);
        removedKeys = true;
      }
    }
    if (removedKeys) this.keys = this.keys.filter((k) => this.history.has(k));
    const firstKept = this.changes.findIndex((c) => c.rev > rev);
    this.changes = firstKept === -1 ? [] : this.changes.slice(firstKept);
  }
}

const NAME_PATTERN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
/** RBAC objects' names are path segments, not DNS subdomains (ValidateRBACName): `system:discovery` is one. */
const RBAC_GROUP = "rbac.authorization.k8s.io";
function isPathSegmentName(name: string): boolean {
  return name !== "." && name !== ".." && !/[/%]/.test(name);
}
const SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

let stampSecond = -1;
let stampText = "";

/** RFC 3339 seconds, as metav1.Time; one shared string per second (cheap bulk creates). */
function timestamp(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== stampSecond) {
    stampSecond = second;
    stampText = new Date(second * 1000).toISOString().replace(".000Z", "Z");
  }
  return stampText;
}

/** JSON of everything but metadata and status: what a generation bump reacts to. */
function specOf(obj: FakeObject): string {
  const { metadata: _m, status: _s, kind: _k, apiVersion: _a, ...rest } = obj;
  return JSON.stringify(rest);
}

export class Store {
  revision: bigint;
  compactedRevision: bigint;
  private readonly tables = new Map<string, ResourceTable>();
  private readonly listeners = new Set<(change: Change) => void>();

  /** The cluster starts empty at `startRevision`; nothing before it can be read. */
  constructor(startRevision = 1n) {
    this.revision = startRevision;
    this.compactedRevision = startRevision;
    // By plural and group: two groups may use one plural (pods, pods.example.com).
    for (const def of RESOURCES) this.tables.set(`${def.name}.${def.group}`, new ResourceTable(def));
  }

  table(def: ResourceDef): ResourceTable {
    return this.tables.get(`${def.name}.${def.group}`)!;
  }

  /** Subscribes to every committed change; returns the unsubscribe function. */
  subscribe(listener: (change: Change) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  create(def: ResourceDef, input: FakeObject): Change {
    const { namespace, name } = this.identity(def, input, true);
    const table = this.table(def);
    const key = objectKey(def, namespace, name);
    if (table.current(key)) throw new StatusError(alreadyExists(def.name, def.group, name));
    const rev = this.revision + 1n;
    const object = stamp(input, { name, namespace, uid: crypto.randomUUID(), rev, generation: 1, created: timestamp() });
    return this.commit({ rev, def, type: "ADDED", key, object, previous: undefined });
  }

  /** Replaces an existing object; a non-empty metadata.resourceVersion must match (optimistic concurrency). */
  update(def: ResourceDef, input: FakeObject, checkVersion = true): Change {
    const { namespace, name } = this.identity(def, input, false);
    const table = this.table(def);
    const key = objectKey(def, namespace, name);
    const previous = table.current(key);
    if (!previous) throw new StatusError(notFound(def.name, def.group, name));
    const given = input.metadata.resourceVersion;
    if (checkVersion && given && given !== previous.metadata.resourceVersion) {
      throw new StatusError(conflict(def.name, def.group, name));
    }
    const rev = this.revision + 1n;
    const prevGeneration = typeof previous.metadata.generation === "number" ? previous.metadata.generation : 1;
    const object = stamp(input, {
      name,
      namespace,
      uid: previous.metadata.uid!,
      rev,
      generation: specOf(input) === specOf(previous) ? prevGeneration : prevGeneration + 1,
      created: previous.metadata.creationTimestamp!,
    });
    return this.commit({ rev, def, type: "MODIFIED", key, object, previous });
  }

  upsert(def: ResourceDef, input: FakeObject): Change {
    const { namespace, name } = this.identity(def, input, false);
    return this.table(def).current(objectKey(def, namespace, name)) ? this.update(def, input, false) : this.create(def, input);
  }

  delete(def: ResourceDef, input: { metadata: { name?: string; namespace?: string; resourceVersion?: string } }): Change {
    const { namespace, name } = this.identity(def, input as FakeObject, false);
    const table = this.table(def);
    const key = objectKey(def, namespace, name);
    const previous = table.current(key);
    if (!previous) throw new StatusError(notFound(def.name, def.group, name));
    const rev = this.revision + 1n;
    const object = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rev) } };
    return this.commit({ rev, def, type: "DELETED", key, object, previous });
  }

  /** Drops history at or below `rev` (default: the current revision). */
  compact(rev: bigint = this.revision): void {
    if (rev > this.revision) {
      throw new StatusError(badRequest(`cannot compact to revision ${rev}: the current revision is ${this.revision}`));
    }
    if (rev <= this.compactedRevision) return;
    for (const table of this.tables.values()) table.compact(rev);
    this.compactedRevision = rev;
  }

  private commit(change: Change): Change {
    this.revision = change.rev;
    this.table(change.def).apply(change);
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        console.error("fake-apiserver: watch listener failed", error);
      }
    }
    return change;
  }

  private identity(def: ResourceDef, input: FakeObject, allowGenerate: boolean): { namespace: string | undefined; name: string } {
    if (input === null || typeof input !== "object" || input.metadata === null || typeof input.metadata !== "object") {
      throw new StatusError(badRequest(`${def.kind}: the object needs a metadata object`));
    }
    let name = input.metadata.name;
    if (!name && allowGenerate && typeof input.metadata.generateName === "string") {
      name = input.metadata.generateName + randomSuffix();
    }
    if (typeof name !== "string" || name === "") {
      throw new StatusError(badRequest(`${def.kind}: metadata.name is required`));
    }
    if (name.length > 253 || !(def.group === RBAC_GROUP ? isPathSegmentName(name) : NAME_PATTERN.test(name))) {
      throw new StatusError(
        status(422, "Invalid", `${def.kind} "${name}" is invalid: metadata.name: Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`, {
          name,
          group: def.group || undefined,
          kind: def.kind,
          causes: [{ reason: "FieldValueInvalid", message: `Invalid value: "${name}"`, field: "metadata.name" }],
        }),
      );
    }
    if (!def.namespaced) return { namespace: undefined, name };
    const namespace = input.metadata.namespace || "default";
    if (!NAME_PATTERN.test(namespace)) throw new StatusError(badRequest(`${def.kind}: invalid namespace "${namespace}"`));
    return { namespace, name };
  }
}

function randomSuffix(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(5));
  return Array.from(bytes, (b) => SUFFIX_ALPHABET[b % SUFFIX_ALPHABET.length]).join("");
}

/** Builds the stored object: server-owned metadata first (apiserver order), then the caller's fields. */
function stamp(
  input: FakeObject,
  meta: { name: string; namespace: string | undefined; uid: string; rev: bigint; generation: number; created: string },
): FakeObject {
  const { kind: _kind, apiVersion: _apiVersion, metadata, ...rest } = input;
  const {
    name: _name,
    generateName,
    namespace: _namespace,
    uid: _uid,
    resourceVersion: _rv,
    generation: _generation,
    creationTimestamp: _created,
    ...metaRest
  } = metadata;
  const m: FakeObject["metadata"] = { name: meta.name };
  if (generateName) m.generateName = generateName;
  if (meta.namespace !== undefined) m.namespace = meta.namespace;
  m.uid = meta.uid;
  m.resourceVersion = String(meta.rev);
  m.generation = meta.generation;
  m.creationTimestamp = meta.created;
  Object.assign(m, metaRest);
  return { metadata: m, ...rest };
}
