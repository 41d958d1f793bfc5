/**
 * kubectl 1.32 on the `/k8s` endpoints that are not resources (issue 18, F2): `kubectl explain`
 * prints from /k8s what it prints from the API server the Worker mirrors (OpenAPI fetched from it);
 * `kubectl auth can-i` says yes to get/list/watch of what the credential may read and no to writes,
 * to unserved resources and to a cluster outside its scope; `kubectl auth whoami` answers the
 * credential's Kubernetes user and groups (TOKENS `user` and `groups`, or `edge-informer:<name>`); `kubectl get --raw /k8s/readyz?verbose` reads as kube-apiserver's.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { e2e } from "./context.ts";
import { KUBECTL_MISSING, kubectl, kubectlSuite } from "./kubectl.ts";
import { readKubeconfig, writeKubeconfig } from "./kubeconfig.ts";

/** A kubeconfig for /k8s with the credential that may read only another cluster. */
function restrictedKubeconfig(): string {
  const { kubeconfigs, restricted, scratchDir } = e2e();
  return writeKubeconfig(join(scratchDir, "restricted-server-endpoints.kubeconfig"), { ...readKubeconfig(kubeconfigs.edge), token: restricted.readToken });
}

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl explain, auth and health on /k8s"), () => {
  it.each([["pods"], ["deployments"], ["pods.metadata"]])("explains %s as the API server does", async (what) => {
    const [edge, fake] = await Promise.all([kubectl(["explain", what], { config: "edge" }), kubectl(["explain", what], { config: "fake" })]);
    expect(fake.code, fake.stderr).toBe(0);
    expect(edge.code, edge.stderr).toBe(0);
    expect(edge.stdout).toBe(fake.stdout);
    expect(edge.stdout).toMatch(/^(KIND|GROUP):/m);
  });

  it.each([
    [["list", "pods"], "yes"],
    [["get", "pods", "-n", "shop"], "yes"],
    [["watch", "deployments.apps", "-A"], "yes"],
    // kubectl prints the review's reason after a "no".
    [["create", "pods"], "no - this is a read-only cache of the cluster: only get, list and watch are served"],
    [["delete", "deployments.apps", "-n", "shop"], "no - this is a read-only cache of the cluster: only get, list and watch are served"],
    [["get", "pods", "--subresource=log"], "no - subresources are not served by this cache"],
  ])("kubectl auth can-i %j says %s", async (args, answer) => {
    const result = await kubectl(["auth", "can-i", ...args], { config: "edge" });
    expect(result.stdout.trim(), result.stderr).toBe(answer);
    expect(result.code).toBe(answer === "yes" ? 0 : 1);
  });

  it("says no to a credential scoped to another cluster, which still discovers", async () => {
    const result = await kubectl(["auth", "can-i", "list", "pods"], { config: { kubeconfig: restrictedKubeconfig() } });
    expect(result.stdout.trim(), result.stderr).toBe("no - credential 'restricted-reader' may not read this cluster");
    expect(result.code).toBe(1);
  });

  it("answers kubectl auth whoami with edge-informer:<name> for a credential without a configured user", async () => {
    const result = await kubectl(["auth", "whoami"], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Username\s+edge-informer:read$/m);
    expect(result.stdout).toMatch(/^Groups\s+\[system:authenticated\]$/m);
  });

  it("answers kubectl auth whoami -o json with a TOKENS credential's user and groups, and no extra", async () => {
    const { restricted } = e2e();
    const result = await kubectl(["auth", "whoami", "-o", "json"], { config: { kubeconfig: restrictedKubeconfig() } });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      kind: "SelfSubjectReview",
      apiVersion: "authentication.k8s.io/v1",
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: restricted.user, groups: [...restricted.groups, "system:authenticated"] } },
    });
  });

  it("reads /readyz?verbose and /livez as kube-apiserver's", async () => {
    // `--raw` replaces the server URL's whole path (client-go RequestURI), so it names /k8s itself.
    const readyz = await kubectl(["get", "--raw", "/k8s/readyz?verbose"], { config: "edge" });
    expect(readyz.code, readyz.stderr).toBe(0);
    expect(readyz.stdout).toBe("[+]ping ok\nreadyz check passed\n");
    const livez = await kubectl(["get", "--raw", "/k8s/livez"], { config: "edge" });
    expect(livez.stdout).toBe("ok");
  });
});
