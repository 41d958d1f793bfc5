/**
 * RbacSource (src/auth/rbac/rbac-source.ts): one build per change of the informers'
 * resourceVersions, checked at most every CHECK_EVERY_MS (a fake clock and counted reads), a
 * failed build refused (RbacUnavailable), at most MAX_CACHED_CLUSTERS clusters and
 * MAX_HELD_RBAC_BYTES held, and one first build however many callers come at once.
 */
import { describe, expect, it } from "vitest";
import { CHECK_EVERY_MS, MAX_CACHED_CLUSTERS, MAX_HELD_RBAC_BYTES, RbacSource, type RbacInformerReader, RbacUnavailable } from "../../src/auth/rbac/rbac-source.ts";
import type { RbacInformerName } from "../../src/auth/rbac/rbac-informers.ts";

const alice = { name: "alice", groups: ["system:authenticated"] };
const readPods = { verb: "list", apiGroup: "", resource: "pods", namespace: "team-a" };

/** A reader over objects held in memory, counting its calls. */
function memoryReader(bytesPerList = 0) {
  const objects: Record<RbacInformerName, unknown[]> = { "rbac-roles": [], "rbac-rolebindings": [], "rbac-clusterroles": [], "rbac-clusterrolebindings": [] };
  const versions: Record<RbacInformerName, number> = { "rbac-roles": 1, "rbac-rolebindings": 1, "rbac-clusterroles": 1, "rbac-clusterrolebindings": 1 };
  const calls = { version: 0, objects: 0 };
  let failing: string | undefined;
  const reader: RbacInformerReader = {
    version: async (name) => (calls.version++, String(versions[name])),
    objects: async (name) => {
      calls.objects++;
      if (failing) throw new RbacUnavailable(failing);
      await Promise.resolve(); // an RPC answers later: concurrent callers overlap
      return { resourceVersion: String(versions[name]), items: objects[name], bytes: bytesPerList };
    },
  };
  const add = (name: RbacInformerName, object: unknown) => (objects[name].push(object), versions[name]++);
  return { reader, calls, add, fail: (why: string | undefined) => (failing = why) };
}

const podReader = { metadata: { name: "pod-reader", namespace: "team-a" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }] };
const aliceBinding = {
  metadata: { name: "alice-reads", namespace: "team-a" },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
  subjects: [{ kind: "User", name: "alice" }],
};

describe("RbacSource", () => {
  it("builds once, checks versions at most every CHECK_EVERY_MS, and rebuilds when one moved", async () => {
    let now = 1_000;
    const source = new RbacSource(() => now);
    const memory = memoryReader();
    memory.add("rbac-roles", podReader);
    expect((await source.authorizer("c", memory.reader)).authorize(alice, readPods).allowed).toBe(false);
    expect(memory.calls).toEqual({ version: 0, objects: 4 });

    memory.add("rbac-rolebindings", aliceBinding);
    // Within CHECK_EVERY_MS: the held authorizer, no call.
    now += CHECK_EVERY_MS - 1;
    expect((await source.authorizer("c", memory.reader)).authorize(alice, readPods).allowed).toBe(false);
    expect(memory.calls).toEqual({ version: 0, objects: 4 });
    // Past it: four version reads, a rebuild, the binding in force.
    now += 1;
    expect((await source.authorizer("c", memory.reader)).authorize(alice, readPods)).toMatchObject({ allowed: true });
    expect(memory.calls).toEqual({ version: 4, objects: 8 });
    // Unchanged: versions only.
    now += CHECK_EVERY_MS;
    await source.authorizer("c", memory.reader);
    expect(memory.calls).toEqual({ version: 8, objects: 8 });
  });

  it("refuses while the objects cannot be read whole, and keeps nothing from a failed build", async () => {
    const source = new RbacSource(() => 0);
    const memory = memoryReader();
    memory.fail("RBAC informer 'rbac-roles' of cluster 'c' is not synced");
    await expect(source.authorizer("c", memory.reader)).rejects.toThrow(RbacUnavailable);
    memory.fail(undefined);
    await expect(source.authorizer("c", memory.reader)).resolves.toBeDefined();
  });

  it("holds at most MAX_CACHED_CLUSTERS clusters, dropping the least recently used", async () => {
    const source = new RbacSource(() => 0);
    const memory = memoryReader();
    for (let i = 0; i <= MAX_CACHED_CLUSTERS; i++) await source.authorizer(`c${i}`, memory.reader);
    expect(memory.calls.objects).toBe(4 * (MAX_CACHED_CLUSTERS + 1));
    await source.authorizer(`c${MAX_CACHED_CLUSTERS}`, memory.reader); // held
    expect(memory.calls.objects).toBe(4 * (MAX_CACHED_CLUSTERS + 1));
    await source.authorizer("c0", memory.reader); // dropped: built again
    expect(memory.calls.objects).toBe(4 * (MAX_CACHED_CLUSTERS + 2));
  });

  it("holds at most MAX_HELD_RBAC_BYTES of bodies, dropping the least recently used cluster (never the one just built)", async () => {
    const source = new RbacSource(() => 0);
    const perCluster = Math.floor(MAX_HELD_RBAC_BYTES / 3); // four lists of a quarter each
    const memory = memoryReader(Math.floor(perCluster / 4));
    for (const cluster of ["a", "b", "c"]) await source.authorizer(cluster, memory.reader);
    expect(source.heldBytes()).toBeLessThanOrEqual(MAX_HELD_RBAC_BYTES);
    expect(memory.calls.objects).toBe(12);
    await source.authorizer("d", memory.reader); // a is dropped to make room
    expect(source.heldBytes()).toBeLessThanOrEqual(MAX_HELD_RBAC_BYTES);
    await source.authorizer("b", memory.reader);
    expect(memory.calls.objects).toBe(16);
    await source.authorizer("a", memory.reader);
    expect(memory.calls.objects).toBe(20);
    // One cluster larger than the whole budget is still kept while it is the one asked.
    const huge = memoryReader(MAX_HELD_RBAC_BYTES);
    await source.authorizer("huge", huge.reader);
    await source.authorizer("huge", huge.reader);
    expect(huge.calls.objects).toBe(4);
  });

  it("builds a cluster once when many callers ask for it first at the same time", async () => {
    let now = 0;
    const source = new RbacSource({ now: () => now, sleep: async (ms) => void (now += ms) });
    const memory = memoryReader();
    const authorizers = await Promise.all(Array.from({ length: 10 }, () => source.authorizer("c", memory.reader)));
    expect(memory.calls.objects).toBe(4);
    expect(new Set(authorizers).size).toBe(1);
  });

  it("a waiting caller builds its own when the first build fails", async () => {
    let now = 0;
    const source = new RbacSource({ now: () => now, sleep: async (ms) => void (now += ms) });
    const memory = memoryReader();
    memory.fail("not synced");
    const outcomes = await Promise.allSettled([source.authorizer("c", memory.reader), source.authorizer("c", memory.reader)]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    expect(memory.calls.objects).toBe(8);
  });

  it("asks the informers no sooner than a caller's own checkEveryMs (an open watch bounds its subrequests)", async () => {
    let now = 0;
    const source = new RbacSource(() => now);
    const memory = memoryReader();
    await source.authorizer("c", memory.reader);
    now = 5_000; // past CHECK_EVERY_MS, within the watch's 10 s
    await source.authorizer("c", memory.reader, 10_000);
    expect(memory.calls.version).toBe(0);
    now = 10_000;
    await source.authorizer("c", memory.reader, 10_000);
    expect(memory.calls.version).toBe(4);
  });
});
