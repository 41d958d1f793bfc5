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
    // A list at it is expired too, at once: no wait makes another etcd's revision comparable.
    for (const match of ["", "&resourceVersionMatch=NotOlderThan", "&resourceVersionMatch=Exact"]) {
      const list = await k8s(`/clusters/${cluster}/api/v1/pods?resourceVersion=${before.metadata.resourceVersion}${match}`);
      expect([list.status, (await json(list)).message], match).toEqual([410, "The resourceVersion for the provided list is too old."]);
    }
    await remove();
  });

  it("expires a continue token of a deleted and re-created informer, and one of another informer (F17)", async () => {
    const { cluster, fake } = await startInCluster("recreated", {}, 6);
    const page = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=2`));
    expect(page.metadata.continue).toBeTruthy();
    // Deleted and re-created: a new log, whose positions the old token's mean nothing in.
    expect((await send("DELETE", `/clusters/${cluster}/informers/pods`)).status).toBe(204);
    await createSynced(`/clusters/${cluster}/informers/pods`);
    await fake.create("pods", pod({ name: "later", namespace: "ns-0" })); // the new log moves on
    await waitFor("the new object", async () => (await json(await k8s(`/clusters/${cluster}/api/v1/pods`))).items.length === 7);
    const stale = await k8s(`/clusters/${cluster}/api/v1/pods?limit=2&continue=${encodeURIComponent(page.metadata.continue)}`);
    expect([stale.status, (await json(stale)).reason]).toEqual([410, "Expired"]);

    // Another informer starts serving the resource (a whole one that sorts first by name).
    const fresh = await json(await k8s(`/clusters/${cluster}/api/v1/pods?limit=2`));
    await createSynced(`/clusters/${cluster}/informers/a-first-pods`);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // the Worker's registry of served resources is kept a second
    const other = await k8s(`/clusters/${cluster}/api/v1/pods?limit=2&continue=${encodeURIComponent(fresh.metadata.continue)}`);
    expect([other.status, (await json(other)).reason]).toEqual([410, "Expired"]);
  });
});
