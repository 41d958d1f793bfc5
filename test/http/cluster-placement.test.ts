/**
 * A cluster's placement through the Worker (review B11): `PUT /clusters/{name}` takes a
 * `locationHint` and a `jurisdiction`, shows them, creates the cluster's informer objects with its
 * hint (and serves them), and refuses to move a cluster with informers to
 * another jurisdiction (409, nothing changed).
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { createApp } from "../../src/http/app.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import { withObjectEnv } from "../helpers/object-env.ts";
import { forgetRegistry, placementIn } from "../../src/http/known-informer.ts";
import { ADMIN, call, createSynced, json, send, unique } from "../helpers/clusters.ts";
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

/**
 * The test factory, its registry answered whole at every check (never "unchanged", so a snapshot
 * this isolate cached is replaced), with or without the default cluster's jurisdiction record (see
 * deploymentWith).
 */
function factoryAnsweringWhole({ withholdRecord }: { withholdRecord: boolean }): typeof env.FACTORY {
  const whole = (stub: object) =>
    new Proxy(stub, {
      get(target, property) {
        if (property !== "registry") return Reflect.get(target, property);
        return async () => {
          const answer = await (target as { registry(): Promise<Record<string, unknown>> }).registry();
          if (!withholdRecord) return answer;
          const { defaultJurisdiction: _, ...rest } = answer;
          return rest;
        };
      },
    });
  return { getByName: (name: string, options?: object) => whole(env.FACTORY.getByName(name, options as never)) } as unknown as typeof env.FACTORY;
}

/**
 * A Durable Object namespace that records how each object is addressed, then reaches it plainly
 * (workerd has no jurisdictions: the recorded jurisdiction is what this Worker asked for).
 */
function recordingNamespace<N extends { getByName(name: string, options?: object): unknown }>(real: N) {
  const calls: { jurisdiction?: string; name: string; options?: object }[] = [];
  const scoped = (jurisdiction?: string): unknown => ({
    getByName: (name: string, options?: object) => {
      calls.push({ ...(jurisdiction === undefined ? {} : { jurisdiction }), name, ...(options === undefined ? {} : { options }) });
      return real.getByName(name, options);
    },
    jurisdiction: (next: string) => scoped(next),
  });
  return { namespace: scoped() as N, calls };
}

