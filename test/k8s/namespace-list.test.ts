/**
 * The synthesized namespaces list's read (k8s/namespace-list.ts readNamespaces): one informer call
 * per served namespaced resource, at most NAMESPACE_READ_CONCURRENCY in flight, whatever the number
 * of resources a cluster serves (a request's calls, not only their count, are bounded). Counted with
 * calls that answer only when the test lets them, no clock.
 */
import { describe, expect, it } from "vitest";
import { NAMESPACE_READ_CONCURRENCY, readNamespaces, type ResourceNamespaces } from "../../src/k8s/namespace-list.ts";

/** `count` resources whose calls wait until released, counting how many are in flight at most. */
function heldResources(count: number) {
  let inFlight = 0;
  let peak = 0;
  const waiting: (() => void)[] = [];
  const called: number[] = [];
  const namespacesOf = async (resource: number): Promise<ResourceNamespaces[]> => {
    called.push(resource);
    peak = Math.max(peak, ++inFlight);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight--;
    // Resource 3 has no answer (its informer did not answer): it is left out.
    return resource === 3 ? [] : [{ namespaces: [`ns-${resource % 7}`], resourceVersion: String(100 + resource) }];
  };
  /** Lets every waiting call answer, until none is left. */
  const releaseAll = async () => {
    while (called.length < count || waiting.length > 0) {
      waiting.splice(0).forEach((release) => release());
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  };
  return { resources: Array.from({ length: count }, (_, i) => i), namespacesOf, releaseAll, peak: () => peak, called };
}

describe("the synthesized namespaces list's read", () => {
  it("asks at most NAMESPACE_READ_CONCURRENCY informers at once, however many resources are served, and merges every answer", async () => {
    const served = heldResources(60);
    const read = readNamespaces(served.resources, served.namespacesOf);
    await served.releaseAll();
    const answer = await read;
    expect(NAMESPACE_READ_CONCURRENCY).toBeLessThan(60);
    expect(served.peak()).toBe(NAMESPACE_READ_CONCURRENCY);
    expect([...served.called].sort((a, b) => a - b)).toEqual(served.resources);
    expect(answer).toEqual({ names: ["ns-0", "ns-1", "ns-2", "ns-3", "ns-4", "ns-5", "ns-6"], resourceVersion: "159" });
  });

  it("with fewer resources than the limit, asks them all at once", async () => {
    const served = heldResources(2);
    const read = readNamespaces(served.resources, served.namespacesOf);
    await served.releaseAll();
    expect((await read).names).toEqual(["ns-0", "ns-1"]);
    expect(served.peak()).toBe(2);
  });
});
