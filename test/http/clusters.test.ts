/**
 * Clusters through the Worker's front door (issue 12, API.md "Clusters"): run-time clusters with
 * write-only tokens, informers per cluster under /clusters/{cluster}/informers (each its own
 * Durable Object, names unique per cluster), health, removal with and without cascade, and bad
 * input: an unknown cluster is a 404 on every route and creates no storage, an invalid name a 400.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { pod } from "../fake-apiserver/builders.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { addCluster, ADMIN, call, createSynced, json, objectIds, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

/** Pod names an informer's cache holds, sorted. */
async function cachedNames(path: string): Promise<string[]> {
  const body = await json(await call(`${path}/objects?limit=1000`));
  return body.items.map((o: { metadata: { name: string } }) => o.metadata.name).sort();
}

async function podNames(cluster: FakeCluster): Promise<string[]> {
  return (await cluster.state("pods")).items.map((o) => o.metadata.name as string).sort();
}

describe("clusters", () => {
  it("mirrors two API servers side by side: the same informer name in each, each cache its own server's", async () => {
    const [east, west] = [await newCluster(), await newCluster()];
    await east.create("pods", pod({ name: "east-1", namespace: "default" }));
    await west.create("pods", pod({ name: "west-1", namespace: "default" }));
    await west.create("pods", pod({ name: "west-2", namespace: "default" }));
    const [a, b] = [unique("east"), unique("west")];
    await addCluster(a, east);
    await addCluster(b, west);

    const created = await createSynced(`/clusters/${a}/informers/pods`);
    expect(created).toMatchObject({ name: "pods", cluster: a });
    await createSynced(`/clusters/${b}/informers/pods`);
    expect(await cachedNames(`/clusters/${a}/informers/pods`)).toEqual(await podNames(east));
    expect(await cachedNames(`/clusters/${b}/informers/pods`)).toEqual(await podNames(west));

    // Changes reach only their own cluster's cache.
    await west.delete("pods", pod({ name: "west-1", namespace: "default" }));
    await east.create("pods", pod({ name: "east-2", namespace: "default" }));
    await waitFor("both caches to follow", async () =>
      JSON.stringify(await cachedNames(`/clusters/${a}/informers/pods`)) === JSON.stringify(await podNames(east)) &&
      JSON.stringify(await cachedNames(`/clusters/${b}/informers/pods`)) === JSON.stringify(await podNames(west)),
    );
    expect(await cachedNames(`/clusters/${b}/informers/pods`)).toEqual(["west-2"]);

    // Listed per cluster, and each status names its cluster.
    const listed = await json(await call(`/clusters/${b}/informers`));
    expect(listed.items.map((i: { name: string; cluster: string }) => [i.cluster, i.name])).toEqual([[b, "pods"]]);
    const clusters = await json(await call("/clusters"));
    expect(clusters.items.find((c: { name: string }) => c.name === a)).toMatchObject({
      server: east.url,
      source: "api",
      credentials: [],
      informers: 1,
      health: { reachable: true, version: "v1.34.0-fake" },
    });
    expect(clusters.items[0]).toMatchObject({ name: "default", source: "environment" });

    expect((await send("DELETE", `/clusters/${a}?cascade=true`)).status).toBe(204);
    expect((await send("DELETE", `/clusters/${b}?cascade=true`)).status).toBe(204);
  });

  it("keeps a run-time token write-only: it authenticates the watch and appears in no answer", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const guarded = await FakeCluster.create(env.FAKE_APISERVER_URL, { token });
    await guarded.create("pods", pod({ name: "p-1", namespace: "default" }));
    const name = unique("guarded");
    const answers: string[] = [];
    const keep = async (response: Response) => {
      answers.push(await response.clone().text());
      return response;
    };
    const created = await keep(await send("PUT", `/clusters/${name}`, { server: guarded.url, token }));
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name, server: guarded.url, credentials: ["token"] });
    await keep(await send("PUT", `/clusters/${name}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 3 }));
    await waitFor("the guarded informer to sync", async () => (await json(await keep(await call(`/clusters/${name}/informers/pods`)))).synced === true);
    expect(await cachedNames(`/clusters/${name}/informers/pods`)).toEqual(["p-1"]);
    const listed = await json(await keep(await call("/clusters")));
    expect(listed.items.find((c: { name: string }) => c.name === name).health).toEqual({ reachable: true, version: "v1.34.0-fake" });
    await keep(await call(`/clusters/${name}`));
    await keep(await call("/metrics", { headers: ADMIN }));
    await keep(await call("/", { headers: ADMIN }));
    for (const answer of answers) expect(answer).not.toContain(token);

    // A wrong token: the cluster is there, its credentials are not good.
    expect((await send("PUT", `/clusters/${name}`, { server: guarded.url, token: "wrong" })).status).toBe(200);
    const health = (await json(await call(`/clusters/${name}`))).health;
    expect(health).toMatchObject({ reachable: true, error: expect.stringContaining("401") });
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("probes each cluster's health once per 15 s and connection, however often /clusters is read", async () => {
    const server = await newCluster();
    const name = unique("probed");
    await addCluster(name, server);
    const versionCalls = async () => (await server.requests()).filter((r) => r.path.endsWith("/version")).length;
    for (let i = 0; i < 5; i++) expect((await json(await call("/clusters"))).items.find((c: { name: string }) => c.name === name).health.reachable).toBe(true);
    await json(await call(`/clusters/${name}`));
    expect(await versionCalls()).toBe(1);
    // Another connection is another answer: probed afresh.
    expect((await send("PUT", `/clusters/${name}`, { server: server.url, token: "another" })).status).toBe(200);
    await json(await call(`/clusters/${name}`));
    expect(await versionCalls()).toBe(2);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(204);
  });

  it("relists from the new API server when a cluster's URL changes", async () => {
    const [before, after] = [await newCluster(), await newCluster()];
    await before.create("pods", pod({ name: "old", namespace: "default" }));
    await after.create("pods", pod({ name: "new", namespace: "default" }));
    const name = unique("moving");
    await addCluster(name, before);
    await createSynced(`/clusters/${name}/informers/pods`);
    expect(await cachedNames(`/clusters/${name}/informers/pods`)).toEqual(["old"]);
    expect((await send("PUT", `/clusters/${name}`, { server: after.url })).status).toBe(200);
    await waitFor("the cache to mirror the new server", async () => (await cachedNames(`/clusters/${name}/informers/pods`)).join() === "new");
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("refuses to remove a cluster its informers use unless cascading, and never the default one", async () => {
    const cluster = await newCluster();
    const name = unique("busy");
    await addCluster(name, cluster);
    await createSynced(`/clusters/${name}/informers/pods`);
    const refused = await send("DELETE", `/clusters/${name}`);
    expect(refused.status).toBe(409);
    expect((await json(refused)).error.message).toContain("cascade=true");
    expect((await call(`/clusters/${name}/informers/pods`)).status).toBe(200);

    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
    expect((await call(`/clusters/${name}`)).status).toBe(404);
    expect((await call(`/clusters/${name}/informers/pods`)).status).toBe(404);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(404);

    for (const method of ["PUT", "DELETE"]) {
      const response = await send(method, "/clusters/default", method === "PUT" ? { server: cluster.url } : undefined);
      expect(response.status).toBe(409);
      expect((await json(response)).error.message).toContain("KUBE_API_URL");
    }
  });

  it("answers 404 for an unknown cluster on every route and creates nothing", async () => {
    const before = await objectIds();
    const ghost = unique("ghost");
    const routes: [string, string, unknown?][] = [
      ["GET", `/clusters/${ghost}`],
      ["GET", `/clusters/${ghost}/informers`],
      ["PUT", `/clusters/${ghost}/informers/pods`, { resource: "pods" }],
      ["GET", `/clusters/${ghost}/informers/pods`],
      ["DELETE", `/clusters/${ghost}/informers/pods`],
      ["GET", `/clusters/${ghost}/informers/pods/objects`],
      ["GET", `/clusters/${ghost}/informers/pods/objects/default/web-1`],
      ["GET", `/clusters/${ghost}/informers/pods/indexes/namespace`],
      ["GET", `/clusters/${ghost}/informers/pods/subscriptions`],
      ["POST", `/clusters/${ghost}/informers/pods/subscriptions`, { url: "https://hooks.example.com/x" }],
      ["DELETE", `/clusters/${ghost}`],
    ];
    for (const [method, path, body] of routes) {
      const response = await send(method, path, body);
      expect([`${method} ${path}`, response.status]).toEqual([`${method} ${path}`, 404]);
      expect((await json(response)).error.message).toContain(`'${ghost}'`);
    }
    // A known cluster without that informer: 404 naming both.
    const known = unique("known");
    await addCluster(known, await newCluster());
    const missing = await call(`/clusters/${known}/informers/nope/objects`);
    expect([missing.status, (await json(missing)).error.message]).toEqual([404, `informer 'nope' in cluster '${known}' not found`]);
    expect(await objectIds()).toEqual(before);
    expect((await send("DELETE", `/clusters/${known}`)).status).toBe(204);
  });

  it("answers 400 for an invalid cluster name or body and changes nothing", async () => {
    const before = await json(await call("/clusters"));
    for (const path of ["/clusters/Not_A_Name", "/clusters/Not_A_Name/informers", "/clusters/Not_A_Name/informers/pods/objects", `/clusters/${"x".repeat(64)}`]) {
      const response = await call(path, { headers: ADMIN });
      expect([path, response.status]).toEqual([path, 400]);
      expect((await json(response)).error.message).toContain("cluster name");
    }
    const name = unique("bad");
    const bodies: unknown[] = [
      {},
      { server: "ftp://example.com" },
      { server: "https://user:pass@example.com" },
      { server: "https://example.com/k8s?token=secret" },
      { server: "https://example.com/#secret" },
      { server: "https://example.com", token: "" },
      { server: "https://example.com", tokenSecret: "KUBE_TOKEN" },
      "not json",
    ];
    for (const body of bodies) {
      const response = await send("PUT", `/clusters/${name}`, body);
      expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect((await send("PUT", "/clusters/Bad_Name", { server: "https://example.com" })).status).toBe(400);
    // A spec naming another cluster than its URL.
    const cluster = unique("c");
    await addCluster(cluster, await newCluster());
    const mismatch = await send("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", cluster: "default" });
    expect([mismatch.status, (await json(mismatch)).error.message]).toEqual([400, `the spec's cluster 'default' does not match the URL's '${cluster}'`]);
    expect((await send("DELETE", `/clusters/${cluster}`)).status).toBe(204);
    expect(await json(await call("/clusters"))).toEqual(before);
  });

  it("refuses a plain-http, IP-literal or not-allowed server with a 400 that names the rule and changes nothing (issue 17)", async () => {
    const before = await json(await call("/clusters"));
    const name = unique("egress");
    const refused = async (server: string, message: string) => {
      const response = await send("PUT", `/clusters/${name}`, { server });
      expect([server, response.status, await json(response)]).toEqual([server, 400, { error: { code: "BadRequest", message } }]);
    };
    await refused("http://k8s.example.com", "invalid cluster: server: must be https (got http; plain http only for loopback hosts, in local development)");
    await refused("https://10.0.0.1:6443", "invalid cluster: server: 10.0.0.1 is an IP address: only host names may be used (loopback excepted, for local development)");
    // CLUSTER_ALLOWED_HOSTS is read per request; set for this check only.
    const vars = env as { CLUSTER_ALLOWED_HOSTS?: string };
    vars.CLUSTER_ALLOWED_HOSTS = "example.com";
    try {
      await refused("https://k8s.badexample.com", "invalid cluster: server: k8s.badexample.com is not allowed by CLUSTER_ALLOWED_HOSTS (example.com)");
    } finally {
      delete vars.CLUSTER_ALLOWED_HOSTS;
    }
    expect(await json(await call("/clusters"))).toEqual(before);
  });

  it("needs the admin token to change clusters and the read token to list them", async () => {
    expect((await call("/clusters/x", { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(401);
    expect((await call("/clusters/x", { method: "DELETE" })).status).toBe(401);
    expect((await call("/clusters/default/informers", { method: "GET" })).status).toBe(200);
  });
});