describe("the default cluster's placement (KUBE_API_LOCATION_HINT, KUBE_API_JURISDICTION)", () => {
  const app = createApp();
  let informer: string;
  beforeAll(async () => {
    informer = unique("dflt");
    await createSynced(`/informers/${informer}`);
  });

  /** The default cluster's informer as `settings` make the Worker address it, over a few routes. */
  /**
   * A deployment with `settings` whose factory recorded the default cluster's informers in them — as
   * one that set them before its first informer: the shared test factory's informers were made
   * with none, so its record is withheld (the refusal of a changed setting has tests of its own).
   */
  function deploymentWith(settings: Record<string, string | undefined>, more: Partial<typeof env> = {}) {
    forgetRegistry();
    return { ...env, ...settings, FACTORY: factoryAnsweringWhole({ withholdRecord: true }), ...more } as typeof env;
  }

  async function addressed(settings: Record<string, string | undefined>) {
    const recorded = recordingNamespace(env.INFORMER);
    const deployment = deploymentWith(settings, { INFORMER: recorded.namespace });
    const statuses = [];
    for (const path of [`/informers/${informer}`, `/informers/${informer}/subscriptions`, "/search/pods?clusters=default"]) {
      const response = await app.request(path, { headers: ADMIN }, deployment);
      statuses.push([path, response.status, response.status === 200 ? "" : await response.text()]);
    }
    return { statuses, calls: recorded.calls.filter((c) => c.name === informer) };
  }

  it("addresses the default cluster's informer in KUBE_API_JURISDICTION and near KUBE_API_LOCATION_HINT on every route", async () => {
    const { statuses, calls } = await addressed({ KUBE_API_JURISDICTION: "eu", KUBE_API_LOCATION_HINT: "weur" });
    expect(statuses.map(([, status]) => status), JSON.stringify(statuses)).toEqual([200, 200, 200]);
    expect(calls.length).toBe(3);
    for (const call of calls) expect(call).toEqual({ jurisdiction: "eu", name: informer, options: { locationHint: "weur" } });
  });

  it("addresses the default cluster's objects in KUBE_API_JURISDICTION on /k8s too: lists, gets, and watches through relays", async () => {
    const informers = recordingNamespace(env.INFORMER);
    const relays = recordingNamespace(env.RELAY);
    const deployment = deploymentWith({ KUBE_API_JURISDICTION: "eu" }, { INFORMER: informers.namespace, RELAY: relays.namespace });
    for (const path of ["/k8s/api/v1/pods?limit=1", "/k8s/api/v1/namespaces/default/pods/no-such-pod", "/k8s/api/v1/pods?watch=1&timeoutSeconds=1"]) {
      const response = await app.request(path, { headers: ADMIN }, deployment);
      expect([200, 404], path).toContain(response.status);
      await response.body?.cancel();
    }
    const calls = [...informers.calls, ...relays.calls];
    expect(calls.length).toBeGreaterThan(0);
    // Before, the default /k8s mount addressed them with no jurisdiction: other, empty objects.
    for (const call of calls) expect(call).toMatchObject({ jurisdiction: "eu" });
  });

  it("addresses it plainly when they are unset or empty, as before the settings existed", async () => {
    for (const settings of [{}, { KUBE_API_JURISDICTION: "", KUBE_API_LOCATION_HINT: "" }]) {
      const { statuses, calls } = await addressed(settings);
      expect(statuses.map(([, status]) => status)).toEqual([200, 200, 200]);
      expect(calls).toEqual([{ name: informer }, { name: informer }, { name: informer }]);
    }
  });

  it("is also where the factory creates and reaches the default cluster's informers, and what GET /clusters shows for it", async () => {
    const factory = env.FACTORY.getByName(unique("factory")); // its own, so nothing else meets these settings
    const name = unique("fact");
    const recorded = recordingNamespace(env.INFORMER);
    const settings = { KUBE_API_JURISDICTION: "eu", KUBE_API_LOCATION_HINT: "weur", INFORMER: recorded.namespace as unknown as string };
    await withObjectEnv(factory, settings, async (instance) => {
      unwrap(await instance.put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, name)));
      expect((await instance.clusters())[0]).toMatchObject({ name: "default", source: "environment", jurisdiction: "eu", locationHint: "weur" });
      unwrap(await instance.remove(name));
    });
    const calls = recorded.calls.filter((c) => c.name === name);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call).toEqual({ jurisdiction: "eu", name, options: { locationHint: "weur" } });
    // Unset, the view is as before: no placement fields.
    const plain = (await factory.clusters())[0]!;
    expect(["jurisdiction" in plain, "locationHint" in plain]).toEqual([false, false]);
  });

  it("refuses a KUBE_API_JURISDICTION changed after the default cluster's first informer (its objects cannot move), until it has none", async () => {
    const factory = env.FACTORY.getByName(unique("factory")); // its own, so nothing else meets these settings
    const recorded = recordingNamespace(env.INFORMER);
    const inEu = { KUBE_API_JURISDICTION: "eu", INFORMER: recorded.namespace as unknown as string };
    const [first, second] = [unique("moved"), unique("moved")];
    await withObjectEnv(factory, inEu, async (instance) => {
      unwrap(await instance.put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, first)));
      expect(await instance.registry()).toMatchObject({ defaultJurisdiction: "eu" });
    });
    // Unset (or another jurisdiction) now: refused, naming the setting, and nothing addressed elsewhere.
    await withObjectEnv(factory, { INFORMER: recorded.namespace as unknown as string }, async (instance) => {
      const calls = recorded.calls.length;
      await expect(instance.put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, second))).rejects.toThrow(
        "KUBE_API_JURISDICTION asks for no jurisdiction, but the default cluster's informers live in jurisdiction 'eu'",
      );
      expect(recorded.calls.slice(calls).filter((c) => c.jurisdiction !== "eu")).toEqual([]);
    });
    // Back in eu its informers are reached; once it has none, the setting may change.
    await withObjectEnv(factory, inEu, async (instance) => unwrap(await instance.remove(first)));
    await withObjectEnv(factory, { INFORMER: recorded.namespace as unknown as string }, async (instance) => {
      expect(await instance.registry()).not.toHaveProperty("defaultJurisdiction");
      unwrap(await instance.put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, second)));
      expect(await instance.registry()).toMatchObject({ defaultJurisdiction: "" });
      unwrap(await instance.remove(second));
    });
  });

  it("the Worker refuses it too, from the registry's record: 500 Misconfigured naming KUBE_API_JURISDICTION, on reads and on creating an informer", async () => {
    // The shared test factory's default informers live in no jurisdiction (recorded ""): "eu" now is a move.
    forgetRegistry();
    const moved = { ...env, KUBE_API_JURISDICTION: "eu", FACTORY: factoryAnsweringWhole({ withholdRecord: false }) } as typeof env;
    for (const [method, path] of [["GET", `/informers/${informer}`], ["PUT", `/informers/${unique("moved")}`]] as const) {
      const response = await app.request(path, { method, headers: { ...ADMIN, "content-type": "application/json" }, ...(method === "PUT" ? { body: JSON.stringify({ resource: "pods" }) } : {}) }, moved);
      expect([method, response.status]).toEqual([method, 500]);
      expect(await response.json()).toEqual({ error: { code: "Misconfigured", message: expect.stringContaining("KUBE_API_JURISDICTION asks for jurisdiction 'eu', but the default cluster's informers live in no jurisdiction") } });
    }

    const snapshot = { version: "1", informers: [], clusters: ["default"], placements: {}, rbacClusters: [], defaultJurisdiction: "eu" };
    expect(placementIn({ ...env, KUBE_API_JURISDICTION: "eu" } as typeof env, snapshot, "default")).toEqual({ jurisdiction: "eu" });
    expect(() => placementIn({ ...env, KUBE_API_JURISDICTION: "us" } as typeof env, snapshot, "default")).toThrow(
      "KUBE_API_JURISDICTION asks for jurisdiction 'us', but the default cluster's informers live in jurisdiction 'eu'",
    );
    expect(placementIn(env, { ...snapshot, defaultJurisdiction: undefined }, "default")).toEqual({});
  });

  it("fails closed on a value that is not Cloudflare's: 500 Misconfigured naming the setting and the accepted values, nothing addressed", async () => {
    for (const [name, value, accepted] of [
      ["KUBE_API_JURISDICTION", "EU", "eu, fedramp, fedramp-high, us"],
      ["KUBE_API_LOCATION_HINT", "europe", "wnam, enam, sam, weur, eeur, apac, oc, afr, me"],
    ] as const) {
      const { statuses, calls } = await addressed({ [name]: value });
      for (const [path, status, body] of statuses) {
        expect([path, status], String(body)).toEqual([path, 500]);
        expect(JSON.parse(String(body))).toEqual({ error: { code: "Misconfigured", message: expect.stringContaining(`${name} must be one of ${accepted}, not '${value}'`) } });
      }
      expect(calls).toEqual([]);
    }
  });
});

