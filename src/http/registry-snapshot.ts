/**
 * Each isolate's copy of the factory's registry (which clusters and informers exist), so routes
 * that must know them (`/k8s` discovery and resource lookup, `/search`, the cluster and informer
 * guards) do not each ask the one factory object (review B6).
 *
 * Contract:
 * - The factory versions its registry: every registry write bumps the version
 *   (InformerFactory.registry). An isolate keeps its snapshot and, at most every CHECK_EVERY_MS,
 *   asks only for the version — a small answer — reloading the snapshot when it changed. A snapshot
 *   is therefore at most about CHECK_EVERY_MS behind writes made through other isolates; writes made
 *   through this isolate `invalidate` it, so they show at once.
 * - A lookup that misses (an unknown cluster, informer or resource) checks the version again at
 *   once, since the name may be new; the same miss then answers from the snapshot for MISS_TTL_MS
 *   (negative caching), so clients retrying an unknown name do not reach the factory each time.
 * - No promise is shared across requests (review B4): a check in flight is a timestamp, and while
 *   one started under CHECK_EVERY_MS ago other requests use the snapshot they have.
 */
import type { Env } from "../env.ts";
import type { RegistryAnswer, RegistrySnapshot } from "../objects/informer-factory.ts";
import { factoryStub } from "../objects/factory-stub.ts";

// The factory defines the answer it gives; the routes' modules read these names from here.
export type { RegistryAnswer, RegistrySnapshot };

/** The one factory call this cache makes. */
export interface RegistrySource {
  registry(since?: string): Promise<RegistryAnswer>;
}

/** How often an isolate asks whether the registry changed. */
export const CHECK_EVERY_MS = 1_000;
/** How long a miss answers from the snapshot before it may check the version again. */
export const MISS_TTL_MS = 2_000;
/** Misses remembered at most; past it the memory starts over (a miss only saves one version check). */
const MAX_MISSES = 1_000;

export class RegistryCache {
  readonly #now: () => number;
  #snapshot: RegistrySnapshot | undefined;
  #checkedAt = 0;
  /** When a check began that has not ended; a timestamp, never a promise (see above). */
  #checkingSince: number | undefined;
  readonly #misses = new Map<string, number>();
  /** Bumped by invalidate(): a check that began before it must not count as a check after it. */
  #generation = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The registry, at most about CHECK_EVERY_MS old (`fresh`: checked now). */
  async snapshot(source: RegistrySource, fresh = false): Promise<RegistrySnapshot> {
    const now = this.#now();
    const current = this.#snapshot;
    if (current && !fresh) {
      if (now - this.#checkedAt < CHECK_EVERY_MS) return current;
      if (this.#checkingSince !== undefined && now - this.#checkingSince < CHECK_EVERY_MS) return current;
    }
    this.#checkingSince = now;
    const generation = this.#generation;
    try {
      const answer = await source.registry(current?.version);
      // A concurrent check may have stored another snapshot meanwhile; either is at most this old.
      const next = "unchanged" in answer ? (this.#snapshot ?? current)! : answer;
      if (next.version !== current?.version) this.#misses.clear();
      this.#snapshot = next;
      if (generation === this.#generation) this.#checkedAt = now;
      return next;
    } finally {
      this.#checkingSince = undefined;
    }
  }

  /**
   * What `find` finds in the snapshot. On a miss, the version is checked again and `find` retried,
   * unless `missKey` missed within MISS_TTL_MS; undefined when it is not there either.
   */
  async lookup<T>(source: RegistrySource, missKey: string, find: (snapshot: RegistrySnapshot) => T | undefined): Promise<T | undefined> {
    const checkedBefore = this.#checkedAt;
    const snapshot = await this.snapshot(source);
    const found = find(snapshot);
    if (found !== undefined || this.missedRecently(missKey)) return found;
    // Checked just now (the snapshot was due): no need to ask again.
    const again = this.#checkedAt !== checkedBefore ? undefined : find(await this.snapshot(source, true));
    if (again === undefined) this.recordMiss(missKey);
    return again;
  }

  /** Whether `missKey` missed within MISS_TTL_MS (for lookups that derive more from the snapshot than `lookup` can). */
  missedRecently(missKey: string): boolean {
    return (this.#misses.get(missKey) ?? 0) > this.#now();
  }

  recordMiss(missKey: string): void {
    if (this.#misses.size >= MAX_MISSES) this.#misses.clear();
    this.#misses.set(missKey, this.#now() + MISS_TTL_MS);
  }

  /** This isolate changed the registry: the next read checks the version. */
  invalidate(): void {
    this.#generation++;
    this.#checkedAt = 0;
    this.#checkingSince = undefined;
    this.#misses.clear();
  }
}

/** This isolate's cache, shared by every route. */
export const registryCache = new RegistryCache();

/** The factory, as the cache's source. */
export const registrySource = (env: Pick<Env, "FACTORY" | "FACTORY_JURISDICTION">): RegistrySource =>
  factoryStub(env);
