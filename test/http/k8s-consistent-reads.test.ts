/**
 * Consistent reads on `/k8s` (issue 30 item 5, review G8): a list or get with no resourceVersion is
 * the most recent data, as kube-apiserver 1.31+ serves it from its watch cache
 * (ConsistentListFromCache): it wakes an informer sleeping between watch windows (maxLagSeconds)
 * and waits until the cache reaches the upstream's current resourceVersion, read with one `limit=1`
 * list, which a burst of reads shares. An upstream that does not answer leaves the cache as it is.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { call, json, send, startInCluster } from "../helpers/clusters.ts";
import { waitFor } from "../helpers/informer.ts";
import { pod } from "../fake-apiserver/client.ts";

const k8s = (p: string) => exports.default.fetch(new Request(`http://localhost/k8s${p}`));

async function sleepingCluster(prefix: string) {
  const started = await startInCluster(prefix, {}, 2);
  const path = `/clusters/${started.cluster}/informers/pods`;
  expect((await send("PUT", path, { resource: "pods", watchTimeoutSeconds: 3, maxLagSeconds: 600 })).status).toBe(200);
  await waitFor("the informer to sleep", async () => (await json(await call(path))).watch?.state === "sleeping" || undefined);
  return started;
}

const upstreamCurrentLists = async (fake: Awaited<ReturnType<typeof startInCluster>>["fake"]) =>
  (await fake.requests()).filter((r) => r.verb === "list" && r.query.limit === "1" && r.query.resourceVersion === undefined).length;

describe("/k8s reads with no resourceVersion", () => {
  it("wake an informer asleep between watch windows and answer a change the upstream made meanwhile", async () => {
    const { cluster, fake, remove } = await sleepingCluster("consistent");
    await fake.create("pods", pod({ name: "made-while-asleep", namespace: "ns-0" }));
    const upstream = await fake.revision();
    const list = await k8s(`/clusters/${cluster}/api/v1/pods`);
    expect(list.status).toBe(200);
    const body = await json(list);
    expect(body.items.map((item: any) => item.metadata.name)).toContain("made-while-asleep");
    expect(BigInt(body.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(upstream));
    await fake.create("pods", pod({ name: "made-next", namespace: "ns-0" }));
    const got = await k8s(`/clusters/${cluster}/api/v1/namespaces/ns-0/pods/made-next`);
    expect(got.status).toBe(200);
    await remove();
  });

  it("share one upstream limit=1 list among a burst of reads", async () => {
    const { cluster, fake, remove } = await startInCluster("consistent-burst", {}, 2);
    await fake.clearRequests();
    const answers = await Promise.all(Array.from({ length: 8 }, () => k8s(`/clusters/${cluster}/api/v1/pods`)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    const asked = await upstreamCurrentLists(fake);
    expect(asked).toBeGreaterThanOrEqual(1);
    expect(asked).toBeLessThanOrEqual(2);
    await remove();
  });

  it("answer from the cache when the upstream cannot say its resourceVersion", async () => {
    const { cluster, fake, remove } = await startInCluster("consistent-down", {}, 2);
    await fake.fault({ kind: "status", resource: "pods", on: "list", code: 503, count: 50 });
    const list = await k8s(`/clusters/${cluster}/api/v1/pods`);
    expect(list.status).toBe(200);
    expect((await json(list)).items).toHaveLength(2);
    await fake.clearFaults();
    await remove();
  });
});
