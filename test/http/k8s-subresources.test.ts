/**
 * `/k8s` subresources (issue 30 item 6, review G10): `…/status` of the kinds that have one is the
 * object itself (`kubectl get --subresource=status`), `…/scale` of deployments, replica sets,
 * stateful sets and replication controllers an autoscaling/v1 Scale built from the object, as
 * kube-apiserver builds it; what the cache cannot serve (`pods/log`, `exec`, `attach`,
 * `portforward`, `proxy`) a 403 Forbidden Status that says so, and writes 405 as ever.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { createSynced, json, startInCluster } from "../helpers/clusters.ts";
import { deployment } from "../fake-apiserver/builders.ts";

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
let cluster: Awaited<ReturnType<typeof startInCluster>>;
let podPath: string;
beforeAll(async () => {
  cluster = await startInCluster("subresources", {}, 1);
  await cluster.fake.create("deployments", deployment({ name: "web", namespace: "shop", replicas: 3 }));
  await createSynced(`/clusters/${cluster.cluster}/informers/deployments`, { resource: "deployments.apps" });
  const first = ((await (await fetch(`${cluster.fake.url}/api/v1/pods?limit=1`)).json()) as any).items[0];
  podPath = `/api/v1/namespaces/${first.metadata.namespace}/pods/${first.metadata.name}`;
}, 120_000);
afterAll(() => cluster.remove());

const k8s = (p: string, init: RequestInit = {}) => exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster.cluster}${p}`, init));

describe("/k8s subresources", () => {
  it("answers …/status with the object itself", async () => {
    const [object, status] = await Promise.all([k8s(podPath), k8s(`${podPath}/status`)]);
    expect(status.status).toBe(200);
    expect(await json(status)).toEqual(await json(object));
    const deploymentStatus = await k8s("/apis/apps/v1/namespaces/shop/deployments/web/status");
    expect([deploymentStatus.status, (await json(deploymentStatus)).kind]).toEqual([200, "Deployment"]);
  });

  it("answers deployments/scale with an autoscaling/v1 Scale built from spec and status", async () => {
    const object = await json(await k8s("/apis/apps/v1/namespaces/shop/deployments/web"));
    const response = await k8s("/apis/apps/v1/namespaces/shop/deployments/web/scale");
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: "web",
        namespace: "shop",
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
        creationTimestamp: object.metadata.creationTimestamp,
      },
      spec: { replicas: 3 },
      status: { replicas: object.status?.replicas ?? 0, selector: "app=web" },
    });
    const table = await json(await k8s("/apis/apps/v1/namespaces/shop/deployments/web/scale", { headers: { accept: TABLE } }));
    expect(table.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Desired", "Available"]);
    expect(table.rows[0].cells).toEqual(["web", 3, object.status?.replicas ?? 0]);
  });

  it("has no scale for kinds without one, and no unknown subresource", async () => {
    for (const path of [`${podPath}/scale`, `${podPath}/nosuch`]) {
      const response = await k8s(path);
      expect([path, response.status, (await json(response)).message]).toEqual([path, 404, "the server could not find the requested resource"]);
    }
  });

  it.each(["log", "exec", "attach", "portforward", "proxy"])("refuses pods/%s with 403 Forbidden: the cache cannot serve it", async (sub) => {
    const response = await k8s(`${podPath}/${sub}`);
    expect(response.status).toBe(403);
    const name = podPath.split("/").at(-1);
    expect(await json(response)).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Forbidden",
      code: 403,
      details: { name, kind: "pods" },
      message: `pods "${name}" is forbidden: this is a read-only cache of the cluster: pods/${sub} is not served (ask the cluster itself)`,
    });
  });

  it("refuses every write, on objects and subresources, with 405 MethodNotAllowed", async () => {
    for (const [method, path] of [
      ["POST", `${podPath}/exec`],
      ["PUT", `${podPath}/status`],
      ["PATCH", "/apis/apps/v1/namespaces/shop/deployments/web/scale"],
      ["DELETE", podPath],
    ] as const) {
      const response = await k8s(path, { method });
      expect([method, path, response.status, (await json(response)).reason]).toEqual([method, path, 405, "MethodNotAllowed"]);
    }
  });
});
