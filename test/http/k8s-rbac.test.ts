/**
 * `/k8s` reads of an `rbac` cluster are authorized by the member cluster's own RBAC, as
 * kube-apiserver authorizes them (issue 31 item 3): each user reads exactly what its bindings allow,
 * refusals are the server's 403 Status word for word, reviews tell the truth, RBAC changes upstream
 * take effect in seconds (open watches included), and an rbac cluster whose RBAC cannot be read
 * fails closed. On the code before it, every reader of the cluster read everything.
 */
import { describe, expect, it } from "vitest";
import { podReaderBinding } from "../fake-apiserver/bootstrap-rbac.ts";
import { rbacCluster } from "../helpers/rbac-cluster.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";
import { send, unique } from "../helpers/clusters.ts";
import { readToEnd } from "../helpers/watch-lines.ts";

type Status = { kind: string; code: number; reason: string; message: string; details?: Record<string, unknown> };
const names = async (response: Response) => ((await response.json()) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name).sort();

describe("/k8s on an rbac cluster (issue 31)", () => {
  it("lets each user read exactly its own namespaces, refusing the rest with kube-apiserver's Status", async () => {
    const { cluster, as, remove } = await rbacCluster();
    const api = `/k8s/clusters/${cluster}/api/v1`;

    expect(await names(await as("alice", `${api}/namespaces/team-a/pods`))).toEqual(["team-a-pod-1", "team-a-pod-2"]);
    expect(await names(await as("bob", `${api}/namespaces/team-b/pods`))).toEqual(["team-b-pod-1", "team-b-pod-2"]);
    expect((await as("alice", `${api}/namespaces/team-a/pods/team-a-pod-1`)).status).toBe(200);

    const list = await as("alice", `${api}/namespaces/team-b/pods`);
    expect(list.status).toBe(403);
    expect(await list.json()).toMatchObject({
      kind: "Status",
      code: 403,
      reason: "Forbidden",
      message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"',
      details: { kind: "pods" },
    });
    const get = (await (await as("alice", `${api}/namespaces/team-b/pods/team-b-pod-1`)).json()) as Status;
    expect(get).toMatchObject({ code: 403, message: 'pods "team-b-pod-1" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"', details: { name: "team-b-pod-1", kind: "pods" } });
    // A cluster-wide list needs a cluster-wide grant, as on the server.
    const wide = (await (await as("alice", `${api}/pods`)).json()) as Status;
    expect(wide).toMatchObject({ code: 403, message: 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope' });
    // Tables and metadata-only alike; a watch too; a resource that is not even served is refused first.
    for (const accept of ["application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"]) {
      expect((await as("alice", `${api}/namespaces/team-b/pods`, { headers: { accept } })).status).toBe(403);
      expect((await as("alice", `${api}/namespaces/team-a/pods`, { headers: { accept } })).status).toBe(200);
    }
    expect((await as("alice", `${api}/namespaces/team-b/pods?watch=1`)).status).toBe(403);
    expect(((await (await as("alice", `${api}/namespaces/team-a/secrets`)).json()) as Status).code).toBe(403);
    // Another resource in her own namespace: no rule grants it.
    expect((await as("alice", `/k8s/clusters/${cluster}/apis/apps/v1/namespaces/team-a/deployments`)).status).toBe(403);

    // system:masters reads everything (the server's privileged group); a user bound to nothing, nothing but discovery.
    expect(await names(await as("root", `${api}/pods`))).toEqual(["team-a-pod-1", "team-a-pod-2", "team-b-pod-1", "team-b-pod-2"]);
    expect((await as("nobody", `${api}/namespaces/team-a/pods`)).status).toBe(403);
    for (const path of ["/api", "/apis", "/api/v1", "/version"]) expect((await as("nobody", `/k8s/clusters/${cluster}${path}`)).status, path).toBe(200);
    // kubectl --as: refused rather than answered as the caller under another's name.
    const impersonated = await as("alice", `${api}/namespaces/team-a/pods`, { headers: { "impersonate-user": "bob" } });
    expect(impersonated.status).toBe(403);
    expect(((await impersonated.json()) as Status).message).toContain("impersonation (impersonate-user) is not supported");
    await remove();
  });

  it("answers SelfSubjectAccessReview and SelfSubjectRulesReview from the cluster's RBAC", async () => {
    const { cluster, as, remove } = await rbacCluster();
    const review = async (reader: "alice" | "bob", kind: string, spec: unknown) => {
      const response = await as(reader, `/k8s/clusters/${cluster}/apis/authorization.k8s.io/v1/${kind}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiVersion: "authorization.k8s.io/v1", spec }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { status: Record<string, unknown> }).status;
    };
    const canI = (reader: "alice" | "bob", verb: string, namespace: string) =>
      review(reader, "selfsubjectaccessreviews", { resourceAttributes: { verb, resource: "pods", namespace } });
    expect(await canI("alice", "list", "team-a")).toMatchObject({ allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-reads-pods/team-a" of Role "pod-reader" to User "alice"' });
    expect((await canI("alice", "list", "team-b")).allowed).toBe(false);
    expect((await canI("bob", "watch", "team-b")).allowed).toBe(true);
    expect((await canI("alice", "list", "")).allowed).toBe(false);
    // Writes stay refused whatever RBAC says: the cache is read-only.
    expect((await canI("alice", "delete", "team-a")).allowed).toBe(false);

    const rules = await review("alice", "selfsubjectrulesreviews", { namespace: "team-a" });
    expect(rules.resourceRules).toContainEqual({ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods"] });
    // The bootstrap system:basic-user rules grant only `create`: no read verb, not listed.
    expect(JSON.stringify(rules.resourceRules)).not.toContain("selfsubjectaccessreviews");
    expect(rules.nonResourceRules).toContainEqual(expect.objectContaining({ nonResourceURLs: expect.arrayContaining(["/api", "/version"]) }));
    expect((await review("alice", "selfsubjectrulesreviews", { namespace: "team-b" })).resourceRules).not.toContainEqual(expect.objectContaining({ resources: ["pods"] }));
    await remove();
  });

  it("follows RBAC changes upstream within seconds, and ends an open watch whose RoleBinding is deleted", async () => {
    const { fake, cluster, as, remove } = await rbacCluster();
    const api = `/k8s/clusters/${cluster}/api/v1`;
    // A binding created upstream: bob may read team-a once the informers see it.
    await fake.create("rolebindings", podReaderBinding("team-a", "bob"));
    await waitFor("bob's new RoleBinding to take effect", async () => (await as("bob", `${api}/namespaces/team-a/pods`)).status === 200, 15_000);

    const rv = ((await (await as("alice", `${api}/namespaces/team-a/pods`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const watch = await as("alice", `${api}/namespaces/team-a/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=60`);
    expect(watch.status).toBe(200);
    const ended = readToEnd(watch.body!, 30_000);
    await fake.delete("rolebindings", { metadata: { name: "alice-reads-pods", namespace: "team-a" } });
    // The watch ends (a normal end of body), long before its 60 s timeout; a new one is refused.
    expect(await ended).not.toBe("open");
    expect(await ended).not.toBe("broken");
    expect((await as("alice", `${api}/namespaces/team-a/pods?watch=1&resourceVersion=${rv}`)).status).toBe(403);
    expect((await as("alice", `${api}/namespaces/team-a/pods`)).status).toBe(403);
    await remove();
  });

  it("fails closed: while the cluster's RBAC cannot be read whole, reads answer 503, never objects", async () => {
    const fake = await newCluster();
    await fake.fault({ kind: "status", resource: "rolebindings", code: 500, count: 1_000_000 });
    const cluster = unique("rbac-closed");
    expect((await send("PUT", `/clusters/${cluster}`, { server: fake.url, authorization: "rbac" })).status).toBe(201);
    expect((await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 3 })).status).toBe(201);
    const { as } = await rbacCluster("rbac-peer"); // a deployment whose TOKENS know alice
    const response = await as("alice", `/k8s/clusters/${cluster}/api/v1/namespaces/team-a/pods`);
    expect(response.status).toBe(503);
    // system:masters passes ahead of RBAC on the server: it needs no RBAC objects to read.
    expect((await as("root", `/k8s/clusters/${cluster}/api/v1/namespaces/team-a/pods`)).status).not.toBe(503);
    expect(((await response.json()) as Status).message).toContain("cannot be read whole");
    expect(response.headers.get("retry-after")).toBe("5");
    expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
  });
});
