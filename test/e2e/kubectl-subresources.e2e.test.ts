/**
 * kubectl 1.32 on `/k8s` subresources (issue 30 item 6, review G10): `get --subresource=status`
 * prints the object as the API server's does, `--subresource=scale` an autoscaling/v1 Scale built
 * from the deployment the Worker mirrors, and `kubectl logs` is refused with a Forbidden that says
 * the cache cannot serve it (kubectl exits 1).
 */
import { describe, expect, it } from "vitest";
import { KUBECTL_MISSING, kubectl, kubectlJson, kubectlSuite } from "./kubectl.ts";
import { withoutManagedFields, type KubeObject } from "./objects.ts";

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get --subresource on /k8s"), () => {
  it("prints a pod's status subresource as the API server's pod", async () => {
    const args = ["get", "pod", "web-1", "-n", "shop", "-o", "json"];
    const [edge, fake] = await Promise.all([
      kubectlJson<KubeObject>([...args, "--subresource=status"], { config: "edge" }),
      kubectlJson<KubeObject>(args, { config: "fake" }),
    ]);
    expect(withoutManagedFields(edge)).toEqual(withoutManagedFields(fake));
  });

  it("prints a deployment's scale built from the API server's deployment", async () => {
    const [scale, deployment] = await Promise.all([
      kubectlJson<any>(["get", "deployment", "web", "-n", "shop", "--subresource=scale", "-o", "json"], { config: "edge" }),
      kubectlJson<any>(["get", "deployment", "web", "-n", "shop", "-o", "json"], { config: "fake" }),
    ]);
    expect(scale).toEqual({
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: "web",
        namespace: "shop",
        uid: deployment.metadata.uid,
        resourceVersion: deployment.metadata.resourceVersion,
        creationTimestamp: deployment.metadata.creationTimestamp,
      },
      spec: { replicas: deployment.spec.replicas },
      status: { replicas: deployment.status.replicas, selector: "app=web" },
    });
    const table = await kubectl(["get", "deployment", "web", "-n", "shop", "--subresource=scale"], { config: "edge" });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^NAME\s+DESIRED\s+AVAILABLE$/);
  });

  it("refuses kubectl logs with a Forbidden saying the cache cannot serve it", async () => {
    const result = await kubectl(["logs", "web-1", "-n", "shop"], { config: "edge" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Error from server (Forbidden): pods "web-1" is forbidden: this is a read-only cache of the cluster: pods/log is not served');
  });
});
