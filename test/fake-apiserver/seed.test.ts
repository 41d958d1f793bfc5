/** The demo cluster `npm start` runs: seeded once, then light churn that the README promises for pods and deployments. */
import { describe, expect, it } from "vitest";
import { Prng } from "./prng.ts";
import { resourceByName } from "./resources.ts";
import { demoChurnStep, seedDemo } from "./seed.ts";
import { Store } from "./store.ts";
import type { FakeObject } from "./types.ts";

const snapshot = (store: Store, name: string) => {
  const table = store.table(resourceByName(name)!);
  return new Map(
    table
      .sortedKeys()
      .map((key) => [key, table.current(key)] as const)
      .filter((entry): entry is readonly [string, FakeObject] => entry[1] !== undefined),
  );
};

describe("demo churn", () => {
  it("changes pods and deployments alike, and keeps the demo recognisable", () => {
    const store = new Store();
    seedDemo(store);
    const podsBefore = snapshot(store, "pods");
    const deploymentsBefore = snapshot(store, "deployments");
    const rng = new Prng(1);
    for (let step = 1; step <= 60; step++) demoChurnStep(store, rng, step);
    const podsAfter = snapshot(store, "pods");
    const deploymentsAfter = snapshot(store, "deployments");

    const changed = (before: Map<string, FakeObject>, after: Map<string, FakeObject>) =>
      [...before].filter(([key, obj]) => after.get(key)?.metadata.resourceVersion !== obj.metadata.resourceVersion).length;
    expect(changed(podsBefore, podsAfter)).toBeGreaterThan(0);
    expect(changed(deploymentsBefore, deploymentsAfter)).toBeGreaterThan(0);
    // Deployments come and go never, and keep their spec; seeded pods stay with their labels.
    expect([...deploymentsAfter.keys()]).toEqual([...deploymentsBefore.keys()]);
    for (const [key, deployment] of deploymentsAfter) {
      expect(deployment.spec).toEqual(deploymentsBefore.get(key)!.spec);
      const { replicas } = deployment.spec as { replicas: number };
      const { readyReplicas, availableReplicas } = deployment.status as { readyReplicas: number; availableReplicas: number };
      expect([replicas - 1, replicas]).toContain(readyReplicas);
      expect(availableReplicas).toBe(readyReplicas);
    }
    for (const [key, pod] of podsBefore) expect(podsAfter.get(key)?.metadata.labels).toEqual(pod.metadata.labels);
    expect([...podsAfter.values()].filter((p) => p.metadata.labels?.churn === "true").length).toBeLessThanOrEqual(4);
  });
});
