/**
 * kubectl 1.32 reads /k8s as it reads a real API server (issue 8, "Tests: real clients"): each
 * command runs against the Worker's /k8s and against the fake API server the Worker mirrors, and the
 * answers must match: the same items in the same order, with the same names, namespaces and
 * resourceVersions, and the same objects apart from `metadata.managedFields` (our cache drops them by
 * default). Errors must read as the API server's do, and writes are refused with the object untouched.
 */
import { describe, expect, it } from "vitest";
import { fakeCluster } from "./context.ts";
import { PODS } from "./fixtures.ts";
import { KUBECTL_MISSING, kubectl, kubectlJson, kubectlSuite, type Target } from "./kubectl.ts";
import { withoutManagedFields, type KubeList, type KubeObject } from "./objects.ts";

const identity = (o: KubeObject) => ({ namespace: o.metadata.namespace, name: o.metadata.name, resourceVersion: o.metadata.resourceVersion });

async function both<T>(args: string[]): Promise<Record<Target, T>> {
  const [edge, fake] = await Promise.all([kubectlJson<T>(args, { config: "edge" }), kubectlJson<T>(args, { config: "fake" })]);
  return { edge, fake };
}

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get -o json on /k8s matches the API server"), () => {
  it.each([
    { args: ["get", "pods", "-A"], what: "all namespaces" },
    { args: ["get", "pods", "-n", "shop"], what: "one namespace" },
    { args: ["get", "pods", "-A", "-l", "app=web"], what: "an equality label selector" },
    { args: ["get", "pods", "-A", "-l", "tier in (a,b)"], what: "a set-based label selector" },
    { args: ["get", "pods", "-A", "-l", "app!=web,tier notin (c)"], what: "negative selectors" },
    { args: ["get", "pods", "-A", "--field-selector", "status.phase=Running"], what: "a field selector on an indexed field" },
    { args: ["get", "pods", "-n", "ops", "-l", "app=web", "--field-selector", "status.phase=Running"], what: "a label and a field selector in one namespace" },
    { args: ["get", "pods", "-A", "--field-selector", "metadata.namespace=batch"], what: "a metadata.namespace field selector" },
    { args: ["get", "pods", "-A", "--chunk-size=7"], what: "pages of 7" },
    { args: ["get", "deployments", "-A"], what: "deployments in all namespaces" },
    { args: ["get", "deployments.apps", "-n", "shop"], what: "deployments by their group-qualified name" },
  ])("lists $what: $args", async ({ args }) => {
    const { edge, fake } = await both<KubeList>([...args, "-o", "json"]);
    expect(fake.items.length, "the reference answer is not empty").toBeGreaterThan(0);
    expect(edge.items.map(identity)).toEqual(fake.items.map(identity));
    expect(edge.items.map(withoutManagedFields)).toEqual(fake.items.map(withoutManagedFields));
  });

  it("selects by label as the fixtures say (-l 'app=web,!churn')", async () => {
    const list = await kubectlJson<KubeList>(["get", "pods", "-A", "-l", "app=web,!churn", "-o", "json"], { config: "edge" });
    const expected = PODS.filter((p) => p.labels.app === "web").map((p) => `${p.namespace}/${p.name}`);
    expect(list.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(expected.sort());
  });

  it("pages with limit and continue for --chunk-size=7", async () => {
    const result = await kubectl(["get", "pods", "-A", "--chunk-size=7", "-o", "json", "-v=6"], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    const requests = [...result.stderr.matchAll(/GET (\S+\/k8s\/api\/v1\/pods\?\S+) 200/g)].map((m) => new URL(m[1]!));
    const total = (JSON.parse(result.stdout) as KubeList).items.length;
    expect(requests.length).toBe(Math.ceil(total / 7));
    expect(requests.every((url) => url.searchParams.get("limit") === "7")).toBe(true);
    expect(requests.slice(1).every((url) => (url.searchParams.get("continue") ?? "") !== "")).toBe(true);
  });

  it.each([
    ["pod", "web-1", "shop"],
    ["pod", "setup-1", "shop"],
    ["pod", "gone-1", "ops"],
    ["deployment", "worker", "batch"],
  ])("gets one %s, %s in %s", async (kind, name, namespace) => {
    const { edge, fake } = await both<KubeObject>(["get", kind, name, "-n", namespace, "-o", "json"]);
    expect(identity(edge)).toEqual(identity(fake));
    expect(withoutManagedFields(edge)).toEqual(withoutManagedFields(fake));
  });

  it("refuses kubectl delete with MethodNotAllowed and leaves the object untouched", async () => {
    const before = await kubectlJson<KubeObject>(["get", "pod", "api-1", "-n", "shop", "-o", "json"], { config: "edge" });
    const result = await kubectl(["delete", "pod", "api-1", "-n", "shop", "--wait=false"], { config: "edge" });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^Error from server \(MethodNotAllowed\): /m);
    const after = await kubectlJson<KubeObject>(["get", "pod", "api-1", "-n", "shop", "-o", "json"], { config: "edge" });
    expect(after).toEqual(before);
    const upstream = (await fakeCluster().state("pods", "shop")).items.find((o) => o.metadata.name === "api-1");
    expect(upstream?.metadata.resourceVersion, "the delete never reached the cluster").toBe(before.metadata.resourceVersion);
  });

  it("lists pods and deployments in kubectl api-resources", async () => {
    const result = await kubectl(["api-resources"], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.split("\n").slice(1).map((line) => line.trim().split(/\s+/));
    // NAME SHORTNAMES APIVERSION NAMESPACED KIND
    expect(rows).toContainEqual(["pods", "po", "v1", "true", "Pod"]);
    expect(rows).toContainEqual(["deployments", "deploy", "apps/v1", "true", "Deployment"]);
  });
});
