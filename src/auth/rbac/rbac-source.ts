/**
 * One cluster's RbacAuthorizer (rbac-authorizer.ts), built from its four RBAC informers
 * (objects/factory-rbac-informers.ts) and kept per isolate; what auth/rbac/read-authorization.ts
 * asks on every read of an `rbac` cluster.
 *
 * Contract:
 * - Built from each informer's objects at one log position, read in pages (InformerObject.searchAt:
 *   MAX_LIST_LIMIT objects or MAX_RBAC_PAGE_BYTES of bodies a page; the pages of one read are one
 *   snapshot, or the read starts over once). An informer holding more than
 *   MAX_RBAC_OBJECTS_PER_INFORMER objects or MAX_RBAC_BYTES_PER_INFORMER of bodies, not synced, or
 *   absent fails the build (RbacUnavailable): a partial set of bindings would deny what the cluster
 *   allows, or — once a Role is missing and its binding then resolves later — decide on objects of
 *   no one moment. The caller fails closed.
 * - Only what decisions read is kept of each object (names, rules, subjects, roleRef: `project`),
 *   never its annotations or managed fields.
 * - Kept per cluster and reused while the informers' resourceVersions stand: at most every
 *   CHECK_EVERY_MS a caller asks the four for their resourceVersion (a one-object read each) and
 *   rebuilds when one moved. A change upstream shows within about CHECK_EVERY_MS after the
 *   informers have it.
 * - Single flight without sharing a promise across requests (as http/registry-snapshot.ts, review
 *   B4): while one caller checks or rebuilds, others use the authorizer held. A cluster with none
 *   yet is built by one caller; the others wait for it (polling, up to BUILD_WAIT_MS) and build
 *   their own only if it did not come. A failed check keeps the held one for the next caller.
 * - Bounded per isolate: at most MAX_CACHED_CLUSTERS clusters and MAX_HELD_RBAC_BYTES of object
 *   bodies read for them (the kept projections are smaller); past either the least recently used
 *   cluster is dropped (the one just built is always kept).
 */
import type { Env } from "../../env.ts";
import type { Placement } from "../../clusters/placement.ts";
import { informerStub } from "../../clusters/stubs.ts";
import { MAX_LIST_LIMIT } from "../../cache/lister.ts";
import type { Position as VersionedPagePosition } from "../../cache/versioned-list.ts";
import { RBAC_INFORMERS, type RbacInformerName } from "./rbac-informers.ts";
import { RbacAuthorizer } from "./rbac-authorizer.ts";
import type { RbacBinding, RbacObjects, RbacRole } from "./rbac-objects.ts";

/** How often a caller asks whether a cluster's RBAC objects moved. */
export const CHECK_EVERY_MS = 1_000;
/** Bytes of object bodies one page (one RPC answer) of an RBAC informer carries at most. */
export const MAX_RBAC_PAGE_BYTES = 4 * 1024 * 1024;
/** Objects read from one RBAC informer at most: 10 teams × 2,000 namespaces of RoleBindings fit. */
export const MAX_RBAC_OBJECTS_PER_INFORMER = 50_000;
/** Bytes of object bodies read from one RBAC informer at most (the kept projections are smaller). */
export const MAX_RBAC_BYTES_PER_INFORMER = 16 * 1024 * 1024;
/** Clusters whose authorizer an isolate holds at once. */
export const MAX_CACHED_CLUSTERS = 8;
/** Bytes of RBAC object bodies read for the clusters an isolate holds (of its 128 MB). */
export const MAX_HELD_RBAC_BYTES = 24 * 1024 * 1024;
/** How long a caller waits for another's first build of a cluster before building its own. */
export const BUILD_WAIT_MS = 5_000;
const BUILD_POLL_MS = 20;

const INFORMER_NAMES = Object.keys(RBAC_INFORMERS) as RbacInformerName[];

/** The cluster's RBAC objects cannot be read whole now: no decision can be made from them. */
export class RbacUnavailable extends Error {
  override name = "RbacUnavailable";
}

