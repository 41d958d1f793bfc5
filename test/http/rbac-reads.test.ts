/**
 * The Worker's own read routes on a cluster whose authorization is `rbac` (issue 31 item 3):
 * `/informers/{name}/objects` (list, get by key), `/indexes`, and `/search` return only what the
 * caller may list per namespace, as the member cluster's RBAC says — decided once per request.
 * alice may get/list pods (and list roles) in team-a only, bob nothing, root is in `system:masters`.
 * A `scopes` cluster is unchanged; an `rbac` cluster whose RBAC cannot be read answers 503.
 *
 * Before: every reader of the cluster read every namespace's objects through these routes.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { addCluster, createSynced, json, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";
import { subscribe } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { unwrap } from "../../src/errors.ts";

const token = (name: string) => `${name}-rbac-reads-token-0123456789abcdef`;
const USERS = { alice: [], bob: [], root: ["system:masters"], monitor: ["monitoring"] } as const;
type User = keyof typeof USERS;

/** The Worker with one read credential per user, each mapped to its Kubernetes user and groups. */
async function deployment() {
  const entries = await Promise.all(
    Object.entries(USERS).map(async ([user, groups]) => ({ name: user, role: "read", clusters: ["*"], sha256: await sha256Hex(token(user)), user, groups: [...groups] })),
  );
  const settings = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: JSON.stringify(entries) } as typeof env;
  const app = createApp();
  return async (user: User, path: string, headers: Record<string, string> = {}) =>
    app.request(`http://localhost${path}`, { headers: { ...headers, authorization: `Bearer ${token(user)}` } }, settings);
}

type Items = { items: { metadata: { namespace?: string; name: string } }[]; continue?: string; partial?: string[] };
const names = (answer: Items) => answer.items.map((i) => (i.metadata.namespace ? `${i.metadata.namespace}/${i.metadata.name}` : i.metadata.name)).sort();

const RBAC = "rbac.authorization.k8s.io";

async function seed(fake: FakeCluster) {
  for (const [namespace, name] of [["team-a", "a1"], ["team-a", "a2"], ["team-a", "a3"], ["team-b", "b1"], ["team-b", "b2"]] as const) {
    await fake.create("pods", pod({ name, namespace, nodeName: "n1" }));
  }
  await fake.create("roles", {
    metadata: { name: "reader", namespace: "team-a" },
    rules: [
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] },
      { apiGroups: [RBAC], resources: ["roles"], verbs: ["list"] },
    ],
  });
  await fake.create("roles", { metadata: { name: "other", namespace: "team-b" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list"] }] });
  await fake.create("clusterroles", { metadata: { name: "viewer" }, rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }] });
  // As kube-apiserver's system:monitoring: who may read the server's own counts.
  await fake.create("clusterroles", { metadata: { name: "metrics-reader" }, rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }] });
  await fake.create("clusterrolebindings", {
    metadata: { name: "monitoring" },
    roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "metrics-reader" },
    subjects: [{ kind: "Group", apiGroup: RBAC, name: "monitoring" }],
  });
  await fake.create("rolebindings", {
    metadata: { name: "alice-reads", namespace: "team-a" },
    roleRef: { apiGroup: RBAC, kind: "Role", name: "reader" },
    subjects: [{ kind: "User", apiGroup: RBAC, name: "alice" }],
  });
}

