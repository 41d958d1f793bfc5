/**
 * `/k8s` lists at a resourceVersion, as kube-apiserver 1.32 serves them (facts §3, §4; review F14,
 * F20): a continue with resourceVersion "0", a NotOlderThan list ahead of the cache (waited for up
 * to 3 s, then 504), and the 410 of an expired continue with the token that goes on inconsistently.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { json, startInCluster } from "../helpers/clusters.ts";

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
});
