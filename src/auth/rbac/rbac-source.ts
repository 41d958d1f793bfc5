/**
 * One cluster's RbacAuthorizer (rbac-authorizer.ts), built from its four RBAC informers
 * (objects/factory-rbac-informers.ts) and kept per isolate. Not wired into any route yet (issue 31).
 *
 * Contract:
 * - Built from one read per informer (InformerObject.searchAt: at most MAX_LIST_LIMIT objects and
 *   MAX_RBAC_BYTES_PER_INFORMER of bodies). An informer with more, not synced, or absent fails the
 *   build (RbacUnavailable): a partial set of bindings would deny what the cluster allows, or —
 *   once a Role is missing and its binding then resolves later — decide on objects of no one moment.
 *   The caller fails closed.
 * - Kept per cluster and reused while the informers' resourceVersions stand: at most every
 *   CHECK_EVERY_MS a caller asks the four for their resourceVersion (a one-object read each) and
 *   rebuilds when one moved. A change upstream shows within about CHECK_EVERY_MS after the
 *   informers have it.
 * - Single flight without sharing a promise across requests (as http/registry-snapshot.ts, review
 *   B4): while one caller checks or rebuilds, others use the authorizer held; only a cluster with
 *   none yet makes each caller build its own. A failed check keeps the held one for the next caller
 *   to check again.
 * - At most MAX_CACHED_CLUSTERS clusters are held; past it the least recently used is dropped.
 */
import type { Env } from "../../env.ts";
import type { Placement } from "../../clusters/placement.ts";
import { informerStub } from "../../clusters/stubs.ts";
import { MAX_LIST_LIMIT } from "../../cache/lister.ts";
import { RBAC_INFORMERS, type RbacInformerName } from "./rbac-informers.ts";
import { RbacAuthorizer } from "./rbac-authorizer.ts";
import type { RbacBinding, RbacObjects, RbacRole } from "./rbac-objects.ts";

/** How often a caller asks whether a cluster's RBAC objects moved. */
export const CHECK_EVERY_MS = 1_000;
/** Bytes of object bodies read from one RBAC informer at most (one RPC answer). */
export const MAX_RBAC_BYTES_PER_INFORMER = 4 * 1024 * 1024;
/** Clusters whose authorizer an isolate holds at once. */
export const MAX_CACHED_CLUSTERS = 8;

const INFORMER_NAMES = Object.keys(RBAC_INFORMERS) as RbacInformerName[];

/** The cluster's RBAC objects cannot be read whole now: no decision can be made from them. */
export class RbacUnavailable extends Error {
  override name = "RbacUnavailable";
}

/** What the source reads of one RBAC informer (tests give their own). */
export interface RbacInformerReader {
  /** The informer's cache resourceVersion: a cheap call. */
  version(name: RbacInformerName): Promise<string>;
  /** Every object it holds, at one resourceVersion. */
  objects(name: RbacInformerName): Promise<{ resourceVersion: string; items: unknown[] }>;
}

/** Reads a cluster's RBAC informers through their Durable Objects. */
export function informerReader(env: Pick<Env, "INFORMER">, cluster: string, placement?: Placement): RbacInformerReader {
  const read = async (name: RbacInformerName, limit: number, maxBytes: number) => {
    const answer = await informerStub(env, { cluster, name }, placement).searchAt({ limit, maxBytes });
    if (!answer.ok) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}': ${answer.error.message}`);
    const { value, synced, resourceVersion } = answer.value;
    if (!synced) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}' is not synced`);
    if (value.expired) throw new RbacUnavailable(`RBAC informer '${name}' of cluster '${cluster}': its list expired`);
    return { resourceVersion, value };
  };
  return {
    version: async (name) => (await read(name, 1, 1)).resourceVersion,
    objects: async (name) => {
      const { resourceVersion, value } = await read(name, MAX_LIST_LIMIT, MAX_RBAC_BYTES_PER_INFORMER);
      if (value.next !== undefined) {
        throw new RbacUnavailable(
          `RBAC informer '${name}' of cluster '${cluster}' holds more than ${MAX_LIST_LIMIT} objects or ${MAX_RBAC_BYTES_PER_INFORMER} bytes`,
        );
      }
      return { resourceVersion, items: value.items.map((item) => JSON.parse(item) as unknown) };
    },
  };
}

interface Held {
  authorizer: RbacAuthorizer;
  /** Each informer's resourceVersion the authorizer was built at. */
  versions: string[];
  checkedAt: number;
  /** When a check began that has not ended; a timestamp, never a promise. */
  checkingSince?: number;
}

export class RbacSource {
  readonly #now: () => number;
  /** By cluster, least recently used first. */
  readonly #held = new Map<string, Held>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** `cluster`'s authorizer, at most about CHECK_EVERY_MS behind its informers; RbacUnavailable when it cannot be built. */
  async authorizer(cluster: string, reader: RbacInformerReader): Promise<RbacAuthorizer> {
    const now = this.#now();
    const held = this.#held.get(cluster);
    if (held) {
      this.#touch(cluster, held);
      if (now - held.checkedAt < CHECK_EVERY_MS) return held.authorizer;
      if (held.checkingSince !== undefined && now - held.checkingSince < CHECK_EVERY_MS) return held.authorizer;
      held.checkingSince = now;
      try {
        const versions = await Promise.all(INFORMER_NAMES.map((name) => reader.version(name)));
        if (versions.every((version, i) => version === held.versions[i])) {
          held.checkedAt = now;
          return held.authorizer;
        }
      } finally {
        held.checkingSince = undefined;
      }
    }
    const built = await build(reader);
    this.#touch(cluster, { ...built, checkedAt: now });
    return built.authorizer;
  }

  /** Forgets every cluster (tests; a cluster switched back to `scopes` is simply never asked). */
  clear(): void {
    this.#held.clear();
  }

  #touch(cluster: string, held: Held): void {
    this.#held.delete(cluster);
    this.#held.set(cluster, held);
    if (this.#held.size > MAX_CACHED_CLUSTERS) this.#held.delete(this.#held.keys().next().value!);
  }
}

async function build(reader: RbacInformerReader): Promise<{ authorizer: RbacAuthorizer; versions: string[] }> {
  const lists = await Promise.all(INFORMER_NAMES.map((name) => reader.objects(name)));
  const items = (name: RbacInformerName) => lists[INFORMER_NAMES.indexOf(name)]!.items;
  const objects: RbacObjects = {
    roles: items("rbac-roles") as RbacRole[],
    roleBindings: items("rbac-rolebindings") as RbacBinding[],
    clusterRoles: items("rbac-clusterroles") as RbacRole[],
    clusterRoleBindings: items("rbac-clusterrolebindings") as RbacBinding[],
  };
  return { authorizer: new RbacAuthorizer(objects), versions: lists.map((list) => list.resourceVersion) };
}

/** This isolate's authorizers, one per cluster. */
export const rbacSource = new RbacSource();
