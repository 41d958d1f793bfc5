/**
 * Each isolate's registry snapshot (src/http/registry-snapshot.ts, review B6): the factory is asked
 * only for its registry's version, at most about once a second, and for the whole registry only when
 * that changed; a miss checks again once and is then answered from the snapshot for a while. Counted
 * in factory calls, on a fake clock and through the Worker's `/k8s` and guard routes.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../../src/env.ts";
import { createApp } from "../../src/http/app.ts";
import { CHECK_EVERY_MS, MISS_TTL_MS, RegistryCache, type RegistryAnswer, type RegistrySource } from "../../src/http/registry-snapshot.ts";
import { unique } from "../helpers/clusters.ts";

/** A factory whose registry changes when told to, counting what it was asked. */
function fakeFactory() {
  let version = 1;
  let clusters = ["default"];
  const calls = { checks: 0, loads: 0 };
  const source: RegistrySource = {
    async registry(since?: string): Promise<RegistryAnswer> {
      if (since === String(version)) {
        calls.checks++;
        return { version: since, unchanged: true };
      }
      calls.loads++;
      return { version: String(version), informers: [], clusters, placements: {}, rbacClusters: [] };
    },
  };
  const addCluster = (name: string) => {
    clusters = [...clusters, name];
    version++;
  };
  return { source, calls, addCluster };
}

function fakeClock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const hasCluster = (name: string) => (s: { clusters: string[] }) => s.clusters.includes(name) || undefined;

describe("RegistryCache", () => {
  it("loads the registry once, then only checks its version, at most once a second", async () => {
    const factory = fakeFactory();
    const clock = fakeClock();
    const cache = new RegistryCache(clock.now);
    const first = await cache.snapshot(factory.source);
    for (let i = 0; i < 50; i++) expect(await cache.snapshot(factory.source)).toBe(first);
    expect(factory.calls).toEqual({ checks: 0, loads: 1 });
    clock.advance(CHECK_EVERY_MS);
    expect(await cache.snapshot(factory.source)).toBe(first);
    expect(factory.calls).toEqual({ checks: 1, loads: 1 });
  });

  it("reloads the registry when its version changed", async () => {
    const factory = fakeFactory();
    const clock = fakeClock();
    const cache = new RegistryCache(clock.now);
    await cache.snapshot(factory.source);
    factory.addCluster("prod");
    expect((await cache.snapshot(factory.source)).clusters).toEqual(["default"]); // checked under a second ago
    clock.advance(CHECK_EVERY_MS);
    expect((await cache.snapshot(factory.source)).clusters).toEqual(["default", "prod"]);
    expect(factory.calls).toEqual({ checks: 0, loads: 2 });
  });

  it("checks again at once on a miss, then answers the same miss from the snapshot for MISS_TTL_MS", async () => {
    const factory = fakeFactory();
    const clock = fakeClock();
    const cache = new RegistryCache(clock.now);
    await cache.snapshot(factory.source);
    for (let i = 0; i < 20; i++) expect(await cache.lookup(factory.source, "cluster ghost", hasCluster("ghost"))).toBeUndefined();
    expect(factory.calls).toEqual({ checks: 1, loads: 1 });
    // A cluster added through another isolate is found by the first lookup of its name.
    factory.addCluster("new");
    expect(await cache.lookup(factory.source, "cluster new", hasCluster("new"))).toBe(true);
    expect(factory.calls).toEqual({ checks: 1, loads: 2 });
    clock.advance(MISS_TTL_MS);
    // The snapshot was due: the one check serves for the miss too.
    await cache.lookup(factory.source, "cluster ghost", hasCluster("ghost"));
    expect(factory.calls).toEqual({ checks: 2, loads: 2 });
  });

  it("checks again after this isolate changed the registry (invalidate), even within the second", async () => {
    const factory = fakeFactory();
    const cache = new RegistryCache(fakeClock().now);
    await cache.snapshot(factory.source);
    factory.addCluster("mine");
    cache.invalidate();
    expect((await cache.snapshot(factory.source)).clusters).toContain("mine");
  });
});

/** The Worker's env with a factory stub that counts its calls by method. */
function countingEnv() {
  const counts: Record<string, number> = {};
  const factory = {
    getByName(name: string) {
      const stub = env.FACTORY.getByName(name);
      return new Proxy(stub, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (typeof prop !== "string" || typeof value !== "function") return value;
          return (...args: unknown[]) => {
            counts[prop] = (counts[prop] ?? 0) + 1;
            return (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop]!(...args);
          };
        },
      });
    },
  };
  return { env: { ...env, FACTORY: factory } as unknown as Env, counts };
}

describe("the factory calls of /k8s and the route guards", () => {
  it("asks the factory about twice, not once per request, for repeated lookups of unknown resources, clusters and informers", async () => {
    const app = createApp();
    const { env: counted, counts } = countingEnv();
    const get = (path: string) => app.fetch(new Request(`http://localhost${path}`), counted);
    const ghost = unique("ghost");
    const paths = [`/k8s/apis/${ghost}.example.com/v1/widgets`, `/k8s/clusters/${ghost}/api/v1`, `/informers/${ghost}`, `/k8s/apis/${ghost}.example.com/v1`];
    for (let round = 0; round < 10; round++) {
      for (const path of paths) expect([path, (await get(path)).status]).toEqual([path, 404]);
    }
    // Each unknown name checks the version once; nothing else reaches the factory.
    const { syncDeclared: _, ...factoryCalls } = counts;
    expect(Object.keys(factoryCalls)).toEqual(["registry"]);
    expect(factoryCalls.registry).toBeLessThanOrEqual(paths.length + 2);
  });
});