describe("the factory's jurisdiction (FACTORY_JURISDICTION)", () => {
  const app = createApp();
  const routes = ["/clusters", "/informers"];

  async function addressed(settings: Record<string, string | undefined>) {
    const recorded = recordingNamespace(env.FACTORY);
    const deployment = { ...env, ...settings, FACTORY: recorded.namespace } as typeof env;
    const statuses = [];
    for (const path of routes) {
      const response = await app.request(path, { headers: ADMIN }, deployment);
      statuses.push([response.status, response.status === 200 ? "" : await response.text()]);
    }
    return { statuses, calls: recorded.calls };
  }

  it("addresses the factory in FACTORY_JURISDICTION, and plainly when it is unset or empty", async () => {
    const placed = await addressed({ FACTORY_JURISDICTION: "eu" });
    expect(placed.statuses).toEqual([[200, ""], [200, ""]]);
    expect(placed.calls.length).toBeGreaterThanOrEqual(routes.length);
    for (const call of placed.calls) expect(call).toEqual({ jurisdiction: "eu", name: FACTORY_NAME });
    for (const settings of [{}, { FACTORY_JURISDICTION: "" }]) {
      const plain = await addressed(settings);
      expect(plain.statuses).toEqual([[200, ""], [200, ""]]);
      for (const call of plain.calls) expect(call).toEqual({ name: FACTORY_NAME });
    }
  });

  it("fails closed on a value that is not a jurisdiction: 500 Misconfigured naming FACTORY_JURISDICTION, the factory untouched", async () => {
    const { statuses, calls } = await addressed({ FACTORY_JURISDICTION: "europe" });
    for (const [status, body] of statuses) {
      expect(status).toBe(500);
      expect(JSON.parse(String(body)).error).toEqual({ code: "Misconfigured", message: expect.stringContaining("FACTORY_JURISDICTION must be one of eu, fedramp, fedramp-high, us, not 'europe'") });
    }
    expect(calls).toEqual([]);
  });
});