/** What the source reads of one RBAC informer (tests give their own). */
export interface RbacInformerReader {
  /** The informer's cache resourceVersion: a cheap call. */
  version(name: RbacInformerName): Promise<string>;
  /** Every object it holds, at one resourceVersion, and the bytes of their bodies. */
  objects(name: RbacInformerName): Promise<{ resourceVersion: string; items: unknown[]; bytes: number }>;
}

/** Reads a cluster's RBAC informers through their Durable Objects, `pageLimit` objects a page at most. */
export function informerReader(env: Pick<Env, "INFORMER">, cluster: string, placement?: Placement, pageLimit = MAX_LIST_LIMIT): RbacInformerReader {
  const read = async (name: RbacInformerName, limit: number, maxBytes: number, from?: VersionedPagePosition) => {
    const answer = await informerStub(env, { cluster, name }, placement).searchAt({ limit, maxBytes }, from);
    if (!answer.ok) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}': ${answer.error.message}`);
    const { value, synced, resourceVersion } = answer.value;
    if (!synced) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}' is not synced`);
    if (value.expired) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}': its list expired`);
    return { resourceVersion, value };
  };
  /** Every object, paged at one log position; undefined when a page came from another (the log moved past it). */
  const readAll = async (name: RbacInformerName) => {
    const first = await read(name, pageLimit, MAX_RBAC_PAGE_BYTES);
    let page = first.value;
    const items: unknown[] = [];
    let bytes = 0;
    for (;;) {
      for (const item of page.items) {
        bytes += item.length;
        items.push(project(JSON.parse(item)));
      }
      if (items.length > MAX_RBAC_OBJECTS_PER_INFORMER || bytes > MAX_RBAC_BYTES_PER_INFORMER) {
        throw new RbacUnavailable(
          `RBAC informer '${name}' of cluster '${cluster}' holds more than ${MAX_RBAC_OBJECTS_PER_INFORMER} objects or ${MAX_RBAC_BYTES_PER_INFORMER} bytes`,
        );
      }
      if (page.next === undefined) return { resourceVersion: first.resourceVersion, items, bytes };
      const next = (await read(name, pageLimit, MAX_RBAC_PAGE_BYTES, page.next)).value;
      if (next.at !== first.value.at) return undefined;
      page = next;
    }
  };
  return {
    version: async (name) => (await read(name, 1, 1)).resourceVersion,
    objects: async (name) => {
      const all = (await readAll(name)) ?? (await readAll(name));
      if (!all) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}' changed faster than it could be read whole`);
      return all;
    },
  };
}

/** What decisions read of an RBAC object; the rest (annotations, managed fields, status) is dropped. */
function project(object: Record<string, unknown>): unknown {
  const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
  return {
    metadata: { name: metadata.name, ...(metadata.namespace === undefined ? {} : { namespace: metadata.namespace }) },
    ...(object.rules === undefined ? {} : { rules: object.rules }),
    ...(object.subjects === undefined ? {} : { subjects: object.subjects }),
    ...(object.roleRef === undefined ? {} : { roleRef: object.roleRef }),
  };
}

interface Held {
  authorizer: RbacAuthorizer;
  /** Each informer's resourceVersion the authorizer was built at. */
  versions: string[];
  /** Bytes of the bodies it was built from. */
  bytes: number;
  checkedAt: number;
  /** When a check began that has not ended; a timestamp, never a promise. */
  checkingSince?: number;
}

export interface RbacSourceClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const systemClock: RbacSourceClock = { now: Date.now, sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

export class RbacSource {
  readonly #clock: RbacSourceClock;
  /** By cluster, least recently used first. */
  readonly #held = new Map<string, Held>();
  /** Clusters whose first build is under way, and since when. */
  readonly #building = new Map<string, number>();

  constructor(clock: RbacSourceClock | (() => number) = systemClock) {
    this.#clock = typeof clock === "function" ? { ...systemClock, now: clock } : clock;
  }

