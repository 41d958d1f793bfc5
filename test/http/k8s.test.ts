/**
 * `/k8s` through the Worker's front door: discovery, get and list answered as the fake API server
 * answers the same requests (the items it lists, in the shapes it writes), Status errors, consistent
 * continue pages, and the read-only rule; and per cluster (issue 12) under /k8s/clusters/{cluster}:
 * each cluster's own answers, discovery and watches, unknown (404) and invalid (400) clusters. Real
 * clients (kubectl, client-node) read it in test/e2e.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../src/kube/types.ts";
import { configMap, deployment, pod, widget } from "../fake-apiserver/builders.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { addCluster, call, createSynced, objectIds, send, unique } from "../helpers/clusters.ts";
import { newCluster, startInformer, waitConverged, waitFor, waitSynced } from "../helpers/informer.ts";

const base = "http://localhost/k8s";
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const AGGREGATED =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

function k8s(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${base}${path}`, init));
}

async function body(response: Response): Promise<any> {
  return response.json();
}

/** The fake server's answer to the same request (a list or one object), managedFields dropped as our cache drops them. */
async function fromCluster(cluster: FakeCluster, path: string): Promise<any> {
  const answer = (await (await fetch(`${cluster.url}${path}`)).json()) as any;
  const strip = (o: KubeObject) => {
    delete o.metadata.managedFields;
    return o;
  };
  if (Array.isArray(answer.items)) answer.items = answer.items.map(strip);
  else if (answer.metadata) strip(answer);
  return answer;
}

/**
 * `collect` conditions for `streams` watches that make `change` once every one of them has sent
 * its initial-events-end bookmark (so the change is after their initial listings, however slow the
 * machine), each done at its first MODIFIED event; `made()` is the change's promise.
 */
function changeAfterBookmarks(streams: number, change: () => Promise<unknown>) {
  let bookmarked = 0;
  let made: Promise<unknown> | undefined;
  return {
    until() {
      let seen = false;
      return (events: any[]) => {
        if (!seen && events.some((e) => e.type === "BOOKMARK")) {
          seen = true;
          if (++bookmarked === streams) made = change();
        }
        return events.some((e) => e.type === "MODIFIED");
      };
    },
    made: () => made,
  };
}

