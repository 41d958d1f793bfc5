/**
 * The client an informer's loop builds lists without `metadata.managedFields` when the informer's
 * transform drops them (issue 28: relist; list-decoder.ts), and with them when it keeps them.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { Env } from "../../src/env.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { SubrequestBudget } from "../../src/net/subrequest-budget.ts";
import { kubeClient } from "../../src/objects/informer-loop.ts";

const pod = { metadata: { name: "a", namespace: "ns", resourceVersion: "3", managedFields: [{ manager: "kubelet" }] }, spec: {} };
const listBody = JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: "3" }, items: [pod] });

async function listed(transform: { dropManagedFields?: boolean }): Promise<KubeObject[]> {
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(listBody, { headers: { "content-type": "application/json" } }));
  const spec = parseInformerSpec({ resource: "pods", transform }, "loop-client");
  const client = kubeClient(spec, { server: "http://127.0.0.1:6443" }, env as unknown as Env, new SubrequestBudget());
  const items: KubeObject[] = [];
  await client.listPage({}, (batch) => items.push(...batch));
  return items;
}

describe("the informer loop's KubeClient", () => {
  afterEach(() => vi.restoreAllMocks());

  it("cuts managedFields from listed items when the transform drops them, keeps them otherwise", async () => {
    expect((await listed({}))[0]!.metadata.managedFields).toBeUndefined();
    expect((await listed({ dropManagedFields: false }))[0]!.metadata.managedFields).toEqual([{ manager: "kubelet" }]);
  });
});
