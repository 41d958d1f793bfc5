/**
 * `/k8s` positions across an informer's lifecycle (issue 18): a resourceVersion or a continue token
 * handed out before the cluster moved to another API server, or before the informer was deleted
 * and re-created, is expired (410), never applied to data it does not describe.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { createSynced, json, send, startInCluster } from "../helpers/clusters.ts";
import { pod } from "../fake-apiserver/client.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

function k8s(path: string): Promise<Response> {
  return exports.default.fetch(new Request(`http://localhost/k8s${path}`));
}

/** The first event of a watch stream. */
async function firstEvent(response: Response): Promise<any> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (!text.includes("\n")) {
      const chunk = await Promise.race([reader.read(), new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 5_000))]);
      if (chunk === "timeout" || chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return text.includes("\n") ? JSON.parse(text.slice(0, text.indexOf("\n"))) : undefined;
}

const keyOf = (item: any) => `${item.metadata.namespace}/${item.metadata.name}`;

/** etcd3 errors.go: the 410 of a continue whose snapshot is gone, when it can offer the rest. */
const INCONSISTENT_CONTINUE =
  "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/**
 * The 410 of an expired continue as the API server writes it (facts §3, review F20), whose
 * `metadata.continue` lists the rest: the objects after `after`, as the cache is now.
 */
async function expectInconsistentContinue(response: Response, cluster: string, after: string): Promise<void> {
  const status = await json(response);
  expect(status).toMatchObject({ kind: "Status", code: 410, reason: "Expired", message: INCONSISTENT_CONTINUE });
  const now = await json(await k8s(`/clusters/${cluster}/api/v1/pods`));
  const rest = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=100&continue=${encodeURIComponent(status.metadata.continue)}`));
  expect(rest.items.map(keyOf)).toEqual(now.items.map(keyOf).filter((key: string) => key > after));
  expect(rest.metadata.resourceVersion).toBe(now.metadata.resourceVersion);
}

describe("/k8s positions across an informer's lifecycle", () => {
  it("expires a watch and a list from a resourceVersion of the API server the cluster moved away from (F16)", async () => {
    const { cluster, remove } = await startInCluster("moving", {}, 40);
    const before = await json(await k8s(`/clusters/${cluster}/api/v1/pods`));
    expect(before.items).toHaveLength(40);
    const west = await newCluster();
    await west.seed({ namespaces: 1, podsPerNamespace: 2 });
    expect((await send("PUT", `/clusters/${cluster}`, { server: west.url })).status).toBe(200);
    const after = await waitFor("the relist from the new server", async () => {
      const list = await json(await k8s(`/clusters/${cluster}/api/v1/pods`));
      return list.items?.length === 2 && list;
    });
    // The new server's etcd is younger: its revisions are below the old server's.
    expect(Number(after.metadata.resourceVersion)).toBeLessThan(Number(before.metadata.resourceVersion));
    const event = await firstEvent(await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&resourceVersion=${before.metadata.resourceVersion}`));
    expect(event).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
    // So is a watch-list from it (client-go's relist), at once: after the 3 s wait it would be a 504
    // Timeout, not this 410.
    const watchList = `sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${before.metadata.resourceVersion}`;
    const listed = await firstEvent(await k8s(`/clusters/${cluster}/api/v1/pods?watch=true&${watchList}`));
    expect(listed).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
    // A list at it is expired too, at once: no wait makes another etcd's revision comparable.
    for (const match of ["", "&resourceVersionMatch=NotOlderThan", "&resourceVersionMatch=Exact"]) {
      const list = await k8s(`/clusters/${cluster}/api/v1/pods?resourceVersion=${before.metadata.resourceVersion}${match}`);
      expect([list.status, (await json(list)).message], match).toEqual([410, "The resourceVersion for the provided list is too old."]);
    }
    await remove();
  });

  it("expires a continue token of a deleted and re-created informer, and one of another informer, with a token for the rest (F17, F20)", async () => {
    const { cluster, fake } = await startInCluster("recreated", {}, 6);
    const page = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=2`));
    expect(page.metadata.continue).toBeTruthy();
    // Deleted and re-created: a new log, whose positions the old token's mean nothing in.
    expect((await send("DELETE", `/clusters/${cluster}/informers/pods`)).status).toBe(204);
    await createSynced(`/clusters/${cluster}/informers/pods`);
    await fake.create("pods", pod({ name: "later", namespace: "ns-0" })); // the new log moves on
    await waitFor("the new object", async () => (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).items.length === 7);
    const stale = await k8s(`/clusters/${cluster}/api/v1/pods?limit=2&continue=${encodeURIComponent(page.metadata.continue)}`);
    await expectInconsistentContinue(stale, cluster, keyOf(page.items.at(-1)));

    // Another informer starts serving the resource (a whole one that sorts first by name).
    const fresh = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=2`));
    await createSynced(`/clusters/${cluster}/informers/a-first-pods`);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the Worker's registry of served resources is kept a second
    const other = await k8s(`/clusters/${cluster}/api/v1/pods?limit=2&continue=${encodeURIComponent(fresh.metadata.continue)}`);
    await expectInconsistentContinue(other, cluster, keyOf(fresh.items.at(-1)));
  });
});
