// The fake Kubernetes API server, driven from workerd over HTTP exactly as the informer will use it:
// list/watch semantics of a real kube-apiserver (reference §1), its control API, and every fault kind.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configMap, deployment, FakeApiError, FakeCluster, namespace, node, pod, widget } from "./client.ts";
import type { FakeObject } from "./types.ts";
import { WatchReader } from "./watch-reader.ts";

/** 1.32 annotates the initial-events-end bookmark with an empty list of the answer's type, base64. */
const POD_LIST_BLUEPRINT = { "kubernetes.io/initial-events-list-blueprint": Buffer.from('{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}').toString("base64") };

const BASE = env.FAKE_APISERVER_URL;
const TOO_OLD_LIST = "The resourceVersion for the provided list is too old.";
const INCONSISTENT_CONTINUE_START = "The provided continue parameter is too old to display a consistent list result.";

// `any`: assertions read arbitrary fields of Kubernetes JSON.
async function getJson(cluster: FakeCluster, path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await cluster.kube(path, init);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

function watch(cluster: FakeCluster, path: string, init?: RequestInit): Promise<WatchReader> {
  return WatchReader.open(`${cluster.url}${path}`, init);
}

const names = (items: FakeObject[]): string[] => items.map((o) => o.metadata.name!);

async function podsCluster(count: number, ns = "ns"): Promise<FakeCluster> {
  const cluster = await FakeCluster.create(BASE);
  await cluster.apply(
    Array.from({ length: count }, (_, i) => ({
      op: "create" as const,
      resource: "pods",
      object: pod({ name: `p${String(i).padStart(2, "0")}`, namespace: ns, labels: { app: i % 2 ? "api" : "web" } }),
    })),
  );
  return cluster;
}

describe("discovery and the default cluster", () => {
  it("serves /version, /api, /api/v1, /apis and /apis/{group}/{version} shaped like a kube-apiserver", async () => {
    const root = new FakeCluster(BASE);
    expect((await getJson(root, "/version")).body).toMatchObject({ major: "1", minor: expect.any(String), gitVersion: expect.stringMatching(/^v1\./) });
    expect((await getJson(root, "/api")).body).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const core = (await getJson(root, "/api/v1")).body;
    expect(core).toMatchObject({ kind: "APIResourceList", groupVersion: "v1" });
    expect(core.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "pods", namespaced: true, kind: "Pod", verbs: expect.arrayContaining(["get", "list", "watch"]) }),
        expect.objectContaining({ name: "namespaces", namespaced: false, kind: "Namespace" }),
        expect.objectContaining({ name: "nodes", namespaced: false, kind: "Node" }),
        expect.objectContaining({ name: "configmaps", namespaced: true, kind: "ConfigMap" }),
      ]),
    );
    const groups = (await getJson(root, "/apis")).body;
    expect(groups.kind).toBe("APIGroupList");
    expect(groups.groups.map((g: { name: string }) => g.name)).toEqual(["apps", "batch", "networking.k8s.io", "autoscaling", "rbac.authorization.k8s.io", "example.com"]);
    expect((await getJson(root, "/apis/apps")).body).toMatchObject({ kind: "APIGroup", name: "apps", preferredVersion: { groupVersion: "apps/v1" } });
    expect((await getJson(root, "/apis/apps/v1")).body).toMatchObject({
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: "apps/v1",
      resources: expect.arrayContaining([expect.objectContaining({ name: "deployments", kind: "Deployment", namespaced: true })]),
    });
    expect((await getJson(root, "/apis/autoscaling")).body).toMatchObject({ preferredVersion: { groupVersion: "autoscaling/v2" } });
    expect((await getJson(root, "/apis/example.com/v1")).body.resources).toEqual([
      expect.objectContaining({ name: "widgets", kind: "Widget", namespaced: true }),
      expect.objectContaining({ name: "gadgets", kind: "Gadget", namespaced: true }),
      // A custom resource may take a built-in's plural and kind in its own group.
      expect.objectContaining({ name: "pods", kind: "Pod", namespaced: true }),
    ]);
    const missing = await getJson(root, "/apis/nope.io/v1");
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: "Status", reason: "NotFound", code: 404 });
  });

  it("serves the demo data of the default cluster at the root paths", async () => {
    const root = new FakeCluster(BASE);
    const web = (await getJson(root, "/api/v1/namespaces/demo/pods?labelSelector=app%3Dweb")).body;
    expect(web.kind).toBe("PodList");
    expect(web.items).toHaveLength(3);
    expect(names((await root.state("namespaces")).items)).toEqual(expect.arrayContaining(["default", "demo", "kube-system", "payments"]));
    expect((await root.state("deployments")).items.length).toBeGreaterThanOrEqual(4);
    expect((await root.state("nodes")).items.length).toBeGreaterThanOrEqual(3);
  });
});

