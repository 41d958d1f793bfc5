/**
 * `/k8s` lists at a resourceVersion, as kube-apiserver 1.32 serves them (facts §3, §4; review F14,
 * F20): a continue with resourceVersion "0", a NotOlderThan list ahead of the cache (waited for up
 * to 3 s, then 504), and the 410 of an expired continue with the token that goes on inconsistently.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { json, startInCluster } from "../helpers/clusters.ts";
import { pod } from "../fake-apiserver/client.ts";

function k8s(path: string): Promise<Response> {
  return exports.default.fetch(new Request(`http://localhost/k8s${path}`));
}

describe("/k8s lists at a resourceVersion", () => {
  it("continues a list with resourceVersion=0, and refuses any other resourceVersion with a continue, as the API server does (F14)", async () => {
    const { cluster, fake, remove } = await startInCluster("continue-rv0", {}, 5);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const first = await json(await k8s(`${pods}?limit=2`));
    const token = encodeURIComponent(first.metadata.continue);
    const second = await k8s(`${pods}?limit=2&continue=${token}&resourceVersion=0`);
    expect(second.status).toBe(200);
    const page = await json(second);
    // A continued list keeps its limit and its snapshot: RV "0" only lifts the limit of a first page.
    expect(page.items).toHaveLength(2);
    expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    expect(page.metadata.continue).toEqual(expect.any(String));
    const refused = await k8s(`${pods}?limit=2&continue=${token}&resourceVersion=5`);
    expect([refused.status, (await json(refused)).message]).toEqual([400, "specifying resource version is not allowed when using continue"]);

    // The fake API server (modelled on etcd3 store.go) answers the same.
    const theirs = await (await fetch(`${fake.url}/api/v1/pods?limit=2`)).json() as any;
    const theirToken = encodeURIComponent(theirs.metadata.continue);
    expect((await fetch(`${fake.url}/api/v1/pods?limit=2&continue=${theirToken}&resourceVersion=0`)).status).toBe(200);
    expect((await fetch(`${fake.url}/api/v1/pods?limit=2&continue=${theirToken}&resourceVersion=5`)).status).toBe(400);
    await remove();
  });

  it("answers a NotOlderThan list ahead of the cache once the informer ingests up to its resourceVersion, within 3 s (F14)", async () => {
    const { cluster, fake, remove } = await startInCluster("ahead", {}, 2);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const target = String(BigInt(await fake.revision()) + 2n);
    const answer = k8s(`${pods}?resourceVersion=${target}`);
    // Whatever the timing, the list must not be answered before its resourceVersion is reached;
    // the pause lets it reach the informer first, so today's 504 at once would show.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await fake.create("pods", pod({ name: "later-1", namespace: "ns-0" }));
    await fake.create("pods", pod({ name: "later-2", namespace: "ns-0" }));
    const response = await answer;
    expect(response.status).toBe(200);
    const list = await json(response);
    expect(BigInt(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(target));
    expect(list.items.map((item: any) => item.metadata.name)).toContain("later-2");
    await remove();
  });

  it("answers 504 Too large resource version once the cache has not reached it after 3 s, and an Exact list ahead at once (F14)", async () => {
    const { cluster, stub, remove } = await startInCluster("too-large", {}, 2);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const current = (await json(await k8s(pods))).metadata.resourceVersion;
    const ahead = String(BigInt(current) + 1_000n);
    const started = Date.now();
    const response = await k8s(`${pods}?resourceVersion=${ahead}&resourceVersionMatch=NotOlderThan`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_900); // the watch cache's wait (facts §3 504)
    expect(response.status).toBe(504);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await json(response)).toMatchObject({
      reason: "Timeout",
      message: `Timeout: Too large resource version: ${ahead}, current: ${current}`,
      details: { causes: [{ reason: "ResourceVersionTooLarge" }], retryAfterSeconds: 1 },
    });
    // The informer object's wait, given less time, ends as soon.
    expect(await stub.awaitResourceVersion(ahead, 50)).toEqual({ ok: true, value: { current } });
    // An Exact list is etcd's: not waited for.
    const exact = await k8s(`${pods}?resourceVersion=${ahead}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(504);
    await remove();
  });
});