  /**
   * `cluster`'s authorizer, at most about `checkEveryMs` behind its informers (CHECK_EVERY_MS unless a
   * caller that asks often, an open watch, bounds its own subrequests with a longer one); RbacUnavailable
   * when it cannot be built.
   */
  async authorizer(cluster: string, reader: RbacInformerReader, checkEveryMs = CHECK_EVERY_MS): Promise<RbacAuthorizer> {
    const now = this.#clock.now();
    const held = this.#held.get(cluster) ?? (this.#building.has(cluster) ? await this.#builtByAnother(cluster) : undefined);
    if (held) {
      this.#keep(cluster, held);
      if (now - held.checkedAt < checkEveryMs) return held.authorizer;
      if (held.checkingSince !== undefined && now - held.checkingSince < CHECK_EVERY_MS) return held.authorizer;
      held.checkingSince = now;
      try {
        const versions = await Promise.all(INFORMER_NAMES.map((name) => reader.version(name)));
        if (versions.every((version, i) => version === held.versions[i])) {
          held.checkedAt = now;
          return held.authorizer;
        }
        return await this.#build(cluster, reader, now);
      } finally {
        held.checkingSince = undefined;
      }
    }
    this.#building.set(cluster, now);
    try {
      return await this.#build(cluster, reader, now);
    } finally {
      this.#building.delete(cluster);
    }
  }

  async #build(cluster: string, reader: RbacInformerReader, now: number): Promise<RbacAuthorizer> {
    const built = await build(reader);
    this.#keep(cluster, { ...built, checkedAt: now });
    return built.authorizer;
  }

  /** Bytes of RBAC bodies the held authorizers were built from (what MAX_HELD_RBAC_BYTES bounds). */
  heldBytes(): number {
    let bytes = 0;
    for (const held of this.#held.values()) bytes += held.bytes;
    return bytes;
  }

  /** Forgets every cluster (tests; a cluster switched back to `scopes` is simply never asked). */
  clear(): void {
    this.#held.clear();
    this.#building.clear();
  }

  /** The held authorizer another caller's first build of `cluster` brings, if it comes within BUILD_WAIT_MS. */
  async #builtByAnother(cluster: string): Promise<Held | undefined> {
    const since = this.#building.get(cluster);
    if (since === undefined) return undefined;
    while (this.#clock.now() - since < BUILD_WAIT_MS && this.#building.get(cluster) === since) {
      await this.#clock.sleep(BUILD_POLL_MS);
      const held = this.#held.get(cluster);
      if (held) return held;
    }
    return this.#held.get(cluster);
  }

  #keep(cluster: string, held: Held): void {
    this.#held.delete(cluster);
    this.#held.set(cluster, held);
    let bytes = this.heldBytes();
    for (const [name, other] of this.#held) {
      if (name === cluster || (this.#held.size <= MAX_CACHED_CLUSTERS && bytes <= MAX_HELD_RBAC_BYTES)) break;
      this.#held.delete(name);
      bytes -= other.bytes;
    }
  }
}

async function build(reader: RbacInformerReader): Promise<{ authorizer: RbacAuthorizer; versions: string[]; bytes: number }> {
  const lists = await Promise.all(INFORMER_NAMES.map((name) => reader.objects(name)));
  const items = (name: RbacInformerName) => lists[INFORMER_NAMES.indexOf(name)]!.items;
  const objects: RbacObjects = {
    roles: items("rbac-roles") as RbacRole[],
    roleBindings: items("rbac-rolebindings") as RbacBinding[],
    clusterRoles: items("rbac-clusterroles") as RbacRole[],
    clusterRoleBindings: items("rbac-clusterrolebindings") as RbacBinding[],
  };
  return {
    authorizer: new RbacAuthorizer(objects),
    versions: lists.map((list) => list.resourceVersion),
    bytes: lists.reduce((sum, list) => sum + list.bytes, 0),
  };
}

/** This isolate's authorizers, one per cluster. */
export const rbacSource = new RbacSource();
