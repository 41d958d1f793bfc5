/**
 * A cluster's `authorization` setting (issue 31): `scopes` (the default, today's behaviour) or
 * `rbac` (the member cluster's RBAC, whose objects the factory mirrors in four internal informers).
 * PUT takes it, GET shows it, a bad value is a 400 naming the field and changes nothing.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { informerReader, RbacSource } from "../../src/auth/rbac/rbac-source.ts";
import { call, json, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";
import { withObjectEnv } from "../helpers/object-env.ts";
import { createApp } from "../../src/http/app.ts";

describe("a cluster's authorization setting", () => {
  it("defaults to scopes, takes rbac, and shows it", async () => {
    const server = (await newCluster()).url;
    const name = unique("authz");
    const created = await send("PUT", `/clusters/${name}`, { server });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name, authorization: "scopes" });
    const rbac = await send("PUT", `/clusters/${name}`, { server, authorization: "rbac" });
    expect(rbac.status, await rbac.clone().text()).toBe(200);
    expect(await json(rbac)).toMatchObject({ name, authorization: "rbac" });
    expect(await json(await call(`/clusters/${name}`))).toMatchObject({ authorization: "rbac" });
    expect((await json(await call("/clusters"))).items.find((c: { name: string }) => c.name === "default")).toMatchObject({ authorization: "scopes" });
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("answers 400 naming the field for a bad value, and creates nothing", async () => {
    const name = unique("authz-bad");
    const response = await send("PUT", `/clusters/${name}`, { server: "https://k8s.example.com", authorization: "abac" });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain("authorization: must be one of scopes, rbac");
    expect((await call(`/clusters/${name}`)).status).toBe(404);
  });
});

describe("the RBAC informers of a cluster with authorization rbac", () => {
  const names = ["rbac-clusterrolebindings", "rbac-clusterroles", "rbac-rolebindings", "rbac-roles"];
  const listed = async (cluster: string) =>
    ((await json(await call(`/clusters/${cluster}/informers`))).items as { name: string; synced: boolean; internal?: boolean }[]).sort((a, b) => a.name.localeCompare(b.name));

  it("appear, marked internal, and sync from the cluster; they cannot be changed through the API; scopes removes them", async () => {
    const fake = await newCluster();
    await fake.create("roles", { metadata: { name: "pod-reader", namespace: "team-a" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get", "list"] }] });
    await fake.create("clusterroles", { metadata: { name: "viewer" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["get"] }] });
    const name = unique("rbac");
    expect((await send("PUT", `/clusters/${name}`, { server: fake.url })).status).toBe(201);
    const switched = await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" });
    expect(switched.status, await switched.clone().text()).toBe(200);
    expect(await json(switched)).toMatchObject({ informers: 4, authorization: "rbac" });
    await waitFor("the RBAC informers to sync", async () => {
      const items = await listed(name);
      return items.length === 4 && items.every((i) => i.synced);
    });
    expect((await listed(name)).map((i) => [i.name, i.internal])).toEqual(names.map((n) => [n, true]));
    // /k8s reads of the cluster are now its RBAC's to allow: the admin credential's user
    // (edge-informer:admin) is bound to nothing there, so it may not list even the Roles.
    const roles = `/k8s/clusters/${name}/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles`;
    expect((await json(await send("GET", roles))).message).toBe(
      'roles.rbac.authorization.k8s.io is forbidden: User "edge-informer:admin" cannot list resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "team-a"',
    );
    await fake.create("rolebindings", {
      metadata: { name: "admin-reads-roles", namespace: "team-a" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "role-lister" },
      subjects: [{ kind: "User", name: "edge-informer:admin" }],
    });
    await fake.create("clusterroles", { metadata: { name: "role-lister" }, rules: [{ apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"], verbs: ["list"] }] });
    await waitFor("the RoleBinding to take effect", async () => (await send("GET", roles)).status === 200);
    expect((await json(await send("GET", roles))).items.map((r: { metadata: { name: string } }) => r.metadata.name)).toEqual(["pod-reader"]);

    // Reserved: the API neither changes nor deletes them.
    expect((await send("DELETE", `/clusters/${name}/informers/rbac-roles`)).status).toBe(409);
    expect((await send("PUT", `/clusters/${name}/informers/rbac-roles`, { resource: "pods" })).status).toBe(409);

    // The same PUT again changes nothing; back to scopes removes them.
    expect((await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" })).status).toBe(200);
    const back = await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "scopes" });
    expect(back.status).toBe(200);
    expect(await json(back)).toMatchObject({ informers: 0, authorization: "scopes" });
    expect(await listed(name)).toEqual([]);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(204);
  });

  it("feed an RbacSource whose decisions follow a RoleBinding created upstream", async () => {
    const fake = await newCluster();
    await fake.create("roles", { metadata: { name: "pod-reader", namespace: "team-a" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }] });
    const name = unique("rbac-src");
    expect((await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" })).status).toBe(201);
    const source = new RbacSource();
    const reader = informerReader(env, name);
    const alice = { name: "alice", groups: ["system:authenticated"] };
    const request = { verb: "list", apiGroup: "", resource: "pods", namespace: "team-a" };
    const decide = async () => (await source.authorizer(name, reader)).authorize(alice, request);
    await waitFor("the RBAC objects to be read whole", async () => (await decide().catch(() => undefined))?.allowed === false);

    await fake.create("rolebindings", {
      metadata: { name: "alice-reads", namespace: "team-a" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "pod-reader" },
      subjects: [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "alice" }],
    });
    await waitFor("the RoleBinding to allow alice", async () => (await decide()).allowed);
    expect((await decide()).reason).toBe('RBAC: allowed by RoleBinding "alice-reads/team-a" of Role "pod-reader" to User "alice"');
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("read whole in pages at one log position: bindings past the first page count (5,001 RoleBindings were refused)", async () => {
    const fake = await newCluster();
    await fake.create("clusterroles", { metadata: { name: "pod-reader" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["list"] }] });
    // Seven teams' bindings, read two a page: the last page's must count as much as the first's.
    for (let i = 0; i < 7; i++) {
      await fake.create("rolebindings", {
        metadata: { name: `team-${i}-reads`, namespace: `team-${i}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "pod-reader" },
        subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: `team-${i}` }],
      });
    }
    const name = unique("rbac-paged");
    expect((await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" })).status).toBe(201);
    const reader = informerReader(env, name, undefined, 2);
    const source = new RbacSource();
    const authorizer = await waitFor("the RBAC objects to be read whole", async () => {
      const built = await source.authorizer(name, reader).catch(() => undefined);
      return built?.authorize({ name: "u", groups: ["team-6"] }, { verb: "list", apiGroup: "", resource: "pods", namespace: "team-6" }).allowed ? built : undefined;
    });
    for (let i = 0; i < 7; i++) {
      expect(authorizer.authorize({ name: "u", groups: [`team-${i}`] }, { verb: "list", apiGroup: "", resource: "pods", namespace: `team-${i}` }).allowed).toBe(true);
    }
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("refuses rbac while a user's informer holds a reserved name (409 naming it, nothing changed)", async () => {
    const fake = await newCluster();
    const name = unique("rbac-taken");
    expect((await send("PUT", `/clusters/${name}`, { server: fake.url })).status).toBe(201);
    expect((await send("PUT", `/clusters/${name}/informers/rbac-roles`, { resource: "pods", watchTimeoutSeconds: 3 })).status).toBe(201);
    const refused = await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" });
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.message).toContain("'rbac-roles'");
    expect(await json(await call(`/clusters/${name}`))).toMatchObject({ authorization: "scopes", informers: 1 });
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("are deleted with their cluster, with or without cascade (only users' informers need one)", async () => {
    for (const query of ["?cascade=true", ""]) {
      const fake = await newCluster();
      const name = unique("rbac-del");
      expect((await send("PUT", `/clusters/${name}`, { server: fake.url, authorization: "rbac" })).status).toBe(201);
      expect(await listed(name)).toHaveLength(4);
      const deleted = await send("DELETE", `/clusters/${name}${query}`);
      expect(deleted.status, await deleted.clone().text()).toBe(204);
      expect((await call(`/clusters/${name}`)).status).toBe(404);
    }
  });

  it("follow a declared cluster's authorization in CLUSTERS, and INFORMERS cannot take their names", async () => {
    // A factory of its own, so this test's CLUSTERS does not meet the others'.
    const factory = env.FACTORY.getByName(unique("factory"));
    const name = unique("decl-rbac");
    const server = (await newCluster()).url;
    const rbac = await factory.syncDeclared("[]", JSON.stringify({ [name]: { server, authorization: "rbac" } }));
    expect(rbac.errors).toEqual([]);
    expect((await factory.list(name)).map((i) => [i.name, i.source]).sort()).toEqual(names.map((n) => [n, "internal"]));
    const taking = await factory.syncDeclared(JSON.stringify([{ name: "rbac-roles", cluster: name, resource: "pods" }]), JSON.stringify({ [name]: { server, authorization: "rbac" } }));
    expect(taking.errors).toEqual([expect.stringContaining(`${name}/rbac-roles: informer 'rbac-roles' of cluster '${name}' is kept by the factory`)]);
    expect((await factory.get({ cluster: name, name: "rbac-roles" }))?.source).toBe("internal");
    const scopes = await factory.syncDeclared("[]", JSON.stringify({ [name]: { server } }));
    expect(scopes.errors).toEqual([]);
    expect(await factory.list(name)).toEqual([]);
    expect((await factory.syncDeclared("[]", "{}")).errors).toEqual([]);
  });

  it("follow the default cluster's KUBE_API_AUTHORIZATION: rbac keeps them, and the registry names the cluster rbac", async () => {
    // A factory of its own: the default cluster of the shared one is every other test's.
    const factory = env.FACTORY.getByName(unique("factory"));
    const rbac = await withObjectEnv(factory, { KUBE_API_AUTHORIZATION: "rbac" }, async (instance) => ({
      sync: await instance.syncDeclared("[]", "{}"),
      informers: (await instance.list("default")).map((i) => [i.name, i.source]).sort(),
      registry: await instance.registry(),
      clusters: await instance.clusters(),
    }));
    try {
      expect(rbac.sync.errors).toEqual([]);
      expect(rbac.informers).toEqual(names.map((n) => [n, "internal"]));
      expect(rbac.registry).toMatchObject({ rbacClusters: ["default"] });
      expect(rbac.clusters.find((c) => c.name === "default")).toMatchObject({ authorization: "rbac" });
    } finally {
      // Unset again: the next sync removes them.
      expect((await factory.syncDeclared("[]", "{}")).errors).toEqual([]);
    }
    expect(await factory.list("default")).toEqual([]);
    expect(await factory.registry()).toMatchObject({ rbacClusters: [] });
  });

  it("refuses every route with 500 naming KUBE_API_AUTHORIZATION when it is not scopes or rbac", async () => {
    const response = await createApp().request("http://localhost/informers", {}, { ...env, KUBE_API_AUTHORIZATION: "abac" } as typeof env);
    expect(response.status).toBe(500);
    expect((await json(response)).error.message).toBe("KUBE_API_AUTHORIZATION must be one of scopes, rbac, not 'abac': set it in wrangler.toml [vars], or remove it");
  });
});
