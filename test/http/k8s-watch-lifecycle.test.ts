/**
 * `/k8s` positions across an informer's lifecycle (issue 18): a resourceVersion or a continue token
 * handed out before the cluster moved to another API server, or before the informer was deleted
 * and re-created, is expired (410), never applied to data it does not describe.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { json, send, startInCluster } from "../helpers/clusters.ts";
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
  it("expires a watch from a resourceVersion of the API server the cluster moved away from (F16)", async () => {
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
    await remove();
  });
});
