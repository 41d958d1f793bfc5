/**
 * kubectl with one kubeconfig of several contexts, one per cluster (issue 12, "/k8s per cluster"):
 * two more fake API servers become the Worker's run-time clusters `prod` and `staging`, each context
 * points at `https://<worker>/k8s/clusters/<cluster>`, and two more contexts point at the fake servers
 * themselves, for the reference answers. `kubectl --context prod get pods -A` must equal prod's own
 * server's answer (and staging's likewise), `get pods -w` on each context sees only its own cluster's
 * changes, and a NotFound reads as kubectl's usual one; the example kubeconfig of the docs works as
 * written. Both clusters hold a pod of the same name
 * with different labels, so an answer from the wrong cluster cannot pass for the right one.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { deployment, namespace, pod } from "../fake-apiserver/builders.ts";
import { e2e, workerAdmin as admin, workerJson } from "./context.ts";
import { readKubeconfig, writeKubeconfigContexts } from "./kubeconfig.ts";
import { KUBECTL_MISSING, kubectl, kubectlJson, type KubectlOptions, kubectlStream, kubectlSuite, parseJsonStream, type KubectlStream } from "./kubectl.ts";
import { withoutManagedFields, type KubeList, type KubeObject } from "./objects.ts";
import { waitFor } from "./wait.ts";
import { ROOT } from "./worker.ts";

const CLUSTERS = ["prod", "staging"] as const;
type Name = (typeof CLUSTERS)[number];
const WATCHED = "watched";
const WAIT_MS = 30_000;

const servers = {} as Record<Name, FakeCluster>;
let kubeconfig: { kubeconfig: string };
const ctx = (context: string, args: string[]) => ["--context", context, ...args];
const identity = (o: KubeObject) => ({ namespace: o.metadata.namespace, name: o.metadata.name, resourceVersion: o.metadata.resourceVersion });

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl --context per cluster on /k8s/clusters/{cluster}"), () => {
  beforeAll(async () => {
    const { clusterUrl, scratchDir, kubeconfigs } = e2e();
    const fakeServer = clusterUrl.replace(/\/clusters\/[^/]+$/, "");
    for (const name of CLUSTERS) {
      const server = (servers[name] = await FakeCluster.create(fakeServer));
      await server.apply([
        ...["shop", WATCHED].map((ns) => ({ op: "create" as const, resource: "namespaces" as const, object: namespace({ name: ns }) })),
        ...[1, 2, 3].map((i) => ({ op: "create" as const, resource: "pods" as const, object: pod({ name: `${name}-${i}`, namespace: "shop", labels: { app: i === 1 ? "web" : "db" } }) })),
        { op: "create", resource: "pods", object: pod({ name: "same-name", namespace: "shop", labels: { app: "web", cluster: name } }) },
        { op: "create", resource: "pods", object: pod({ name: `${name}-seed`, namespace: WATCHED }) },
      ]);
      await admin("PUT", `/clusters/${name}`, { server: server.url });
      await admin("PUT", `/clusters/${name}/informers/pods`, { resource: "pods" });
    }
    // Only prod mirrors deployments: staging's discovery must not offer them, whatever kubectl cached for prod.
    await servers.prod.create("deployments", deployment({ name: "web", namespace: "shop", replicas: 2 }));
    await admin("PUT", "/clusters/prod/informers/deployments", { resource: "deployments.apps" });
    for (const path of ["/clusters/prod/informers/pods", "/clusters/staging/informers/pods", "/clusters/prod/informers/deployments"]) {
      await waitFor(async () => (await workerJson<{ synced: boolean }>(path)).synced, { timeoutMs: WAIT_MS, intervalMs: 200, what: `${path} to sync` });
    }
    // The contexts reach the Worker as the `edge` kubeconfig does (the HTTPS front, READ_TOKEN).
    const edge = readKubeconfig(kubeconfigs.edge);
    kubeconfig = {
      kubeconfig: writeKubeconfigContexts(join(scratchDir, "clusters.kubeconfig"), [
        ...CLUSTERS.map((name) => ({ ...edge, name, server: `${edge.server}/clusters/${name}` })),
        ...CLUSTERS.map((name) => ({ name: `${name}-server`, server: servers[name].url })),
        { ...edge, name: "ghost", server: `${edge.server}/clusters/ghost` },
      ]),
    };
  });

  afterAll(async () => {
    for (const name of CLUSTERS) {
      await admin("DELETE", `/clusters/${name}?cascade=true`).catch(() => {});
      await servers[name]?.dispose().catch(() => {});
    }
  });

  it.each([
    { args: ["get", "pods", "-A"], what: "all namespaces" },
    { args: ["get", "pods", "-n", "shop", "-l", "app=web"], what: "a label selector in one namespace" },
    { args: ["get", "pods", "-A", "--chunk-size=2"], what: "pages of 2" },
  ])("lists $what on each context as that cluster's own server does: $args", async ({ args }) => {
    for (const name of CLUSTERS) {
      const [ours, theirs] = await Promise.all([
        kubectlJson<KubeList>(ctx(name, [...args, "-o", "json"]), { config: kubeconfig }),
        kubectlJson<KubeList>(ctx(`${name}-server`, [...args, "-o", "json"]), { config: kubeconfig }),
      ]);
      expect(theirs.items.length, `${name}: the reference answer is not empty`).toBeGreaterThan(0);
      expect(ours.items.map(identity), name).toEqual(theirs.items.map(identity));
      expect(ours.items.map(withoutManagedFields), name).toEqual(theirs.items.map(withoutManagedFields));
    }
  });

  it("follows continue pages under the cluster's prefix", async () => {
    const result = await kubectl(ctx("staging", ["get", "pods", "-A", "--chunk-size=2", "-o", "json", "-v=6"]), { config: kubeconfig });
    expect(result.code, result.stderr).toBe(0);
    const requests = [...result.stderr.matchAll(/GET (\S+\/api\/v1\/pods\?\S+) 200/g)].map((m) => new URL(m[1]!));
    expect(requests.length).toBe(Math.ceil((JSON.parse(result.stdout) as KubeList).items.length / 2));
    expect(requests.every((url) => url.pathname === "/k8s/clusters/staging/api/v1/pods")).toBe(true);
    expect(requests.slice(1).every((url) => (url.searchParams.get("continue") ?? "") !== "")).toBe(true);
  });

  it("watches on each context only that cluster's changes (get pods -w)", async () => {
    const args = ["get", "pods", "-n", WATCHED, "-w", "--output-watch-events", "-o", "json"];
    const streams = Object.fromEntries(CLUSTERS.map((name) => [name, kubectlStream(ctx(name, args), { config: kubeconfig })])) as Record<Name, KubectlStream>;
    const events = (name: Name) =>
      (parseJsonStream(streams[name].stdout()) as { type: string; object: KubeObject }[]).map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
    const seen = (name: Name) => `${name}: ${events(name).join(", ")} / ${streams[name].stderr().slice(-1000)}`;
    const expected: Record<Name, string[]> = { prod: [], staging: [] };
    const record = (name: Name, type: string, object: KubeObject) => expected[name].push(`${type} ${object.metadata.name} ${object.metadata.resourceVersion}`);
    try {
      for (const name of CLUSTERS) {
        const [seed] = (await servers[name].state("pods", WATCHED)).items;
        record(name, "ADDED", seed!);
        // The seed printed means the list is done and the watch opened from its resourceVersion.
        await waitFor(() => events(name).length >= 1, { timeoutMs: WAIT_MS, what: `the initial list (${seen(name)})` });
      }
      // Interleaved, so a leak would land between a stream's own events; prod's last change comes after all of staging's.
      record("prod", "ADDED", await servers.prod.create("pods", pod({ name: "prod-w", namespace: WATCHED })));
      record("staging", "ADDED", await servers.staging.create("pods", pod({ name: "staging-w", namespace: WATCHED })));
      record("prod", "MODIFIED", await servers.prod.update("pods", pod({ name: "prod-w", namespace: WATCHED, phase: "Succeeded" })));
      record("staging", "DELETED", await servers.staging.delete("pods", { metadata: { namespace: WATCHED, name: "staging-w" } }));
      record("prod", "DELETED", await servers.prod.delete("pods", { metadata: { namespace: WATCHED, name: "prod-w" } }));
      for (const name of CLUSTERS) {
        await waitFor(() => events(name).length >= expected[name].length, { timeoutMs: WAIT_MS, what: `every change of ${name} (${seen(name)})` });
      }
    } finally {
      await Promise.all(CLUSTERS.map((name) => streams[name].stop()));
    }
    for (const name of CLUSTERS) expect(events(name), name).toEqual(expected[name]);
  });

  it("prints kubectl's usual NotFound for an object only the other cluster has", async () => {
    for (const context of ["staging", "staging-server"]) {
      const result = await kubectl(ctx(context, ["get", "pod", "prod-1", "-n", "shop"]), { config: kubeconfig });
      expect([context, result.code, result.stderr.trim()]).toEqual([context, 1, 'Error from server (NotFound): pods "prod-1" not found']);
    }
    const found = await kubectlJson<KubeObject>(ctx("prod", ["get", "pod", "prod-1", "-n", "shop", "-o", "json"]), { config: kubeconfig });
    expect(found.metadata.name).toBe("prod-1");
  });

  it("discovers each cluster's own resources, with one kubectl cache for both contexts", async () => {
    const listed = await kubectlJson<KubeList>(ctx("prod", ["get", "deployments", "-A", "-o", "json"]), { config: kubeconfig });
    expect(listed.items.map((o) => o.metadata.name)).toEqual(["web"]);
    const result = await kubectl(ctx("staging", ["get", "deployments", "-A"]), { config: kubeconfig });
    expect([result.code, result.stderr.trim()]).toEqual([1, 'error: the server doesn\'t have a resource type "deployments"']);
  });

  // docs/deploying.md holds what was the README's "kubectl with many clusters" (issue 30).
  it.each(["docs/deploying.md", "docs/api.md"])("works with the example kubeconfig of %s", async (doc) => {
    const { kubeconfigs, scratchDir, readToken } = e2e();
    const text = readFileSync(join(ROOT, doc), "utf8");
    const example = /^#{2,3} (kubectl with many clusters|Many clusters: `\/k8s\/clusters\/\{cluster\}`)$/m.exec(text);
    expect(example, `${doc} has the section`).not.toBeNull();
    const yaml = /```yaml\n([\s\S]*?)```/.exec(text.slice(example!.index))![1]!;
    // Only the Worker's address and the token are the reader's to fill in.
    const edge = readKubeconfig(kubeconfigs.edge).server.replace(/\/k8s$/, "");
    const path = join(scratchDir, `${doc.replace("/", "-")}.kubeconfig`);
    writeFileSync(path, yaml.replaceAll("https://informers.example.com", edge).replace("<READ_TOKEN>", readToken), { mode: 0o600 });
    const names = async (config: KubectlOptions["config"], args: string[]) =>
      (await kubectlJson<KubeList>([...args, "get", "pods", "-A", "-o", "json"], { config })).items.map(identity);
    const tls = ["--insecure-skip-tls-verify"]; // the e2e front's certificate is self-signed
    for (const name of CLUSTERS) expect(await names({ kubeconfig: path }, [...tls, "--context", name]), name).toEqual(await names(kubeconfig, ["--context", `${name}-server`]));
    expect(await names({ kubeconfig: path }, [...tls, "--context", "default"])).toEqual(await names("fake", []));
  });

  it("answers a context of an unknown cluster with NotFound, the Status naming the cluster", async () => {
    // kubectl prints client-go's generic text for a 404 on discovery, whatever the server's Status
    // says (as against any server without /api); at -v=8 it logs the Status, which names the cluster.
    const result = await kubectl(ctx("ghost", ["get", "pods", "-A", "-v=8"]), { config: kubeconfig });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n").at(-1)).toBe("Error from server (NotFound): the server could not find the requested resource");
    expect(result.stderr).toMatch(/GET https:\/\/\S+\/k8s\/clusters\/ghost\/api\?timeout=/);
    expect(result.stderr).toContain("Response Status: 404 Not Found");
    // klog writes the body as a quoted string: `"Response Body" body="{\"kind\":…}"`.
    const logged = /"Response Body" body="((?:[^"\\]|\\.)*)"/.exec(result.stderr);
    expect(logged, result.stderr.slice(-2000)).not.toBeNull();
    expect(JSON.parse(JSON.parse(`"${logged![1]}"`) as string)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'cluster "ghost" not found',
      reason: "NotFound",
      details: { name: "ghost", kind: "clusters" },
      code: 404,
    });
  });
});