describe("objects and resource versions", () => {
  it("stamps every write with the next revision of one cluster-wide counter", async () => {
    const cluster = await FakeCluster.create(BASE);
    const start = BigInt(await cluster.revision());
    const p = await cluster.create("pods", pod({ name: "a", namespace: "ns" }));
    const cm = await cluster.create("configmaps", configMap({ name: "c", namespace: "ns" }));
    const ns = await cluster.create("namespaces", namespace({ name: "ns" }));
    expect([p, cm, ns].map((o) => o.metadata.resourceVersion)).toEqual([start + 1n, start + 2n, start + 3n].map(String));
    expect(p.metadata).toMatchObject({
      name: "a",
      namespace: "ns",
      uid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      generation: 1,
      creationTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(ns.metadata.namespace).toBeUndefined();
    expect(p.kind).toBeUndefined(); // returned as a LIST would return it

    const relabeled = await cluster.update("pods", { ...p, metadata: { ...p.metadata, labels: { x: "y" } } });
    expect(relabeled.metadata).toMatchObject({ resourceVersion: String(start + 4n), generation: 1, uid: p.metadata.uid });
    const respecced = await cluster.update("pods", { ...relabeled, spec: { containers: [{ name: "main", image: "nginx:2" }] } });
    expect(respecced.metadata.generation).toBe(2);
    const gone = await cluster.delete("pods", respecced);
    expect(gone.metadata.resourceVersion).toBe(String(start + 6n));
    expect(await cluster.revision()).toBe(String(start + 6n));
    expect((await cluster.state("pods")).items).toEqual([]);
  });

  it("answers 409 to a stale resourceVersion on update and to a duplicate create, 404 to a missing object", async () => {
    const cluster = await FakeCluster.create(BASE);
    const first = await cluster.create("pods", pod({ name: "a" }));
    await cluster.update("pods", first);
    const stale = await cluster.update("pods", first).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(FakeApiError);
    expect((stale as FakeApiError).status).toBe(409);
    expect((stale as FakeApiError).body).toMatchObject({ reason: "Conflict" });
    const duplicate = (await cluster.create("pods", pod({ name: "a" })).catch((e: unknown) => e)) as FakeApiError;
    expect([duplicate.status, (duplicate.body as { reason: string }).reason]).toEqual([409, "AlreadyExists"]);
    const missing = (await cluster.delete("pods", pod({ name: "zz" })).catch((e: unknown) => e)) as FakeApiError;
    expect(missing.status).toBe(404);
    const upserted = await cluster.upsert("pods", { ...first, metadata: { ...first.metadata, resourceVersion: "1" } });
    expect(upserted.metadata.uid).toBe(first.metadata.uid);
  });

  it("gets one object by name with kind and apiVersion, and answers 404 with a NotFound Status", async () => {
    const cluster = await FakeCluster.create(BASE);
    await cluster.create("deployments", deployment({ name: "web", namespace: "ns" }));
    const found = await getJson(cluster, "/apis/apps/v1/namespaces/ns/deployments/web");
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ kind: "Deployment", apiVersion: "apps/v1", metadata: { name: "web", namespace: "ns" } });
    const missing = await getJson(cluster, "/apis/apps/v1/namespaces/ns/deployments/nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'deployments.apps "nope" not found',
      reason: "NotFound",
      details: { name: "nope", group: "apps", kind: "deployments" },
      code: 404,
    });
  });

  it("serves namespaced collections with and without the namespace segment, and no namespace on cluster-scoped ones", async () => {
    const cluster = await FakeCluster.create(BASE);
    await cluster.apply([
      { op: "create", resource: "pods", object: pod({ name: "a", namespace: "one" }) },
      { op: "create", resource: "pods", object: pod({ name: "b", namespace: "two" }) },
      { op: "create", resource: "nodes", object: node({ name: "n1" }) },
    ]);
    expect(names((await getJson(cluster, "/api/v1/pods")).body.items)).toEqual(["a", "b"]);
    expect(names((await getJson(cluster, "/api/v1/namespaces/two/pods")).body.items)).toEqual(["b"]);
    expect((await getJson(cluster, "/api/v1/namespaces/three/pods")).body.items).toEqual([]);
    expect(names((await getJson(cluster, "/api/v1/nodes")).body.items)).toEqual(["n1"]);
    expect((await getJson(cluster, "/api/v1/nodes/n1")).body.kind).toBe("Node");
    expect((await getJson(cluster, "/api/v1/namespaces/one/nodes")).status).toBe(404);
  });

  it("keeps clusters isolated from each other", async () => {
    const a = await FakeCluster.create(BASE);
    const b = await FakeCluster.create(BASE, { id: `iso-${crypto.randomUUID().slice(0, 8)}` });
    await a.create("pods", pod({ name: "only-in-a" }));
    expect((await b.state("pods")).items).toEqual([]);
    expect((await getJson(b, "/api/v1/pods")).body.items).toEqual([]);
    const taken = (await FakeCluster.create(BASE, { id: b.id }).catch((e: unknown) => e)) as FakeApiError;
    expect(taken.status).toBe(409);
    await b.dispose();
    expect((await b.kube("/api/v1/pods")).status).toBe(404);
  });

  it("carries revisions beyond 2^53 exactly, through lists, continue tokens and watches", async () => {
    const cluster = await FakeCluster.create(BASE, { startRevision: "9007199254740993" });
    const a = await cluster.create("pods", pod({ name: "a" }));
    await cluster.create("pods", pod({ name: "b" }));
    expect(a.metadata.resourceVersion).toBe("9007199254740994");
    const page1 = (await getJson(cluster, "/api/v1/pods?limit=1")).body;
    expect(page1.metadata.resourceVersion).toBe("9007199254740995");
    const page2 = (await getJson(cluster, `/api/v1/pods?limit=1&continue=${page1.metadata.continue}`)).body;
    expect([page2.metadata.resourceVersion, names(page2.items)]).toEqual(["9007199254740995", ["b"]]);
    const w = await watch(cluster, "/api/v1/pods?watch=1&resourceVersion=9007199254740994");
    const [added] = await w.events(1);
    expect(added!.object.metadata).toMatchObject({ name: "b", resourceVersion: "9007199254740995" });
    w.cancel();
  });

  it("accepts create, update and delete through the Kubernetes API", async () => {
    const cluster = await FakeCluster.create(BASE);
    const json = { "content-type": "application/json" };
    const created = await getJson(cluster, "/api/v1/namespaces/ns/configmaps", {
      method: "POST",
      headers: json,
      body: JSON.stringify(configMap({ name: "c", namespace: "ns", data: { a: "1" } })),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: "ConfigMap", metadata: { name: "c", namespace: "ns" } });
    const updated = await getJson(cluster, "/api/v1/namespaces/ns/configmaps/c", {
      method: "PUT",
      headers: json,
      body: JSON.stringify({ ...created.body, data: { a: "2" } }),
    });
    expect(updated.body.data).toEqual({ a: "2" });
    const conflict = await getJson(cluster, "/api/v1/namespaces/ns/configmaps/c", { method: "PUT", headers: json, body: JSON.stringify(created.body) });
    expect(conflict.status).toBe(409);
    const protobuf = await cluster.kube("/api/v1/namespaces/ns/configmaps", {
      method: "POST",
      headers: { "content-type": "application/vnd.kubernetes.protobuf" },
      body: "k8s\u0000",
    });
    expect(protobuf.status).toBe(415);
    const deleted = await getJson(cluster, "/api/v1/namespaces/ns/configmaps/c", { method: "DELETE" });
    expect(deleted.body).toMatchObject({ kind: "Status", status: "Success", details: { name: "c", kind: "configmaps" } });
    expect((await cluster.state("configmaps")).items).toEqual([]);
  });
});

