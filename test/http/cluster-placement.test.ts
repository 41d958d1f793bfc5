/**
 * A cluster's placement through the Worker (review B11): `PUT /clusters/{name}` takes a
 * `locationHint` and a `jurisdiction`, shows them, creates the cluster's informer objects with its
 * hint (and serves them), and refuses to move a cluster with informers to
 * another jurisdiction (409, nothing changed).
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

const informerIds = async () => (await listDurableObjectIds(env.INFORMER)).map((id) => id.toString());

describe("cluster placement through the API", () => {
  // workerd does not implement jurisdictions ("Jurisdiction restrictions are not implemented in
  // workerd"): here objects are created with a location hint only, and a jurisdiction is checked
  // up to the point where an object would be addressed in it (placement.test.ts covers the stubs).
  it("creates a cluster's informers with its location hint, serves them, and refuses to move them to a jurisdiction", async () => {
    const upstream = await newCluster();
    const name = unique("weur");
    const created = await send("PUT", `/clusters/${name}`, { server: upstream.url, locationHint: "weur" });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(await json(created)).toMatchObject({ name, locationHint: "weur" });

    expect((await send("PUT", `/clusters/${name}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 3 })).status).toBe(201);
    await waitFor("the informer to sync", async () => (await json(await call(`/clusters/${name}/informers/pods`))).synced === true);
    // A location hint does not change an object's id: every caller reaches it by name.
    expect(await informerIds()).toContain(env.INFORMER.idFromName(`${name}/pods`).toString());
    expect((await call(`/k8s/clusters/${name}/api/v1/pods`)).status).toBe(200);

    // A hint may change (it applies to objects created later); the jurisdiction may not.
    expect((await send("PUT", `/clusters/${name}`, { server: upstream.url, locationHint: "eeur" })).status).toBe(200);
    const moved = await send("PUT", `/clusters/${name}`, { server: upstream.url, jurisdiction: "eu" });
    expect(moved.status).toBe(409);
    expect((await json(moved)).error.message).toMatch(new RegExp(`cluster '${name}' has 1 informer\\(s\\) in no jurisdiction: its objects cannot move to jurisdiction 'eu'`));
    const shown = await json(await call(`/clusters/${name}`));
    expect([shown.locationHint, shown.jurisdiction]).toEqual(["eeur", undefined]);

    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("takes a jurisdiction for a cluster without informers, shows it, and lets it change while there are none", async () => {
    const name = unique("eu");
    const server = (await newCluster()).url; // GET /clusters probes it
    const created = await send("PUT", `/clusters/${name}`, { server, jurisdiction: "eu" });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name, jurisdiction: "eu" });
    expect((await json(await call("/clusters"))).items.find((c: { name: string }) => c.name === name)).toMatchObject({ jurisdiction: "eu" });
    expect((await send("PUT", `/clusters/${name}`, { server, jurisdiction: "fedramp" })).status).toBe(200);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(204);
  });

  it("answers 400 naming the accepted values for an unknown hint or jurisdiction, and creates nothing", async () => {
    const name = unique("bad");
    for (const [field, value, values] of [["jurisdiction", "mars", "eu, fedramp, fedramp-high, us"], ["locationHint", "moon", "wnam, enam, sam, weur, eeur, apac, oc, afr, me"]]) {
      const response = await send("PUT", `/clusters/${name}`, { server: "https://k8s.example.com", [field!]: value });
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toContain(`${field}: must be one of ${values}`);
    }
    expect((await call(`/clusters/${name}`)).status).toBe(404);
  });

  it("keeps a declared cluster's stored jurisdiction when CLUSTERS changes it under informers, with an error line", async () => {
    // A factory of its own, so this test's CLUSTERS does not meet the others'.
    const factory = env.FACTORY.getByName(unique("factory"));
    const name = unique("decl");
    const server = (await newCluster()).url;
    const informers = JSON.stringify([{ resource: "pods", cluster: name, watchTimeoutSeconds: 3 }]);
    const first = await factory.syncDeclared(informers, JSON.stringify({ [name]: { server, locationHint: "weur" } }));
    expect(first.errors).toEqual([]);
    const moved = await factory.syncDeclared(informers, JSON.stringify({ [name]: { server, jurisdiction: "eu" } }));
    expect(moved.errors).toEqual([expect.stringMatching(new RegExp(`^CLUSTERS.${name}: cluster '${name}' has 1 informer\\(s\\) in no jurisdiction`))]);
    expect((await factory.clusters()).find((c) => c.name === name)).toMatchObject({ locationHint: "weur" });
    expect((await factory.clusters()).find((c) => c.name === name)?.jurisdiction).toBeUndefined();
    expect((await factory.syncDeclared("[]", "{}")).errors).toEqual([]);
  });
});
