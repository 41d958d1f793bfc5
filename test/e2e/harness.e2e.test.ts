/**
 * The end-to-end harness itself: the Worker answers on its loopback port, its informers synced the
 * seeded cluster (read through the Worker's own query API, not /k8s), tokens are enforced, and the
 * reference side of every kubectl comparison (kubectl against the fake API server) works.
 */
import { describe, expect, it } from "vitest";
import { e2e, fakeCluster, workerJson } from "./context.ts";
import { DEPLOYMENTS, PODS } from "./fixtures.ts";
import { KUBECTL_MISSING, kubectlJson, kubectlSuite } from "./kubectl.ts";
import { versions, withoutManagedFields, type KubeList, type KubeObject } from "./objects.ts";
import { waitFor } from "./wait.ts";

async function cachedObjects(informer: string): Promise<KubeObject[]> {
  const items: KubeObject[] = [];
  let token: string | undefined;
  do {
    const query = new URLSearchParams({ limit: "1000" });
    if (token) query.set("continue", token);
    const page = await workerJson<{ items: KubeObject[]; continue?: string }>(`/informers/${informer}/objects?${query}`);
    items.push(...page.items);
    token = page.continue;
  } while (token);
  return items;
}

describe("e2e harness", () => {
  it("serves the Worker on loopback", async () => {
    const response = await fetch(`${e2e().workerUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(e2e().workerUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("syncs the pods and deployments informers", async () => {
    for (const name of Object.values(e2e().informers)) {
      const status = await workerJson<{ synced: boolean; lastError: string | null }>(`/informers/${name}`);
      expect(status, name).toMatchObject({ synced: true, lastError: null });
    }
  });

  it("mirrors the cluster: same keys, resourceVersions and objects minus managedFields", async () => {
    const cluster = fakeCluster();
    for (const [informer, resource] of [
      [e2e().informers.pods, "pods"],
      [e2e().informers.deployments, "deployments"],
    ] as const) {
      // Churn tests may have run just before: give the cache a moment to catch up.
      let expected: KubeObject[] = [];
      let cached: KubeObject[] = [];
      await waitFor(
        async () => {
          expected = (await cluster.state(resource)).items as KubeObject[];
          cached = await cachedObjects(informer);
          return JSON.stringify(versions(cached)) === JSON.stringify(versions(expected));
        },
        { timeoutMs: 20_000, what: `the ${resource} cache to match the cluster` },
      ).catch(() => undefined);
      expect(versions(cached), resource).toEqual(versions(expected));
      const byKey = new Map(expected.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, withoutManagedFields(o)]));
      for (const object of cached) {
        expect(object.metadata.managedFields, "dropped by default").toBeUndefined();
        // The cache stores items with kind/apiVersion set (a list's items have none).
        const { apiVersion: _apiVersion, kind: _kind, ...rest } = object;
        expect(rest).toEqual(byKey.get(`${object.metadata.namespace}/${object.metadata.name}`));
      }
    }
    const fixturePods = (await cluster.state("pods")).items.filter((o) => o.metadata.labels?.churn === undefined);
    expect(fixturePods.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(PODS.map((p) => `${p.namespace}/${p.name}`).sort());
    expect((await cluster.state("deployments")).items).toHaveLength(DEPLOYMENTS.length);
  });

  it("refuses reads without the read token", async () => {
    const response = await fetch(`${e2e().workerUrl}/informers/pods/objects`);
    expect(response.status).toBe(401);
  });
});

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("e2e harness: kubectl against the fake API server"), () => {
  it("lists the pods, as every comparison's reference side", async () => {
    const list = await kubectlJson<KubeList>(["get", "pods", "-A", "-o", "json"], { config: "fake" });
    expect(versions(list.items)).toEqual(versions((await fakeCluster().state("pods")).items as KubeObject[]));
  });
});