describe("list", () => {
  it("returns items in key order without kind/apiVersion, except for custom resources", async () => {
    const cluster = await FakeCluster.create(BASE);
    await cluster.apply([
      { op: "create", resource: "pods", object: pod({ name: "b", namespace: "x" }) },
      { op: "create", resource: "pods", object: pod({ name: "a", namespace: "y" }) },
      { op: "create", resource: "pods", object: pod({ name: "c", namespace: "x" }) },
      { op: "create", resource: "widgets", object: widget({ name: "w", namespace: "x" }) },
    ]);
    const list = (await getJson(cluster, "/api/v1/pods")).body;
    expect(list).toMatchObject({ kind: "PodList", apiVersion: "v1", metadata: { resourceVersion: await cluster.revision() } });
    expect(list.items.map((o: FakeObject) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(["x/b", "x/c", "y/a"]);
    expect(list.items[0].kind).toBeUndefined();
    expect(list.items[0].apiVersion).toBeUndefined();
    expect(list.metadata.continue).toBeUndefined();
    const widgets = (await getJson(cluster, "/apis/example.com/v1/widgets")).body;
    expect(widgets.kind).toBe("WidgetList");
    expect(widgets.items[0]).toMatchObject({ apiVersion: "example.com/v1", kind: "Widget" });
  });

  it("pages with limit and continue at the snapshot of the first page while writes go on", async () => {
    const cluster = await podsCluster(10);
    const page1 = (await getJson(cluster, "/api/v1/pods?limit=4")).body;
    const snapshot = page1.metadata.resourceVersion;
    expect(names(page1.items)).toEqual(["p00", "p01", "p02", "p03"]);
    expect(page1.metadata.remainingItemCount).toBe(6);
    // Concurrent writes after page 1: none of them may show up in later pages.
    await cluster.apply([
      { op: "delete", resource: "pods", object: pod({ name: "p05", namespace: "ns" }) },
      { op: "create", resource: "pods", object: pod({ name: "p04a", namespace: "ns" }) },
      { op: "update", resource: "pods", object: pod({ name: "p06", namespace: "ns", labels: { changed: "yes" } }) },
      { op: "create", resource: "pods", object: pod({ name: "p99", namespace: "ns" }) },
    ]);
    const page2 = (await getJson(cluster, `/api/v1/pods?limit=4&continue=${page1.metadata.continue}`)).body;
    expect(names(page2.items)).toEqual(["p04", "p05", "p06", "p07"]);
    expect(page2.items[2].metadata.labels).toEqual({ app: "web" });
    expect(page2.metadata.remainingItemCount).toBe(2);
    const page3 = (await getJson(cluster, `/api/v1/pods?limit=4&continue=${page2.metadata.continue}`)).body;
    expect(names(page3.items)).toEqual(["p08", "p09"]);
    expect(page3.metadata.continue).toBeUndefined();
    expect(page3.metadata.remainingItemCount).toBeUndefined();
    expect([page1, page2, page3].map((p) => p.metadata.resourceVersion)).toEqual([snapshot, snapshot, snapshot]);
  });

  it("ignores limit at resourceVersion=0 (the watch cache) and honours it when resourceVersion is unset", async () => {
    const cluster = await podsCluster(5);
    const cached = (await getJson(cluster, "/api/v1/pods?resourceVersion=0&limit=2")).body;
    expect(cached.items).toHaveLength(5);
    expect(cached.metadata.continue).toBeUndefined();
    const recent = (await getJson(cluster, "/api/v1/pods?limit=2")).body;
    expect(recent.items).toHaveLength(2);
    expect(recent.metadata).toMatchObject({ continue: expect.any(String), remainingItemCount: 3 });
  });

  it("paginates resourceVersion=0 lists when the watch cache is off", async () => {
    const cluster = await podsCluster(5);
    await cluster.settings({ watchCache: false });
    const page = (await getJson(cluster, "/api/v1/pods?resourceVersion=0&limit=2")).body;
    expect(page.items).toHaveLength(2);
    expect(page.metadata.continue).toEqual(expect.any(String));
  });

  it("serves resourceVersion=N without limit as not-older-than N, and answers 504 to a future N", async () => {
    const cluster = await podsCluster(3);
    const old = await cluster.revision();
    await cluster.create("pods", pod({ name: "later", namespace: "ns" }));
    const current = await cluster.revision();
    const list = (await getJson(cluster, `/api/v1/pods?resourceVersion=${old}`)).body;
    expect(list.metadata.resourceVersion).toBe(current);
    expect(list.items).toHaveLength(4);
    const future = String(BigInt(current) + 10n);
    const tooLarge = await getJson(cluster, `/api/v1/pods?resourceVersion=${future}`);
    expect(tooLarge.status).toBe(504);
    expect(tooLarge.headers.get("retry-after")).toBe("1");
    expect(tooLarge.body).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: `Timeout: Too large resource version: ${future}, current: ${current}`,
      reason: "Timeout",
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
      code: 504,
    });
  });

  it("serves resourceVersion=N with limit as exactly snapshot N, and answers 410 once N is compacted", async () => {
    const cluster = await podsCluster(3);
    const before = await cluster.revision();
    await cluster.delete("pods", pod({ name: "p00", namespace: "ns" }));
    await cluster.update("pods", pod({ name: "p01", namespace: "ns", labels: { v: "2" } }));
    const exact = (await getJson(cluster, `/api/v1/pods?resourceVersion=${before}&limit=10`)).body;
    expect(exact.metadata.resourceVersion).toBe(before);
    expect(names(exact.items)).toEqual(["p00", "p01", "p02"]);
    expect(exact.items[1].metadata.labels).toEqual({ app: "api" });
    const viaMatch = (await getJson(cluster, `/api/v1/pods?resourceVersion=${before}&resourceVersionMatch=Exact`)).body;
    expect(names(viaMatch.items)).toEqual(["p00", "p01", "p02"]);
    await cluster.compact();
    const compacted = await getJson(cluster, `/api/v1/pods?resourceVersion=${before}&limit=10`);
    expect(compacted.status).toBe(410);
    expect(compacted.body).toMatchObject({ kind: "Status", reason: "Expired", code: 410, message: TOO_OLD_LIST });
    // Not-older-than reads are still fine after compaction.
    expect((await getJson(cluster, `/api/v1/pods?resourceVersion=${before}`)).status).toBe(200);
  });

  it("answers 410 Expired with an inconsistent continue token once a page's snapshot is compacted", async () => {
    const cluster = await podsCluster(6);
    const page1 = (await getJson(cluster, "/api/v1/pods?limit=2")).body;
    await cluster.create("pods", pod({ name: "p00a", namespace: "ns" }));
    await cluster.compact();
    const expired = await getJson(cluster, `/api/v1/pods?limit=2&continue=${page1.metadata.continue}`);
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Expired", code: 410 });
    expect(expired.body.message).toMatch(new RegExp(`^${INCONSISTENT_CONTINUE_START}`));
    // The inconsistent token continues after the same key, at the latest revision.
    const rest = (await getJson(cluster, `/api/v1/pods?limit=10&continue=${expired.body.metadata.continue}`)).body;
    expect(names(rest.items)).toEqual(["p02", "p03", "p04", "p05"]);
    expect(rest.metadata.resourceVersion).toBe(await cluster.revision());
  });

  it.each([
    ["continue with resourceVersionMatch", "limit=1&continue=TOKEN&resourceVersionMatch=NotOlderThan&resourceVersion=1", 422, /resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided/],
    ["resourceVersionMatch without resourceVersion", "resourceVersionMatch=NotOlderThan", 422, /resourceVersionMatch is forbidden unless resourceVersion is provided/],
    ["an unknown resourceVersionMatch", "resourceVersion=1&resourceVersionMatch=Newest", 422, /Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""/],
    ["Exact with resourceVersion=0", "resourceVersion=0&resourceVersionMatch=Exact", 422, /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/],
    ["sendInitialEvents on a list", "sendInitialEvents=true", 422, /sendInitialEvents is forbidden for list/],
    ["resourceVersionMatch on a plain watch", "watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan", 422, /resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided/],
    ["sendInitialEvents without NotOlderThan", "watch=1&sendInitialEvents=true", 422, /sendInitialEvents requires setting resourceVersionMatch to NotOlderThan/],
    ["continue with resourceVersion", "limit=1&continue=TOKEN&resourceVersion=5", 400, /specifying resource version is not allowed when using continue/],
    ["a garbled continue token", "limit=1&continue=bm90LWEtdG9rZW4", 400, /invalid continue token/],
    ["a bad label selector", "labelSelector=app%20in%20(", 400, /label selector "app in \(": expected a value/],
    ["an unsupported field selector", "fieldSelector=spec.containers=x", 400, /field label not supported: spec.containers/],
    ["a non-numeric resourceVersion", "resourceVersion=abc", 400, /invalid resource version/],
  ])("refuses %s like the apiserver (%s → %i)", async (_name, query, code, message) => {
    const cluster = await podsCluster(2);
    const token = (await getJson(cluster, "/api/v1/pods?limit=1")).body.metadata.continue;
    const answer = await getJson(cluster, `/api/v1/pods?${query.replace("TOKEN", token)}`);
    expect(answer.status).toBe(code);
    expect(answer.body).toMatchObject({ kind: "Status", status: "Failure", code, reason: code === 422 ? "Invalid" : "BadRequest" });
    expect(answer.body.message).toMatch(message);
    if (code === 422) {
      expect(answer.body.details).toMatchObject({ group: "meta.k8s.io", kind: "ListOptions", causes: [expect.objectContaining({ field: expect.any(String) })] });
    }
  });

  it("filters by label and field selectors, and gives no remainingItemCount with selectors", async () => {
    const cluster = await FakeCluster.create(BASE);
    await cluster.apply([
      { op: "create", resource: "pods", object: pod({ name: "a", namespace: "x", nodeName: "n1", labels: { app: "web" } }) },
      { op: "create", resource: "pods", object: pod({ name: "b", namespace: "x", nodeName: "n2", labels: { app: "api" }, phase: "Pending" }) },
      { op: "create", resource: "pods", object: pod({ name: "c", namespace: "y", nodeName: "n1", labels: { app: "web" } }) },
      { op: "create", resource: "pods", object: pod({ name: "d", namespace: "y", labels: { app: "web" } }) },
    ]);
    const list = async (q: string) => names((await getJson(cluster, `/api/v1/pods?${q}`)).body.items);
    expect(await list("labelSelector=app%3Dweb")).toEqual(["a", "c", "d"]);
    expect(await list("labelSelector=app%20notin%20(web)")).toEqual(["b"]);
    expect(await list("fieldSelector=spec.nodeName%3Dn1")).toEqual(["a", "c"]);
    expect(await list("fieldSelector=spec.nodeName%3D")).toEqual(["d"]);
    expect(await list("fieldSelector=status.phase!%3DRunning,metadata.namespace%3Dx")).toEqual(["b"]);
    expect(await list("labelSelector=app%3Dweb&fieldSelector=metadata.namespace%3Dy")).toEqual(["c", "d"]);
    const page = (await getJson(cluster, "/api/v1/pods?labelSelector=app%3Dweb&limit=1")).body;
    expect(page.metadata.continue).toEqual(expect.any(String));
    expect(page.metadata.remainingItemCount).toBeUndefined();
  });
});