/** Reads NDJSON watch events from a streaming response until `done` says so (or a timeout). */
async function collect(response: Response, done: (events: any[]) => boolean, timeoutMs = 10_000): Promise<any[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const events: any[] = [];
  let carry = "";
  const end = Date.now() + timeoutMs;
  try {
    while (!done(events)) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out with ${events.length} events: ${JSON.stringify(events.map((e) => [e.type, e.object?.metadata?.name]))}`);
      const chunk = await Promise.race([reader.read(), new Promise<"timeout">((r) => setTimeout(() => r("timeout"), left))]);
      if (chunk === "timeout") continue;
      if (chunk.done) break;
      carry += decoder.decode(chunk.value, { stream: true });
      let newline;
      while ((newline = carry.indexOf("\n")) !== -1) {
        events.push(JSON.parse(carry.slice(0, newline)));
        carry = carry.slice(newline + 1);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

let shared: Promise<{ cluster: FakeCluster; name: string }> | undefined;
/** One cluster with pods and deployments mirrored by unfiltered informers, for the read tests. */
function mirrored() {
  shared ??= (async () => {
    const cluster = await newCluster();
    for (const ns of ["a", "b"]) {
      for (let i = 0; i < 6; i++) {
        await cluster.create("pods", pod({ name: `p${i}`, namespace: ns, labels: { app: i % 2 ? "web" : "db", tier: `t${i % 3}` } }));
      }
    }
    await cluster.create("deployments", deployment({ name: "web", namespace: "a", replicas: 2 }));
    // Named to sort first: /k8s serves a resource from the first unfiltered informer by name.
    const pods = await startInformer(cluster, { resource: "pods", watchTimeoutSeconds: 3 }, "a-k8s-pods");
    const deploys = await startInformer(cluster, { resource: "deployments.apps", watchTimeoutSeconds: 3 }, "a-k8s-deployments");
    await waitSynced(pods.stub);
    await waitSynced(deploys.stub);
    return { cluster, name: pods.name };
  })();
  return shared;
}

describe("/k8s", () => {
  it("lists as the API server lists: kind, apiVersion, items without TypeMeta, the same objects", async () => {
    const { cluster } = await mirrored();
    for (const path of ["/api/v1/pods", "/api/v1/namespaces/a/pods", "/api/v1/pods?labelSelector=app%3Dweb,tier+in+(t0,t1)", "/apis/apps/v1/deployments"]) {
      const response = await k8s(path);
      expect(response.status, path).toBe(200);
      const ours = await body(response);
      const theirs = await fromCluster(cluster, path);
      expect(ours.kind).toBe(theirs.kind);
      expect(ours.apiVersion).toBe(theirs.apiVersion);
      expect(ours.items, path).toEqual(theirs.items);
      expect(ours.metadata.resourceVersion).toMatch(/^\d+$/);
    }
  });

  it("gets one object with its kind and apiVersion, and answers NotFound as a Status", async () => {
    const { cluster } = await mirrored();
    const got = await body(await k8s("/api/v1/namespaces/a/pods/p1"));
    const theirs = (await (await fetch(`${cluster.url}/api/v1/namespaces/a/pods/p1`)).json()) as any;
    delete theirs.metadata.managedFields;
    expect(got).toEqual(theirs);
    const missing = await k8s("/api/v1/namespaces/a/pods/nope");
    expect(missing.status).toBe(404);
    expect(await body(missing)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "nope" not found',
      reason: "NotFound",
      details: { name: "nope", kind: "pods" },
      code: 404,
    });
    expect((await body(await k8s("/apis/apps/v1/namespaces/a/deployments/nope"))).message).toBe('deployments.apps "nope" not found');
  });

  it("pages with limit and continue at one snapshot, whatever changes in between", async () => {
    const { cluster, name } = await mirrored();
    const first = await body(await k8s("/api/v1/pods?limit=5"));
    expect(first.items).toHaveLength(5);
    expect(first.metadata.continue).toEqual(expect.any(String));
    const before = (await fromCluster(cluster, "/api/v1/pods")).items.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`);
    // change what the later pages would hold: delete one, add one
    await cluster.delete("pods", { metadata: { namespace: "b", name: "p4" } });
    await cluster.create("pods", pod({ name: "p9", namespace: "a" }));
    const stub = env.INFORMER.getByName(name);
    await waitConverged(stub, cluster);
    const keys = [...first.items];
    let token = first.metadata.continue as string | undefined;
    while (token) {
      const page = await body(await k8s(`/api/v1/pods?limit=5&continue=${encodeURIComponent(token)}`));
      expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      keys.push(...page.items);
      token = page.metadata.continue;
    }
    expect(keys.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(before);
    await cluster.create("pods", pod({ name: "p4", namespace: "b", labels: { app: "db", tier: "t1" } }));
    await cluster.delete("pods", { metadata: { namespace: "a", name: "p9" } });
    await waitConverged(stub, cluster);
  });

  it("answers a list at resourceVersion 0 whole, ignoring limit, as the watch cache does", async () => {
    const { cluster } = await mirrored();
    // client-go's reflector lists RV=0&limit=500 first; a paginated answer would make its relists Exact.
    const path = "/api/v1/pods?resourceVersion=0&limit=2";
    const [ours, theirs] = [await body(await k8s(path)), await fromCluster(cluster, path)];
    expect(theirs.metadata.continue).toBeUndefined();
    expect(ours.metadata.continue).toBeUndefined();
    expect(ours.items).toEqual(theirs.items);
  });

  it("answers a bad continue token with 400 and a bad selector with the API server's 400s", async () => {
    await mirrored();
    const token = await k8s("/api/v1/pods?limit=2&continue=garbage");
    expect(token.status).toBe(400);
    expect((await body(token)).message).toMatch(/^invalid continue token/);
    const field = await body(await k8s("/api/v1/pods?fieldSelector=spec.bogus%3Dx"));
    expect(field).toMatchObject({ code: 400, reason: "BadRequest", message: "field label not supported: spec.bogus" });
    const deploy = await body(await k8s("/apis/apps/v1/deployments?fieldSelector=spec.replicas%3D2"));
    expect(deploy.message).toBe('"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"');
    const match = await k8s("/api/v1/pods?resourceVersionMatch=NotOlderThan");
    expect(match.status).toBe(422);
  });

  it("answers Table output with the pod and deployment columns kubectl prints", async () => {
    await mirrored();
    const table = await body(await k8s("/api/v1/namespaces/b/pods", { headers: { accept: TABLE } }));
    expect(table.kind).toBe("Table");
    expect(table.columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name)).toEqual(["Name", "Ready", "Status", "Restarts", "Age"]);
    expect(table.rows.map((r: any) => r.cells[0])).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
    expect(table.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", metadata: { name: "p0", namespace: "b" } });
    const deploys = await body(await k8s("/apis/apps/v1/deployments", { headers: { accept: TABLE } }));
    expect(deploys.columnDefinitions.filter((c: any) => c.priority === 0).map((c: any) => c.name)).toEqual([
      "Name",
      "Ready",
      "Up-to-date",
      "Available",
      "Age",
    ]);
  });

  it("serves legacy and aggregated discovery of exactly the mirrored resources", async () => {
    await mirrored();
    const legacy = await body(await k8s("/api/v1"));
    const pods = legacy.resources.find((r: any) => r.name === "pods");
    expect(pods).toEqual({ name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: ["get", "list", "watch"], shortNames: ["po"], categories: ["all"] });
    const groups = await body(await k8s("/apis"));
    expect(groups.groups.map((g: any) => g.name)).toContain("apps");
    const aggregated = await k8s("/apis", { headers: { accept: AGGREGATED } });
    expect(aggregated.headers.get("content-type")).toBe("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
    const apps = (await body(aggregated)).items.find((i: any) => i.metadata.name === "apps");
    expect(apps.versions[0].resources.find((r: any) => r.resource === "deployments")).toMatchObject({
      responseKind: { group: "", version: "", kind: "Deployment" },
      scope: "Namespaced",
      singularResource: "deployment",
      shortNames: ["deploy"],
    });
    const legacyOnly = await k8s("/api", { headers: { accept: "application/json" } });
    expect((await body(legacyOnly)).kind).toBe("APIVersions");
    expect((await k8s("/apis/widgets.example.com/v1")).status).toBe(404);
    expect((await k8s("/api/v1/foos")).status).toBe(404);
    expect((await k8s("/api/v1/namespaces/%E0%A4%A/pods")).status).toBe(404); // a malformed escape
  });

  it("refuses every write verb with 405 MethodNotAllowed and changes nothing", async () => {
    const { cluster } = await mirrored();
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const response = await k8s("/api/v1/namespaces/a/pods/p1", {
        method,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ propagationPolicy: "Background" }),
      });
      expect(response.status, method).toBe(405);
      expect(await body(response)).toMatchObject({ kind: "Status", reason: "MethodNotAllowed", code: 405 });
    }
    expect((await cluster.state("pods", "a")).items.map((o: KubeObject) => o.metadata.name)).toContain("p1");
  });

  it("answers a list without limit over a cache larger than a page as one list, equal to the API server's", async () => {
    // 7,000 config maps of ~1 KB: more than the 5,000 items and the 4 MB of one informer read, so
    // the answer is streamed from several pages, which must join into the one list the server gives.
    const cluster = await newCluster();
    const ops = Array.from({ length: 7_000 }, (_, i) => ({
      op: "create" as const,
      resource: "configmaps" as const,
      object: configMap({ name: `cm-${String(i).padStart(4, "0")}`, namespace: `ns-${i % 7}`, data: { blob: "x".repeat(1_000) } }),
    }));
    for (let i = 0; i < ops.length; i += 1_000) await cluster.apply(ops.slice(i, i + 1_000));
    const { stub } = await startInformer(cluster, { resource: "configmaps", watchTimeoutSeconds: 3 }, "a-k8s-configmaps");
    await waitSynced(stub);
    const response = await k8s("/api/v1/configmaps");
    // Streamed, and not gzipped: this client asked for no gzip (identity is only for watches, F23).
    expect(response.headers.get("content-encoding")).toBeNull();
    const ours = await body(response);
    const theirs = await fromCluster(cluster, "/api/v1/configmaps");
    expect(ours.kind).toBe("ConfigMapList");
    expect(ours.items).toHaveLength(7_000);
    expect(ours.metadata).toEqual({ resourceVersion: expect.any(String) });
    expect(ours.items).toEqual(theirs.items);
    const table = await body(await k8s("/api/v1/configmaps", { headers: { accept: TABLE } }));
    expect(table.rows.map((r: any) => `${r.object.metadata.namespace}/${r.cells[0]}`)).toEqual(
      theirs.items.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`),
    );
  });

  it("serves a custom resource once its informer holds an object: discovery, list and get", async () => {
    const cluster = await newCluster();
    await cluster.create("widgets", widget({ name: "w1", namespace: "ns", color: "red" }));
    await cluster.create("widgets", widget({ name: "w2", namespace: "ns", color: "blue" }));
    const { stub } = await startInformer(cluster, { resource: "widgets.example.com", apiVersion: "example.com/v1", watchTimeoutSeconds: 3 }, "a-k8s-widgets");
    await waitSynced(stub);
    const resources = await body(await k8s("/apis/example.com/v1"));
    // The short name comes from the CRD (F11), as the API server's discovery gives it.
    expect(resources.resources).toEqual([{ name: "widgets", singularName: "widget", namespaced: true, kind: "Widget", verbs: ["get", "list", "watch"], shortNames: ["wd"] }]);
    const ours = await body(await k8s("/apis/example.com/v1/namespaces/ns/widgets"));
    const theirs = await fromCluster(cluster, "/apis/example.com/v1/namespaces/ns/widgets");
    expect(ours.kind).toBe("WidgetList");
    expect(ours.items).toEqual(theirs.items);
    expect((await body(await k8s("/apis/example.com/v1/namespaces/ns/widgets/w2"))).spec).toMatchObject({ color: "blue" });
  });

  describe("watch", () => {
    it("streams every change after the list's resourceVersion in order, with the enter/leave rule", async () => {
      const { cluster, name } = await mirrored();
      await cluster.create("pods", pod({ name: "w1", namespace: "ns", labels: { app: "web" } }));
      await waitConverged(env.INFORMER.getByName(name), cluster);
      const list = await body(await k8s("/api/v1/namespaces/ns/pods?labelSelector=app%3Dweb"));
      const response = await k8s(`/api/v1/namespaces/ns/pods?watch=true&labelSelector=app%3Dweb&resourceVersion=${list.metadata.resourceVersion}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json");
      const events = collect(response, (e) => e.length >= 5);
      await cluster.create("pods", pod({ name: "w2", namespace: "ns", labels: { app: "web" } }));
      await cluster.update("pods", pod({ name: "w1", namespace: "ns", labels: { app: "db" } })); // leaves
      const left = await cluster.state("pods", "ns");
      await cluster.create("pods", pod({ name: "d1", namespace: "ns", labels: { app: "db" } })); // never seen
      await cluster.update("pods", pod({ name: "d1", namespace: "ns", labels: { app: "web" } })); // enters
      await cluster.update("pods", { ...pod({ name: "w2", namespace: "ns", labels: { app: "web" } }), status: { phase: "Running" } });
      await cluster.delete("pods", { metadata: { namespace: "ns", name: "w2" } });
      const seen = await events;
      expect(seen.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ["ADDED", "w2"],
        ["DELETED", "w1"],
        ["ADDED", "d1"],
        ["MODIFIED", "w2"],
        ["DELETED", "w2"],
      ]);
      // the object that left is shown in its last matching state, at the change's resourceVersion
      const w1After = left.items.find((o: KubeObject) => o.metadata.name === "w1")!;
      expect(seen[1].object.metadata.labels).toEqual({ app: "web" });
      expect(seen[1].object.metadata.resourceVersion).toBe(w1After.metadata.resourceVersion);
      expect(seen[0].object).toMatchObject({ kind: "Pod", apiVersion: "v1" });
    });

    it("starts RV 0 with the current objects and ends them with the initial-events-end bookmark", async () => {
      const { cluster, name } = await mirrored();
      for (const pod_ of ["a", "b", "c"]) await cluster.create("pods", pod({ name: pod_, namespace: "initial" }));
      await waitConverged(env.INFORMER.getByName(name), cluster);
      const response = await k8s(
        "/api/v1/namespaces/initial/pods?watch=1&resourceVersion=0&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
      );
      const change = changeAfterBookmarks(1, () => cluster.update("pods", { ...pod({ name: "b", namespace: "initial" }), status: { phase: "Running" } }));
      const seen = await collect(response, change.until());
      await change.made();
      expect(seen.map((e) => [e.type, e.object.metadata.name ?? null])).toEqual([
        ["ADDED", "a"],
        ["ADDED", "b"],
        ["ADDED", "c"],
        ["BOOKMARK", null],
        ["MODIFIED", "b"],
      ]);
      expect(seen[3].object).toMatchObject({ kind: "Pod", apiVersion: "v1", metadata: { annotations: { "k8s.io/initial-events-end": "true" } } });
      expect(seen[3].object.metadata.resourceVersion).toMatch(/^\d+$/);
    });

    it("answers a resourceVersion older than the log with an ERROR 410 Expired event naming resourceVersions", async () => {
      await mirrored(); // a new cluster starts at revision 1, before the informer's first list
      const response = await k8s("/api/v1/pods?watch=true&resourceVersion=1");
      const seen = await collect(response, (e) => e.length >= 1);
      expect(seen[0]).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
      // As the watch cache words it: the requested RV and the oldest it holds, never log positions (F20).
      const oldest = /^too old resource version: 1 \((\d+)\)$/.exec(seen[0].object.message)?.[1];
      const cached = ((await (await k8s("/api/v1/pods")).json()) as { items: { metadata: { resourceVersion: string } }[] }).items.map((i) => i.metadata.resourceVersion);
      expect(cached).toContain(oldest);
    });

    it("reads boolean parameters as the API server does: True, 1 and an empty value are true", async () => {
      await mirrored();
      for (const watch of ["True", "1", "", "TRUE"]) {
        const response = await k8s(`/api/v1/pods?watch=${watch}&resourceVersion=1`);
        expect((await collect(response, (e) => e.length >= 1))[0], `watch=${watch}`).toMatchObject({ type: "ERROR" });
      }
      for (const watch of ["false", "0", "False"]) {
        expect((await body(await k8s(`/api/v1/pods?watch=${watch}`))).kind, `watch=${watch}`).toBe("PodList");
      }
    });

    it("ends the stream cleanly after timeoutSeconds", async () => {
      await mirrored();
      const response = await k8s("/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=1");
      // collect() fails unless the body ends (its deadline only catches a stream that never does).
      const seen = await collect(response, () => false, 15_000).catch((error: Error) => error);
      expect(seen).not.toBeInstanceOf(Error);
    });

    it("serves many watchers the same events in the same order", async () => {
      const { cluster } = await mirrored();
      const rv = (await body(await k8s("/api/v1/pods"))).metadata.resourceVersion;
      const watchers = await Promise.all(Array.from({ length: 25 }, () => k8s(`/api/v1/namespaces/many/pods?watch=true&resourceVersion=${rv}`)));
      const streams = watchers.map((response) => collect(response, (e) => e.length >= 30, 20_000));
      for (let i = 0; i < 10; i++) {
        await cluster.create("pods", pod({ name: `m${i}`, namespace: "many" }));
        await cluster.update("pods", { ...pod({ name: `m${i}`, namespace: "many" }), status: { phase: "Running" } });
        await cluster.delete("pods", { metadata: { namespace: "many", name: `m${i}` } });
      }
      const all = await Promise.all(streams);
      const first = all[0]!.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`);
      for (const events of all) expect(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`)).toEqual(first);
    });
  });

  describe("watch-list (client-go's WatchListClient) and the ListOptions the server refuses", () => {
    const WATCH_LIST = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";

    it("resumes a watch-list at a resourceVersion with every object ADDED, the initial-events-end bookmark, then changes, as the API server does", async () => {
      const { cluster, name } = await mirrored();
      for (const p of ["x", "y"]) await cluster.create("pods", pod({ name: p, namespace: "resume" }));
      await waitConverged(env.INFORMER.getByName(name), cluster);
      const rv = (await body(await k8s("/api/v1/namespaces/resume/pods"))).metadata.resourceVersion;
      const path = `/api/v1/namespaces/resume/pods?${WATCH_LIST}&resourceVersion=${rv}`;
      const change = changeAfterBookmarks(2, () => cluster.update("pods", { ...pod({ name: "y", namespace: "resume" }), status: { phase: "Running" } }));
      const ours = collect(await k8s(path), change.until());
      const theirs = collect(await fetch(`${cluster.url}${path}`), change.until());
      const shape = (events: any[]) => events.map((e) => [e.type, e.object.metadata.name ?? e.object.metadata.annotations]);
      const [seen, reference] = [await ours, await theirs];
      await change.made();
      expect(shape(seen)).toEqual([["ADDED", "x"], ["ADDED", "y"], ["BOOKMARK", { "k8s.io/initial-events-end": "true", "kubernetes.io/initial-events-list-blueprint": btoa('{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}') }], ["MODIFIED", "y"]]);
      expect(shape(seen)).toEqual(shape(reference));
      // The bookmark is at the list's RV: at least the one asked for.
      expect(BigInt(seen[2].object.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(rv));
    });

    it.each([
      ["sendInitialEvents without resourceVersionMatch", "watch=1&sendInitialEvents=true"],
      ["sendInitialEvents=false without resourceVersionMatch", "watch=1&sendInitialEvents=false&resourceVersion=5"],
      ["resourceVersionMatch on a watch without sendInitialEvents", "watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan"],
      ["a watch-list with an Exact match (two causes)", "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"],
      ["sendInitialEvents on a list", "sendInitialEvents=true"],
      ["resourceVersionMatch without resourceVersion on a list", "resourceVersionMatch=NotOlderThan"],
      ["a malformed resourceVersion on a watch", "watch=1&resourceVersion=abc"],
      ["a malformed resourceVersion on a list", "resourceVersion=12a"],
    ])("refuses %s with the API server's Status", async (_, query) => {
      const { cluster } = await mirrored();
      const [ours, theirs] = [await k8s(`/api/v1/pods?${query}`), await fetch(`${cluster.url}/api/v1/pods?${query}`)];
      expect([ours.status, await body(ours)]).toEqual([theirs.status, await theirs.json()]);
      expect([400, 422]).toContain(ours.status);
    });
  });
});

