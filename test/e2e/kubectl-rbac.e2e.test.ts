/**
 * kubectl as two users of one `rbac` cluster (issue 31 item 4): alice is bound to read pods in
 * team-a, bob in team-b, on a fake member cluster holding a real cluster's bootstrap policy. Each
 * sees exactly its own namespace's pods — the same objects the member cluster's own server answers —
 * and is refused the other's and the cluster-wide list with kube-apiserver's message; `kubectl auth
 * can-i` agrees with what is served; `kubectl get -w` ends once its RoleBinding is deleted upstream.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { namespace, pod } from "../fake-apiserver/builders.ts";
import { podReaderBinding, podReaderRole, seedBootstrapRbac } from "../fake-apiserver/bootstrap-rbac.ts";
import { e2e, workerAdmin as admin, workerJson } from "./context.ts";
import { readKubeconfig, writeKubeconfigContexts } from "./kubeconfig.ts";
import { KUBECTL_MISSING, kubectl, kubectlJson, kubectlStream, kubectlSuite } from "./kubectl.ts";
import { withoutManagedFields, type KubeList } from "./objects.ts";
import { PYTHON_MISSING, runPython } from "./python.ts";
import { waitFor } from "./wait.ts";

const CLUSTER = "rbac-e2e";
const TEAMS = { alice: "team-a", bob: "team-b" } as const;
type User = keyof typeof TEAMS;
const WAIT_MS = 30_000;

let server: FakeCluster;
let config: { kubeconfig: string };
const as = (user: User | "server", args: string[]) => ["--context", user, ...args];

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl as two users of a cluster whose authorization is rbac"), () => {
  beforeAll(async () => {
    const { clusterUrl, scratchDir, kubeconfigs, rbacReaders } = e2e();
    server = await FakeCluster.create(clusterUrl.replace(/\/clusters\/[^/]+$/, ""));
    await seedBootstrapRbac(server);
    for (const [user, team] of Object.entries(TEAMS)) {
      await server.create("namespaces", namespace({ name: team }));
      await server.create("roles", podReaderRole(team));
      await server.create("rolebindings", podReaderBinding(team, user));
      for (const i of [1, 2, 3]) await server.create("pods", pod({ name: `${team}-${i}`, namespace: team }));
    }
    await admin("PUT", `/clusters/${CLUSTER}`, { server: server.url, authorization: "rbac" });
    await admin("PUT", `/clusters/${CLUSTER}/informers/pods`, { resource: "pods" });
    await waitFor(
      async () => {
        const { items } = await workerJson<{ items: { synced: boolean }[] }>(`/clusters/${CLUSTER}/informers`);
        return items.length === 5 && items.every((i) => i.synced);
      },
      { timeoutMs: WAIT_MS, intervalMs: 200, what: "the pods and RBAC informers to sync" },
    );
    const edge = readKubeconfig(kubeconfigs.edge);
    config = {
      kubeconfig: writeKubeconfigContexts(join(scratchDir, "rbac.kubeconfig"), [
        ...(Object.keys(TEAMS) as User[]).map((user) => ({ ...edge, name: user, server: `${edge.server}/clusters/${CLUSTER}`, token: rbacReaders[user].token })),
        { name: "server", server: server.url },
      ]),
    };
  });

  afterAll(async () => {
    await admin("DELETE", `/clusters/${CLUSTER}?cascade=true`).catch(() => {});
    await server?.dispose().catch(() => {});
  });

  it("shows each user exactly its own namespace's pods, as the member cluster's server lists them", async () => {
    for (const [user, team] of Object.entries(TEAMS) as [User, string][]) {
      const [ours, theirs] = await Promise.all([
        kubectlJson<KubeList>(as(user, ["get", "pods", "-n", team, "-o", "json"]), { config }),
        kubectlJson<KubeList>(as("server", ["get", "pods", "-n", team, "-o", "json"]), { config }),
      ]);
      expect(ours.items.map(withoutManagedFields)).toEqual(theirs.items.map(withoutManagedFields));
      expect(ours.items).toHaveLength(3);
      const table = await kubectl(as(user, ["get", "pods", "-n", team]), { config });
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain(`${team}-1`);
    }
  });

  it("refuses the other user's namespace and the cluster-wide list with kube-apiserver's message", async () => {
    const other = await kubectl(as("alice", ["get", "pods", "-n", "team-b"]), { config });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"');
    const everywhere = await kubectl(as("bob", ["get", "pods", "-A"]), { config });
    expect(everywhere.code).toBe(1);
    expect(everywhere.stderr).toContain('Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" at the cluster scope');
    const one = await kubectl(as("bob", ["get", "pod", "team-a-1", "-n", "team-a"]), { config });
    expect(one.stderr).toContain('pods "team-a-1" is forbidden: User "bob" cannot get resource "pods" in API group "" in the namespace "team-a"');
  });

  it.skipIf(PYTHON_MISSING !== undefined)(`the official Python client as alice: its own namespace, and the typed 403 elsewhere${PYTHON_MISSING ? ` [skipped: ${PYTHON_MISSING}]` : ""}`, async () => {
    const { k8sUrl, rbacReaders } = e2e();
    const alice = { alice: { host: `${k8sUrl}/clusters/${CLUSTER}`, token: rbacReaders.alice.token } };
    type Access = { alice: { raised: string | null; status?: number; items?: string[]; body?: { reason: string; message: string } } };
    const own = await runPython<Access>("access", alice, { namespace: "team-a" });
    expect(own.alice).toMatchObject({ raised: null, items: ["team-a-1", "team-a-2", "team-a-3"] });
    const other = await runPython<Access>("access", alice, { namespace: "team-b" });
    expect(other.alice).toMatchObject({
      raised: "ApiException",
      status: 403,
      body: { reason: "Forbidden", message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"' },
    });
    expect((await runPython<Access>("access", alice)).alice).toMatchObject({ raised: "ApiException", status: 403 });
  });

  it("kubectl auth whoami and can-i tell the truth", async () => {
    const whoami = await kubectlJson<{ status: { userInfo: { username: string } } }>(as("alice", ["auth", "whoami", "-o", "json"]), { config });
    expect(whoami.status.userInfo.username).toBe("alice");
    const canI = async (user: User, args: string[]) => (await kubectl(as(user, ["auth", "can-i", ...args]), { config })).stdout.trim();
    expect(await canI("alice", ["list", "pods", "-n", "team-a"])).toBe("yes");
    expect(await canI("alice", ["watch", "pods", "-n", "team-a"])).toBe("yes");
    expect(await canI("alice", ["list", "pods", "-n", "team-b"])).toBe("no");
    expect(await canI("alice", ["list", "pods", "-A"])).toBe("no");
    expect(await canI("bob", ["get", "pods", "-n", "team-b"])).toBe("yes");
    // Read-only, whatever RBAC says; kubectl prints the reason after the "no".
    expect(await canI("bob", ["delete", "pods", "-n", "team-b"])).toBe("no - this is a read-only cache of the cluster: only get, list and watch are served");
    const list = await kubectl(as("bob", ["auth", "can-i", "--list", "-n", "team-b"]), { config });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  });

  it("ends kubectl get -w once the user's RoleBinding is deleted upstream, and refuses it afterwards", async () => {
    await server.create("rolebindings", { ...podReaderBinding("team-a", "bob"), metadata: { name: "bob-visits", namespace: "team-a" } });
    await waitFor(async () => (await kubectl(as("bob", ["get", "pods", "-n", "team-a"]), { config })).code === 0, {
      timeoutMs: WAIT_MS,
      intervalMs: 500,
      what: "bob's new RoleBinding to take effect",
    });
    const watch = kubectlStream(as("bob", ["get", "pods", "-n", "team-a", "-w", "--request-timeout=0"]), { config, timeoutMs: 60_000 });
    try {
      await waitFor(async () => watch.stdout().includes("team-a-1"), { timeoutMs: WAIT_MS, intervalMs: 100, what: "the watch's first rows" });
      await server.delete("rolebindings", { metadata: { name: "bob-visits", namespace: "team-a" } });
      const started = Date.now();
      const code = await Promise.race([watch.exited, new Promise<"open">((resolve) => setTimeout(() => resolve("open"), WAIT_MS))]);
      expect(code, `kubectl get -w still ran ${Date.now() - started} ms after the RoleBinding was deleted`).not.toBe("open");
      const again = await kubectl(as("bob", ["get", "pods", "-n", "team-a"]), { config });
      expect(again.stderr).toContain("Forbidden");
    } finally {
      await watch.stop();
    }
  });
});