describe("watch", () => {
  it("streams only changes after the requested resourceVersion, in order, with kind/apiVersion", async () => {
    const cluster = await podsCluster(2);
    const from = await cluster.revision();
    const a = await cluster.create("pods", pod({ name: "a", namespace: "ns" }));
    const w = await watch(cluster, `/api/v1/namespaces/ns/pods?watch=true&resourceVersion=${from}`);
    expect(w.response.headers.get("content-type")).toBe("application/json");
    const updated = await cluster.update("pods", { ...a, metadata: { ...a.metadata, labels: { v: "2" } } });
    const gone = await cluster.delete("pods", updated);
    await cluster.create("pods", pod({ name: "elsewhere", namespace: "other" }));
    const events = await w.events(3);
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion])).toEqual([
      ["ADDED", "a", a.metadata.resourceVersion],
      ["MODIFIED", "a", updated.metadata.resourceVersion],
      ["DELETED", "a", gone.metadata.resourceVersion],
    ]);
    expect(events[0]!.object).toMatchObject({ kind: "Pod", apiVersion: "v1" });
    expect(events[2]!.object.metadata.labels).toEqual({ v: "2" }); // the last state
    // Nothing from namespace "other": the next event is one made after "elsewhere", in "ns".
    const sentinel = await cluster.create("pods", pod({ name: "sentinel", namespace: "ns" }));
    expect((await w.events(1)).map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion])).toEqual([["ADDED", "sentinel", sentinel.metadata.resourceVersion]]);
    w.cancel();
  });

  it("answers a watch from a compacted resourceVersion with HTTP 200 and one 410 ERROR event", async () => {
    const cluster = await podsCluster(2);
    const old = await cluster.revision();
    await cluster.create("pods", pod({ name: "x", namespace: "ns" }));
    const { compactedRevision } = await cluster.compact();
    const w = await watch(cluster, `/api/v1/pods?watch=1&resourceVersion=${Number(old) - 1}`);
    const { events, ending } = await w.rest();
    expect(events).toEqual([
      {
        type: "ERROR",
        object: {
          kind: "Status",
          apiVersion: "v1",
          metadata: {},
          status: "Failure",
          message: `too old resource version: ${Number(old) - 1} (${compactedRevision})`,
          reason: "Expired",
          code: 410,
        },
      },
    ]);
    expect(ending.kind).toBe("end");
  });

  it("starts an RV-less watch with the current state, then the initial-events-end bookmark when bookmarks are allowed", async () => {
    const cluster = await podsCluster(3);
    const plain = await watch(cluster, "/api/v1/pods?watch=1");
    expect((await plain.events(3)).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ["ADDED", "p00"],
      ["ADDED", "p01"],
      ["ADDED", "p02"],
    ]);
    // No bookmark after them (none allowed): the next event is a later change.
    const sentinel = await cluster.create("pods", pod({ name: "sentinel", namespace: "ns" }));
    expect((await plain.events(1)).map((e) => [e.type, e.object.metadata.name])).toEqual([["ADDED", sentinel.metadata.name]]);
    plain.cancel();
    const current = await cluster.revision();
    const w = await watch(cluster, "/api/v1/pods?watch=1&resourceVersion=0&allowWatchBookmarks=true");
    const events = await w.events(5); // the three pods and the sentinel, then the bookmark
    expect(events[4]).toEqual({
      type: "BOOKMARK",
      object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: current, annotations: { "k8s.io/initial-events-end": "true", ...POD_LIST_BLUEPRINT } } },
    });
    const later = await cluster.create("pods", pod({ name: "later", namespace: "ns" }));
    expect((await w.events(1))[0]).toMatchObject({ type: "ADDED", object: { metadata: { resourceVersion: later.metadata.resourceVersion } } });
    w.cancel();
  });

  it("without the WatchList gate sends no initial-events-end bookmark and refuses sendInitialEvents", async () => {
    const cluster = await podsCluster(1);
    await cluster.settings({ watchList: false, bookmarkIntervalMs: 0 });
    const w = await watch(cluster, "/api/v1/pods?watch=1&allowWatchBookmarks=true");
    expect((await w.events(1))[0]!.type).toBe("ADDED");
    // No initial-events-end bookmark: the next event is a later change.
    const sentinel = await cluster.create("pods", pod({ name: "sentinel", namespace: "ns" }));
    expect((await w.events(1)).map((e) => [e.type, e.object.metadata.name])).toEqual([["ADDED", sentinel.metadata.name]]);
    w.cancel();
    const refused = await getJson(cluster, "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true");
    expect(refused.status).toBe(422);
    expect(refused.body.message).toMatch(/sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/);
  });

  it("serves a watch-list from a resourceVersion, and fails a future one with a 504 ERROR event", async () => {
    const cluster = await podsCluster(2);
    const rv = await cluster.revision();
    const w = await watch(cluster, `/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`);
    const events = await w.events(3);
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ADDED", "BOOKMARK"]);
    expect(events[2]!.object.metadata).toEqual({ resourceVersion: rv, annotations: { "k8s.io/initial-events-end": "true", ...POD_LIST_BLUEPRINT } });
    w.cancel();
    const future = String(BigInt(rv) + 5n);
    const f = await watch(cluster, `/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${future}`);
    const { events: errors, ending } = await f.rest();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ type: "ERROR", object: { code: 504, reason: "Timeout", details: { causes: [{ reason: "ResourceVersionTooLarge" }] } } });
    expect(ending.kind).toBe("end");
  });

  it("turns selector transitions into ADDED and DELETED events carrying the new resourceVersion", async () => {
    const cluster = await FakeCluster.create(BASE);
    const a = await cluster.create("pods", pod({ name: "a", namespace: "ns", labels: { app: "api" } }));
    const from = await cluster.revision();
    const w = await watch(cluster, `/api/v1/pods?watch=1&labelSelector=app%3Dweb&resourceVersion=${from}`);
    const f = await watch(cluster, `/api/v1/pods?watch=1&fieldSelector=status.phase%3DPending&resourceVersion=${from}`);
    const toWeb = await cluster.update("pods", { ...a, metadata: { ...a.metadata, labels: { app: "web" } } });
    const stillWeb = await cluster.update("pods", { ...toWeb, metadata: { ...toWeb.metadata, annotations: { n: "1" } } });
    const away = await cluster.update("pods", { ...stillWeb, metadata: { ...stillWeb.metadata, labels: { app: "db" } }, status: { phase: "Pending" } });
    const deleted = await cluster.delete("pods", away);
    expect((await w.events(3)).map((e) => [e.type, e.object.metadata.resourceVersion, e.object.metadata.labels.app])).toEqual([
      ["ADDED", toWeb.metadata.resourceVersion, "web"],
      ["MODIFIED", stillWeb.metadata.resourceVersion, "web"],
      ["DELETED", away.metadata.resourceVersion, "web"], // the old content, the new RV
    ]);
    expect((await f.events(2)).map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([
      ["ADDED", away.metadata.resourceVersion],
      ["DELETED", deleted.metadata.resourceVersion],
    ]);
    // The deletion of a non-matching object is not sent: the next event is a later matching change.
    const sentinel = await cluster.create("pods", pod({ name: "sentinel", namespace: "ns", labels: { app: "web" } }));
    expect((await w.events(1)).map((e) => [e.type, e.object.metadata.name])).toEqual([["ADDED", sentinel.metadata.name]]);
    w.cancel();
    f.cancel();
  });

  it("sends BOOKMARKs at the configured interval and before the timeout, then ends at timeoutSeconds", async () => {
    const cluster = await podsCluster(1);
    await cluster.settings({ bookmarkIntervalMs: 300, bookmarkBeforeTimeoutMs: 200 });
    const rv = await cluster.revision();
    const started = Date.now();
    const w = await watch(cluster, `/api/v1/pods?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=1`);
    // rest()'s deadline only catches a stream that does not end; the server's timer ends it at 1 s.
    const { events, ending } = await w.rest(10_000);
    expect(ending.kind).toBe("end");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    // ~300 ms, ~600 ms, ~800 ms (pre-timeout), ~900 ms
    expect(events.length).toBeGreaterThanOrEqual(3);
    for (const e of events) expect(e).toEqual({ type: "BOOKMARK", object: { kind: "Pod", apiVersion: "v1", metadata: { resourceVersion: rv } } });
    const noBookmarks = await watch(cluster, `/api/v1/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    expect((await noBookmarks.rest(3_000)).events).toEqual([]);
  });

  it("watches one object by name, also through the legacy /watch/ path", async () => {
    const cluster = await podsCluster(3);
    const rv = await cluster.revision();
    const byName = await watch(cluster, `/api/v1/namespaces/ns/pods/p01?watch=1&resourceVersion=${rv}`);
    const legacy = await watch(cluster, `/api/v1/watch/namespaces/ns/pods?resourceVersion=${rv}&labelSelector=app%3Dapi`);
    await cluster.update("pods", pod({ name: "p00", namespace: "ns", labels: { v: "1" } }));
    const p01 = await cluster.update("pods", pod({ name: "p01", namespace: "ns", labels: { app: "api", v: "1" } }));
    for (const w of [byName, legacy]) {
      const [event] = await w.events(1);
      expect([event!.type, event!.object.metadata.name, event!.object.metadata.resourceVersion]).toEqual(["MODIFIED", "p01", p01.metadata.resourceVersion]);
      w.cancel();
    }
  });

  it("ends every open watch of the cluster cleanly on close-watches", async () => {
    const cluster = await podsCluster(1);
    const rv = await cluster.revision();
    const w1 = await watch(cluster, `/api/v1/pods?watch=1&resourceVersion=${rv}`);
    const w2 = await watch(cluster, `/api/v1/namespaces/ns/pods?watch=1&resourceVersion=${rv}`);
    expect((await cluster.info()).openWatches).toBe(2);
    expect(await cluster.closeWatches()).toBe(2);
    expect((await w1.rest()).ending.kind).toBe("end");
    expect((await w2.rest()).ending.kind).toBe("end");
    expect((await cluster.info()).openWatches).toBe(0);
  });
});

describe("faults", () => {
  it("answers an injected Status on list for `count` requests, with Retry-After for 429", async () => {
    const cluster = await podsCluster(1);
    await cluster.fault({ kind: "status", on: "list", code: 429, retryAfterSeconds: 2, count: 2 });
    for (let i = 0; i < 2; i++) {
      const r = await getJson(cluster, "/api/v1/pods");
      expect([r.status, r.headers.get("retry-after"), r.body.reason, r.body.details.retryAfterSeconds]).toEqual([429, "2", "TooManyRequests", 2]);
    }
    expect((await getJson(cluster, "/api/v1/pods")).status).toBe(200);
    await cluster.fault({ kind: "status", on: "list", code: 500 });
    const internal = await getJson(cluster, "/api/v1/pods");
    expect(internal.body).toMatchObject({ kind: "Status", code: 500, reason: "InternalError" });
    expect((await cluster.requests()).map((r) => r.faults)).toEqual([["status"], ["status"], undefined, ["status"]]);
  });

  it("answers an injected Status before a watch stream starts, and leaves lists alone", async () => {
    const cluster = await podsCluster(1);
    await cluster.fault({ kind: "status", on: "watch", code: 503 });
    expect((await getJson(cluster, "/api/v1/pods")).status).toBe(200);
    const refused = await getJson(cluster, "/api/v1/pods?watch=1");
    expect([refused.status, refused.body.reason]).toEqual([503, "ServiceUnavailable"]);
    const fine = await watch(cluster, "/api/v1/pods?watch=1");
    fine.cancel();
  });

  it("drops a watch stream in the middle of a line after N events", async () => {
    const cluster = await podsCluster(4);
    await cluster.fault({ kind: "dropStream", afterEvents: 2 });
    const w = await watch(cluster, "/api/v1/pods?watch=1");
    const { events, ending } = await w.rest();
    expect(events.map((e) => e.object.metadata.name)).toEqual(["p00", "p01"]);
    expect(ending.kind).toBe("broken");
    expect((ending as { partial: string }).partial).toMatch(/^\{"type":"ADDED","object":\{/);
  });

  it("writes one malformed line after N events and carries on", async () => {
    const cluster = await podsCluster(3);
    await cluster.fault({ kind: "malformedLine", afterEvents: 1 });
    const w = await watch(cluster, "/api/v1/pods?watch=1");
    const results = [await w.next(), await w.next(), await w.next(), await w.next()];
    expect(results.map((r) => r.kind)).toEqual(["event", "malformed", "event", "event"]);
    w.cancel();
  });

  it.each([
    [410, "Expired", /^too old resource version: \d+ \(\d+\)$/],
    [500, "InternalError", /^Internal error occurred/],
  ])("sends an ERROR %i event after N events, then ends the stream", async (code, reason, message) => {
    const cluster = await podsCluster(3);
    const rv = await cluster.revision();
    await cluster.fault({ kind: "errorEvent", code, afterEvents: 1 });
    const w = await watch(cluster, `/api/v1/pods?watch=1&resourceVersion=${Number(rv) - 2}`);
    const { events, ending } = await w.rest();
    expect(events.map((e) => e.type)).toEqual(["ADDED", "ERROR"]);
    expect(events[1]!.object).toMatchObject({ kind: "Status", status: "Failure", code, reason });
    expect(events[1]!.object.message).toMatch(message);
    expect(ending.kind).toBe("end");
  });

  it("ends a watch cleanly after N events with closeAfter (0 = right after the head)", async () => {
    const cluster = await podsCluster(3);
    await cluster.fault([{ kind: "closeAfter", events: 2 }, { kind: "closeAfter", events: 0 }]);
    const first = await (await watch(cluster, "/api/v1/pods?watch=1")).rest();
    expect([first.events.length, first.ending.kind]).toEqual([2, "end"]);
    const second = await (await watch(cluster, "/api/v1/pods?watch=1")).rest();
    expect([second.events.length, second.ending.kind]).toEqual([0, "end"]);
  });

  it("expires the next continuation with expireContinue, whatever its age", async () => {
    const cluster = await podsCluster(4);
    await cluster.fault({ kind: "expireContinue" });
    const page1 = (await getJson(cluster, "/api/v1/pods?limit=2")).body; // not a continuation: untouched
    const expired = await getJson(cluster, `/api/v1/pods?limit=2&continue=${page1.metadata.continue}`);
    expect([expired.status, expired.body.reason]).toEqual([410, "Expired"]);
    expect((await getJson(cluster, `/api/v1/pods?limit=2&continue=${page1.metadata.continue}`)).status).toBe(200);
  });

  it("answers 504 Too large resource version to the next list at a specific RV with tooLargeRv", async () => {
    const cluster = await podsCluster(2);
    const rv = await cluster.revision();
    await cluster.fault({ kind: "tooLargeRv" });
    expect((await getJson(cluster, "/api/v1/pods?resourceVersion=0")).status).toBe(200); // RV "0" is exempt
    const tooLarge = await getJson(cluster, `/api/v1/pods?resourceVersion=${rv}`);
    expect(tooLarge.status).toBe(504);
    expect(tooLarge.body.details.causes).toEqual([{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }]);
    expect(tooLarge.body.message).toMatch(new RegExp(`^Timeout: Too large resource version: ${rv}, current: \\d+$`));
    expect((await getJson(cluster, `/api/v1/pods?resourceVersion=${rv}`)).status).toBe(200);
  });

  it("holds a list with delay but answers with the snapshot taken when it arrived", async () => {
    const cluster = await podsCluster(2);
    await cluster.fault({ kind: "delay", on: "list", ms: 400 });
    const started = Date.now();
    const pending = getJson(cluster, "/api/v1/pods");
    // The change is made once the list has arrived (recorded on arrival), however long that takes.
    while (!(await cluster.requests()).some((r) => r.verb === "list")) await new Promise((resolve) => setTimeout(resolve, 10));
    const during = await cluster.create("pods", pod({ name: "during", namespace: "ns" }));
    const list = (await pending).body;
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(names(list.items)).toEqual(["p00", "p01"]);
    expect(BigInt(list.metadata.resourceVersion)).toBeLessThan(BigInt(during.metadata.resourceVersion!));
  });

  it("stalls a list response after N items with stallList, on page 1 or on continuation pages only", async () => {
    const cluster = await podsCluster(4);
    await cluster.fault({ kind: "stallList", afterItems: 1, page: "continue", ms: 300 });
    await cluster.fault({ kind: "stallList", afterItems: 2, page: "first", ms: 300 });
    const started = Date.now();
    const response = await cluster.kube("/api/v1/pods?limit=3");
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while ((text.match(/"name":"p0/g) ?? []).length < 2) text += (await reader.read()).value ?? "";
    expect(text).not.toContain('"name":"p02"'); // held after two items
    expect((await cluster.requests()).at(-1)?.faults).toEqual(["stallList"]);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    const page1 = JSON.parse(text);
    expect(names(page1.items)).toEqual(["p00", "p01", "p02"]);
    const page2 = (await getJson(cluster, `/api/v1/pods?limit=3&continue=${encodeURIComponent(page1.metadata.continue)}`)).body;
    expect(names(page2.items)).toEqual(["p03"]);
    expect(await cluster.faults()).toEqual([]);
  });

  it("scopes faults to a resource, reports the pending ones, and clears them", async () => {
    const cluster = await podsCluster(1);
    await cluster.fault({ kind: "status", code: 500, resource: "configmaps", count: 3 });
    expect((await getJson(cluster, "/api/v1/pods")).status).toBe(200);
    expect((await getJson(cluster, "/api/v1/configmaps")).status).toBe(500);
    expect(await cluster.faults()).toEqual([{ kind: "status", code: 500, resource: "configmaps", count: 2 }]);
    await cluster.clearFaults();
    expect(await cluster.faults()).toEqual([]);
    expect((await getJson(cluster, "/api/v1/configmaps")).status).toBe(200);
  });

  it.each([
    [{ kind: "explode" }, /unknown fault kind/],
    [{ kind: "status", code: 42 }, /code must be an HTTP status code/],
    [{ kind: "delay", ms: -1 }, /ms must be a non-negative integer/],
    [{ kind: "closeAfter" }, /events must be a non-negative integer/],
    [{ kind: "status", code: 500, on: "get" }, /on must be "list" or "watch"/],
    [{ kind: "tooLargeRv", resource: "gizmos" }, /not a resource this server serves/],
  ])("refuses the malformed fault %j with 400", async (fault, message) => {
    const cluster = await FakeCluster.create(BASE);
    const error = (await cluster.fault(fault as never).catch((e: unknown) => e)) as FakeApiError;
    expect(error.status).toBe(400);
    expect(error.message).toMatch(message);
  });
});

describe("control API", () => {
  it("records every Kubernetes request with method, path, query, verb and status, and clears them", async () => {
    const cluster = await podsCluster(1);
    await cluster.kube("/api/v1/namespaces/ns/pods?limit=5&labelSelector=app%3Dweb");
    await cluster.kube("/api/v1/namespaces/ns/pods/p00");
    await cluster.kube("/apis");
    const w = await watch(cluster, "/api/v1/pods?watch=true&resourceVersion=1&timeoutSeconds=5");
    const requests = await cluster.requests();
    expect(requests.map((r) => [r.method, r.path, r.verb, r.status])).toEqual([
      ["GET", "/api/v1/namespaces/ns/pods", "list", 200],
      ["GET", "/api/v1/namespaces/ns/pods/p00", "get", 200],
      ["GET", "/apis", "discovery", 200],
      ["GET", "/api/v1/pods", "watch", 200],
    ]);
    expect(requests[0]!.query).toEqual({ limit: "5", labelSelector: "app=web" });
    expect(requests[0]).toMatchObject({ resource: "pods", namespace: "ns", time: expect.any(Number) });
    expect(requests[3]!.query).toEqual({ watch: "true", resourceVersion: "1", timeoutSeconds: "5" });
    w.cancel();
    await cluster.clearRequests();
    expect(await cluster.requests()).toEqual([]);
  });

  it("requires the cluster's bearer token on Kubernetes requests once one is set", async () => {
    const cluster = await FakeCluster.create(BASE, { token: "s3cret" });
    const denied = await getJson(cluster, "/api/v1/pods");
    expect(denied.status).toBe(401);
    expect(denied.body).toMatchObject({ kind: "Status", reason: "Unauthorized", code: 401 });
    expect((await cluster.kube("/api/v1/pods", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await cluster.kube("/api/v1/pods", { headers: { authorization: "Bearer s3cret" } })).status).toBe(200);
    expect((await cluster.requests()).map((r) => r.status)).toEqual([401, 401, 200]);
    await cluster.settings({ token: null });
    expect((await cluster.kube("/api/v1/pods")).status).toBe(200);
  });

  it("seeds realistic pods of about podBytes", async () => {
    const cluster = await FakeCluster.create(BASE);
    const result = await cluster.seed({ namespaces: 4, podsPerNamespace: 2_500, deployments: 3, podBytes: 3_000 });
    expect(result.created).toMatchObject({ namespaces: 4, deployments: 12, pods: 10_000 });
    expect(result.namespaces).toEqual(["ns-0", "ns-1", "ns-2", "ns-3"]);
    const page = (await getJson(cluster, "/api/v1/namespaces/ns-2/pods?limit=50")).body;
    expect(page.metadata.remainingItemCount).toBe(2_450);
    for (const p of page.items) {
      expect(JSON.stringify(p).length).toBeGreaterThan(2_700);
      expect(JSON.stringify(p).length).toBeLessThan(3_300);
      expect(p.metadata.managedFields.length).toBeGreaterThan(0);
      expect(p.metadata.labels.app).toEqual(expect.any(String));
      expect(p.spec.nodeName).toMatch(/^node-/);
      expect(["Running", "Pending", "Succeeded"]).toContain(p.status.phase);
    }
    expect((await cluster.state("deployments", "ns-0")).items).toHaveLength(3);
    await cluster.dispose();
  });

  it("churns deterministically: the same seed on the same state gives the same state", async () => {
    const outcome = async () => {
      const cluster = await FakeCluster.create(BASE);
      await cluster.seed({ namespaces: 2, podsPerNamespace: 10 });
      const result = await cluster.churn({ seed: 42, operations: 200 });
      const state = await cluster.state("pods");
      const shape = state.items.map((p) => [p.metadata.namespace, p.metadata.name, p.metadata.resourceVersion, p.metadata.labels?.app, (p.status as { phase: string }).phase]);
      return { result, shape };
    };
    const [one, two] = [await outcome(), await outcome()];
    expect(one.result.created + one.result.updated + one.result.deleted).toBe(200);
    expect(one.result.created).toBeGreaterThan(0);
    expect(one.result.deleted).toBeGreaterThan(0);
    expect(two).toEqual(one);
  });

  it("compacts to a given revision and refuses a future one", async () => {
    const cluster = await podsCluster(3);
    const rv = await cluster.revision();
    await cluster.create("pods", pod({ name: "x", namespace: "ns" }));
    expect(await cluster.compact(rv)).toEqual({ compactedRevision: rv, resourceVersion: String(Number(rv) + 1) });
    // Exactly at the compaction revision is still readable; one below is not.
    expect((await getJson(cluster, `/api/v1/pods?resourceVersion=${rv}&limit=10`)).body.items).toHaveLength(3);
    expect((await getJson(cluster, `/api/v1/pods?resourceVersion=${Number(rv) - 1}&limit=10`)).status).toBe(410);
    const future = (await cluster.compact(String(Number(rv) + 10)).catch((e: unknown) => e)) as FakeApiError;
    expect(future.status).toBe(400);
  });
});