describe("reads of an rbac cluster through /informers and /search (issue 31 item 3)", () => {
  let as: Awaited<ReturnType<typeof deployment>>;
  let rbac: string;
  let scopes: string;
  const read = async (user: User, path: string) => {
    const response = await as(user, path);
    expect(response.status, `${user} ${path}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Items;
  };

  beforeAll(async () => {
    as = await deployment();
    const fake = await newCluster();
    await seed(fake);
    rbac = unique("rbac-reads");
    expect((await send("PUT", `/clusters/${rbac}`, { server: fake.url, authorization: "rbac" })).status).toBe(201);
    await createSynced(`/clusters/${rbac}/informers/pods`);
    scopes = unique("scopes-reads");
    await addCluster(scopes, fake);
    await createSynced(`/clusters/${scopes}/informers/pods`);
    // The RBAC informers sync and the authorizer follows them within a second or so.
    await waitFor("alice's RoleBinding to take effect", async () => {
      const response = await as("alice", `/clusters/${rbac}/informers/pods/objects?namespace=team-a`);
      return response.status === 200 && ((await response.json()) as Items).items.length === 3;
    });
  }, 60_000);

  afterAll(async () => {
    for (const cluster of [rbac, scopes]) expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
  });

  it("lists only the namespaces the caller may list pods in; system:masters sees all", async () => {
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/objects`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(names(await read("bob", `/clusters/${rbac}/informers/pods/objects`))).toEqual([]);
    expect(names(await read("root", `/clusters/${rbac}/informers/pods/objects`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3", "team-b/b1", "team-b/b2"]);
    // With selectors (a scan) too.
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/objects?fieldSelector=spec.nodeName%3Dn1`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/objects?labelSelector=app%21%3Dx`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
  });

  it("pages through the allowed namespaces only, and ends", async () => {
    const seen: string[] = [];
    let next: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await read("alice", `/clusters/${rbac}/informers/pods/objects?limit=1${next ? `&continue=${encodeURIComponent(next)}` : ""}`);
      seen.push(...names(answer));
      next = answer.continue;
      if (next === undefined) break;
    }
    expect(seen).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(next).toBeUndefined();
  });

  it("answers 403 with kube-apiserver's message for a namespace the caller may not list", async () => {
    const refused = await as("alice", `/clusters/${rbac}/informers/pods/objects?namespace=team-b`);
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.message).toBe('pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "team-b"');
    expect((await as("bob", `/clusters/${rbac}/informers/pods/objects?namespace=team-a`)).status).toBe(403);
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/objects?namespace=team-a`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(names(await read("root", `/clusters/${rbac}/informers/pods/objects?namespace=team-b`))).toEqual(["team-b/b1", "team-b/b2"]);
  });

  it("gets one object only where the caller may get it", async () => {
    expect((await as("alice", `/clusters/${rbac}/informers/pods/objects/team-a/a1`)).status).toBe(200);
    const refused = await as("alice", `/clusters/${rbac}/informers/pods/objects/team-b/b1`);
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.message).toBe('pods "b1" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "team-b"');
    expect((await as("bob", `/clusters/${rbac}/informers/pods/objects/team-a/a1`)).status).toBe(403);
    expect((await as("root", `/clusters/${rbac}/informers/pods/objects/team-b/b1`)).status).toBe(200);
  });

  it("answers index lookups and the namespace index's values from the allowed namespaces; other index values need cluster-wide list", async () => {
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/indexes/nodeName/n1`))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(names(await read("alice", `/clusters/${rbac}/informers/pods/indexes/namespace/team-b`))).toEqual([]);
    expect(names(await read("bob", `/clusters/${rbac}/informers/pods/indexes/nodeName/n1`))).toEqual([]);
    expect(names(await read("root", `/clusters/${rbac}/informers/pods/indexes/nodeName/n1`))).toHaveLength(5);
    expect(await read("alice", `/clusters/${rbac}/informers/pods/indexes/namespace`)).toEqual({ values: ["team-a"] });
    expect(await read("bob", `/clusters/${rbac}/informers/pods/indexes/namespace`)).toEqual({ values: [] });
    expect(await read("root", `/clusters/${rbac}/informers/pods/indexes/namespace`)).toEqual({ values: ["team-a", "team-b"] });
    const values = await as("alice", `/clusters/${rbac}/informers/pods/indexes/nodeName`);
    expect(values.status).toBe(403);
    expect((await json(values)).error.message).toBe('pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope');
    expect(await read("root", `/clusters/${rbac}/informers/pods/indexes/nodeName`)).toEqual({ values: ["n1"] });
  });

  it("applies the same RBAC to the cluster's own RBAC informers", async () => {
    expect(names(await read("alice", `/clusters/${rbac}/informers/rbac-roles/objects`))).toEqual(["team-a/reader"]);
    expect(names(await read("bob", `/clusters/${rbac}/informers/rbac-roles/objects`))).toEqual([]);
    expect(names(await read("root", `/clusters/${rbac}/informers/rbac-roles/objects`))).toEqual(["team-a/reader", "team-b/other"]);
    // Cluster-scoped objects need cluster-wide permission.
    expect(names(await read("alice", `/clusters/${rbac}/informers/rbac-clusterroles/objects`))).toEqual([]);
    expect((await as("alice", `/clusters/${rbac}/informers/rbac-clusterroles/objects/viewer`)).status).toBe(403);
    expect(names(await read("root", `/clusters/${rbac}/informers/rbac-clusterroles/objects`))).toContain("viewer");
    expect(names(await read("alice", `/clusters/${rbac}/informers/rbac-rolebindings/objects`))).toEqual([]);
  });

  it("searches only the namespaces each caller may list in an rbac cluster, and every pod of a scopes cluster", async () => {
    const search = (user: User, query = "") => read(user, `/search/pods?clusters=${rbac}${query}`);
    expect(names(await search("alice"))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(names(await search("bob"))).toEqual([]);
    expect(names(await search("root"))).toHaveLength(5);
    // A namespace the caller may not list contributes nothing (a search spans what the caller sees).
    expect(names(await search("alice", "&namespace=team-b"))).toEqual([]);
    expect(names(await search("alice", "&fieldSelector=spec.nodeName%3Dn1"))).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    // Paged: no other namespace's pod, and an end.
    const seen: string[] = [];
    let next: string | undefined;
    for (let page = 0; page < 10; page++) {
      const answer = await search("alice", `&limit=1${next ? `&continue=${encodeURIComponent(next)}` : ""}`);
      seen.push(...names(answer));
      next = answer.continue;
      if (next === undefined) break;
    }
    expect(seen).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    // Both clusters at once: the scopes cluster's pods are all there for alice.
    const both = await read("alice", `/search/pods?clusters=${rbac},${scopes}`);
    expect(both.items).toHaveLength(8);
  });

  it("shows an rbac cluster on the status page and /metrics only to callers its RBAC lets get /metrics; a scopes cluster to every reader", async () => {
    type Snapshot = { clusters: { name: string }[]; informers: { identity: { cluster: string } }[] };
    const shown = async (user: User) => {
      const snapshot = (await read(user, "/")) as unknown as Snapshot;
      return new Set([...snapshot.clusters.map((c) => c.name), ...snapshot.informers.map((i) => i.identity.cluster)]);
    };
    const metrics = async (user: User) => {
      const response = await as(user, "/metrics");
      expect(response.status).toBe(200);
      return response.text();
    };
    for (const user of ["alice", "bob"] as const) {
      expect((await shown(user)).has(rbac), user).toBe(false);
      expect((await shown(user)).has(scopes), user).toBe(true);
      expect(await metrics(user)).not.toContain(rbac);
    }
    for (const user of ["monitor", "root"] as const) {
      expect((await shown(user)).has(rbac), user).toBe(true);
      expect(await metrics(user)).toContain(rbac);
    }
    const page = await (await as("alice", "/", { accept: "text/html" })).text();
    expect(page).not.toContain(rbac);
    expect(page).toContain(scopes);
  });

  it("shows a subscription's dead letters only in the namespaces the caller may list", async () => {
    const broken = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 503 } });
    const failing = await subscribe("pods", broken, { retryBudgetSeconds: 1, maxBatchSize: 10 }, rbac);
    await waitFor("dead letters", async () => unwrap(await failing.stub().status()).deadLetters === 5, 30_000);
    const keys = async (user: User) => ((await read(user, `/subscriptions/${failing.id}/dead-letters`)) as unknown as { items: { key: string }[] }).items.map((d) => d.key).sort();
    expect(await keys("alice")).toEqual(["team-a/a1", "team-a/a2", "team-a/a3"]);
    expect(await keys("bob")).toEqual([]);
    expect(await keys("root")).toHaveLength(5);
  }, 40_000);

  it("leaves a scopes cluster's routes as they were", async () => {
    for (const user of ["alice", "bob"] as const) {
      expect(names(await read(user, `/clusters/${scopes}/informers/pods/objects`))).toHaveLength(5);
      expect(names(await read(user, `/clusters/${scopes}/informers/pods/objects?namespace=team-b`))).toEqual(["team-b/b1", "team-b/b2"]);
      expect((await as(user, `/clusters/${scopes}/informers/pods/objects/team-b/b1`)).status).toBe(200);
      expect(await read(user, `/clusters/${scopes}/informers/pods/indexes/nodeName`)).toEqual({ values: ["n1"] });
    }
  });
});

describe("an rbac cluster whose RBAC cannot be read (issue 31: fail closed)", () => {
  it("answers 503 on /informers reads and leaves it out of /search as partial", async () => {
    const as = await deployment();
    const cluster = unique("rbac-down");
    // Nothing listens there: the RBAC informers never sync.
    expect((await send("PUT", `/clusters/${cluster}`, { server: "http://127.0.0.1:9", authorization: "rbac" })).status).toBe(201);
    expect((await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 3 })).status).toBe(201);
    for (const path of ["/objects", "/objects?namespace=team-a", "/objects/team-a/a1", "/indexes/namespace", "/indexes/namespace/team-a"]) {
      const response = await as("alice", `/clusters/${cluster}/informers/pods${path}`);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      // system:masters passes ahead of RBAC, as on the server: no RBAC objects needed, no 503.
      expect((await as("root", `/clusters/${cluster}/informers/pods${path}`)).status, path).not.toBe(503);
    }
    const search = await as("alice", `/search/pods?clusters=${cluster}`);
    expect(search.status).toBe(200);
    const answer = (await search.json()) as Items;
    expect(answer.items).toEqual([]);
    expect(answer.partial).toEqual([cluster]);
    expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
  }, 30_000);
});