describe("/k8s over a cache that is not synced", () => {
  /** A run-time cluster whose informer `pods` cannot list: the fake API server answers `code` to every list. */
  async function unsyncable(code: number) {
    const fake = await newCluster();
    await fake.create("pods", pod({ name: "web-1", namespace: "shop" }));
    await fake.fault({ kind: "status", on: "list", code, count: 1_000, resource: "pods" });
    const cluster = unique("unsynced");
    await addCluster(cluster, fake);
    expect((await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods" })).status).toBe(201);
    await waitFor("the informer's first failed list", async () => (await (await call(`/clusters/${cluster}/informers/pods`)).json() as any).lastError !== null);
    return cluster;
  }
  const requests = [
    ["a get", "/api/v1/namespaces/shop/pods/web-1"],
    ["a list", "/api/v1/namespaces/shop/pods"],
    ["a watch", "/api/v1/namespaces/shop/pods?watch=1&allowWatchBookmarks=true"],
    ["a watch-list", "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=1"],
  ] as const;

  it("answers a get, list or watch while the cache initialises as the API server does: 429 with Retry-After, never NotFound or a partial list", async () => {
    const cluster = await unsyncable(500);
    for (const [what, path] of requests) {
      const response = await k8s(`/clusters/${cluster}${path}`);
      expect([response.status, response.headers.get("retry-after"), await body(response)], what).toEqual([
        429,
        "1",
        { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "storage is (re)initializing", reason: "TooManyRequests", details: { retryAfterSeconds: 1 }, code: 429 },
      ]);
    }
  });

  it("passes on why a cache will never sync (the API server does not serve the resource), so kubectl shows it", async () => {
    const cluster = await unsyncable(404);
    for (const [what, path] of requests) {
      const response = await k8s(`/clusters/${cluster}${path}`);
      expect(response.status, what).toBe(503);
      expect(response.headers.get("retry-after"), what).toBeNull();
      expect(await body(response), what).toMatchObject({ reason: "ServiceUnavailable", message: expect.stringMatching(/^the cache of pods cannot sync: 404 NotFound: /) });
    }
  });
});

describe("/k8s/clusters/{cluster}", () => {
  /** The Status of an unknown cluster, as kubectl reads it. */
  const unknownCluster = (name: string) => ({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: `cluster "${name}" not found`,
    reason: "NotFound",
    details: { name, kind: "clusters" },
    code: 404,
  });

  let pair: Promise<{ east: FakeCluster; west: FakeCluster; a: string; b: string }> | undefined;
  /**
   * Two API servers as two run-time clusters, each with an informer named `pods` (names are per
   * cluster); only `a` mirrors deployments, so discovery must differ between them.
   */
  function twoClusters() {
    pair ??= (async () => {
      const [east, west] = [await newCluster(), await newCluster()];
      for (let i = 0; i < 5; i++) await east.create("pods", pod({ name: `east-${i}`, namespace: "shop", labels: { app: i % 2 ? "web" : "db" } }));
      await east.create("deployments", deployment({ name: "web", namespace: "shop", replicas: 2 }));
      for (let i = 0; i < 3; i++) await west.create("pods", pod({ name: `west-${i}`, namespace: "shop", labels: { app: "web" } }));
      const [a, b] = [unique("a"), unique("b")];
      await addCluster(a, east);
      await addCluster(b, west);
      await createSynced(`/clusters/${a}/informers/pods`);
      await createSynced(`/clusters/${a}/informers/deployments`, { resource: "deployments.apps" });
      await createSynced(`/clusters/${b}/informers/pods`);
      return { east, west, a, b };
    })();
    return pair;
  }

  it("lists and gets from each cluster's own informers, as that cluster's API server answers", async () => {
    const { east, west, a, b } = await twoClusters();
    for (const [cluster, server, paths] of [
      [a, east, ["/api/v1/pods", "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb", "/apis/apps/v1/namespaces/shop/deployments"]],
      [b, west, ["/api/v1/pods", "/api/v1/namespaces/shop/pods"]],
    ] as const) {
      for (const path of paths) {
        const response = await k8s(`/clusters/${cluster}${path}`);
        expect(response.status, `${cluster} ${path}`).toBe(200);
        const [ours, theirs] = [await body(response), await fromCluster(server, path)];
        expect(theirs.items.length, `${cluster} ${path}: the reference is not empty`).toBeGreaterThan(0);
        expect([ours.kind, ours.items], `${cluster} ${path}`).toEqual([theirs.kind, theirs.items]);
      }
    }
    const got = await body(await k8s(`/clusters/${b}/api/v1/namespaces/shop/pods/west-1`));
    expect(got).toEqual(await fromCluster(west, "/api/v1/namespaces/shop/pods/west-1"));
    // east-1 is a's: b answers as its own server does, NotFound.
    const missing = await k8s(`/clusters/${b}/api/v1/namespaces/shop/pods/east-1`);
    expect([missing.status, await body(missing)]).toEqual([404, expect.objectContaining({ kind: "Status", reason: "NotFound", message: 'pods "east-1" not found' })]);
    // /k8s stays the default cluster, and /k8s/clusters/default is the same server.
    const { cluster } = await mirrored();
    const defaults = (await body(await k8s("/api/v1/pods"))).items;
    expect(defaults).toEqual((await fromCluster(cluster, "/api/v1/pods")).items);
    expect((await body(await k8s("/clusters/default/api/v1/pods"))).items).toEqual(defaults);
  });

  it("serves discovery per cluster, its cache never answering for another cluster", async () => {
    const { a, b } = await twoClusters();
    // Back to back, well within the cache's lifetime: b must not be served from a's entry.
    expect((await k8s(`/clusters/${a}/apis/apps/v1/deployments`)).status).toBe(200);
    const absent = await k8s(`/clusters/${b}/apis/apps/v1/deployments`);
    expect([absent.status, (await body(absent)).message]).toEqual([404, "the server could not find the requested resource"]);
    expect((await k8s(`/clusters/${b}/apis/apps/v1`)).status).toBe(404);
    expect((await k8s(`/clusters/${a}/apis/apps/v1`)).status).toBe(200);
    const groups = async (cluster: string) => (await body(await k8s(`/clusters/${cluster}/apis`))).groups.map((g: any) => g.name);
    expect(await groups(a)).toEqual(["apps"]);
    expect(await groups(b)).toEqual([]);
    const aggregated = async (cluster: string) =>
      (await body(await k8s(`/clusters/${cluster}/apis`, { headers: { accept: AGGREGATED } }))).items.map((i: any) => i.metadata.name);
    expect([await aggregated(a), await aggregated(b)]).toEqual([["apps"], []]);
    const core = (await body(await k8s(`/clusters/${b}/api/v1`))).resources.map((r: any) => r.name);
    // namespaces: synthesized from the pods' namespaces, namespaces not being mirrored (issue 30 item 2).
    expect(core).toEqual(["pods", "namespaces"]);
    expect((await body(await k8s(`/clusters/${b}/api`))).kind).toBe("APIVersions");
    const version = await k8s(`/clusters/${b}/version`);
    expect([version.status, (await body(version)).gitVersion]).toEqual([200, "v1.34.0-fake"]);
    // Paths no API server has are a NotFound Status too, under either prefix.
    for (const path of ["/no/such/path", `/clusters/${a}/no/such/path`, `/clusters/${a}`]) {
      const response = await k8s(path);
      expect([path, response.status, await body(response)]).toEqual([path, 404, expect.objectContaining({ kind: "Status", reason: "NotFound" })]);
    }
  });

  it("pages with limit and continue under the cluster's prefix, and answers Table output", async () => {
    const { east, a } = await twoClusters();
    const names: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await body(await k8s(`/clusters/${a}/api/v1/pods?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ""}`));
      names.push(...page.items.map((o: KubeObject) => o.metadata.name));
      token = page.metadata.continue;
      pages++;
    } while (token);
    expect(pages).toBe(3);
    expect(names).toEqual((await fromCluster(east, "/api/v1/pods")).items.map((o: KubeObject) => o.metadata.name));
    const table = await body(await k8s(`/clusters/${a}/api/v1/namespaces/shop/pods`, { headers: { accept: TABLE } }));
    expect([table.kind, table.rows.map((r: any) => r.cells[0])]).toEqual(["Table", names]);
  });

  it("watches each cluster's own changes only", async () => {
    const { east, west, a, b } = await twoClusters();
    const watchFrom = async (cluster: string) => {
      const rv = (await body(await k8s(`/clusters/${cluster}/api/v1/namespaces/watched/pods`))).metadata.resourceVersion;
      return k8s(`/clusters/${cluster}/api/v1/namespaces/watched/pods?watch=true&resourceVersion=${rv}`);
    };
    const [fromA, fromB] = [await watchFrom(a), await watchFrom(b)];
    // Each stream ends at its own cluster's second change; a leak would arrive in between.
    const seenA = collect(fromA, (e) => e.length >= 2);
    const seenB = collect(fromB, (e) => e.length >= 2);
    await east.create("pods", pod({ name: "east-w1", namespace: "watched" }));
    await west.create("pods", pod({ name: "west-w1", namespace: "watched" }));
    await east.delete("pods", { metadata: { namespace: "watched", name: "east-w1" } });
    await west.delete("pods", { metadata: { namespace: "watched", name: "west-w1" } });
    const describe = (events: any[]) => events.map((e) => `${e.type} ${e.object.metadata.name}`);
    expect(describe(await seenA)).toEqual(["ADDED east-w1", "DELETED east-w1"]);
    expect(describe(await seenB)).toEqual(["ADDED west-w1", "DELETED west-w1"]);
  });

  it("refuses writes with 405 under a cluster's prefix, before looking the cluster up", async () => {
    const { east, a } = await twoClusters();
    for (const cluster of [a, unique("ghost"), "Not_A_Name"]) {
      const response = await k8s(`/clusters/${cluster}/api/v1/namespaces/shop/pods/east-1`, { method: "DELETE" });
      expect([cluster, response.status, (await body(response)).reason]).toEqual([cluster, 405, "MethodNotAllowed"]);
    }
    expect((await east.state("pods", "shop")).items.map((o: KubeObject) => o.metadata.name)).toContain("east-1");
  });

  it("answers an unknown cluster with a NotFound Status on every route, touching no informer object", async () => {
    await twoClusters();
    const before = await objectIds();
    const ghost = unique("ghost");
    const paths = [
      "",
      "/",
      "/version",
      "/api",
      "/apis",
      "/api/v1",
      "/apis/apps",
      "/apis/apps/v1",
      "/api/v1/pods",
      "/api/v1/pods?watch=true",
      "/api/v1/namespaces/shop/pods/east-1",
      "/api/v1/namespaces/shop",
      "/apis/apps/v1/namespaces/shop/deployments?limit=1",
      "/no/such/path",
    ];
    for (const path of paths) {
      const response = await k8s(`/clusters/${ghost}${path}`);
      expect([path, response.status, await body(response)]).toEqual([path, 404, unknownCluster(ghost)]);
    }
    // A known cluster without informers: nothing is served, and still no informer object is reached.
    const empty = unique("empty");
    await addCluster(empty, await newCluster());
    const none = await k8s(`/clusters/${empty}/api/v1/pods`);
    expect([none.status, (await body(none)).message]).toEqual([404, "the server could not find the requested resource"]);
    expect((await body(await k8s(`/clusters/${empty}/api/v1`))).resources).toEqual([]);
    expect(await objectIds()).toEqual(before);
    expect((await send("DELETE", `/clusters/${empty}`)).status).toBe(204);
    expect((await call(`/clusters/${ghost}`)).status).toBe(404); // nothing registered either
  });

  it("answers an invalid cluster name with a BadRequest Status", async () => {
    const before = await objectIds();
    for (const name of ["Not_A_Name", "x".repeat(64), "-dash", "a.b", "%20"]) {
      const response = await k8s(`/clusters/${name}/api/v1/pods`);
      const status = await body(response);
      expect([name, response.status, status.kind, status.reason]).toEqual([name, 400, "Status", "BadRequest"]);
      expect(status.message).toMatch(/^invalid cluster name ".*": a cluster name is a lower-case DNS label/);
    }
    expect(await objectIds()).toEqual(before);
  });

  it("stops serving a cluster once it is removed", async () => {
    const server = await newCluster();
    await server.create("pods", pod({ name: "p-1", namespace: "default" }));
    const name = unique("gone");
    await addCluster(name, server);
    await createSynced(`/clusters/${name}/informers/pods`);
    expect((await body(await k8s(`/clusters/${name}/api/v1/pods`))).items).toHaveLength(1);
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
    const response = await k8s(`/clusters/${name}/api/v1/pods`);
    expect([response.status, await body(response)]).toEqual([404, unknownCluster(name)]);
  });
});
