/**
 * Custom resources in `/k8s` discovery whether or not an object is cached (issue 18, F11): kind,
 * scope, singular and short names come from the CRD, read from the API server once and kept in the
 * informer's object (with the CRD's printer columns), so `kubectl get widgets` says "No resources
 * found" and a RESTMapper finds the kind on an empty cluster.
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { informerStub } from "../../src/clusters/stubs.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { widget } from "../fake-apiserver/builders.ts";
import { addCluster, createSynced, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

const AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
let cluster: string;
let fake: FakeCluster;

beforeAll(async () => {
  fake = await newCluster();
  cluster = unique("crd");
  await addCluster(cluster, fake);
  // No widget exists: nothing in the cache can tell its kind.
  await createSynced(`/clusters/${cluster}/informers/widgets`, { resource: "widgets.example.com", apiVersion: "example.com/v1" });
}, 120_000);

const k8s = (path: string, accept = "application/json") =>
  exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster}${path}`, { headers: { accept } }));

describe("/k8s custom resources", () => {
  it("lists an empty custom resource in discovery with the CRD's names and scope", async () => {
    const list = await k8s("/apis/example.com/v1");
    expect(list.status).toBe(200);
    expect(((await list.json()) as any).resources).toEqual([
      { name: "widgets", singularName: "widget", namespaced: true, kind: "Widget", verbs: ["get", "list", "watch"], shortNames: ["wd"] },
    ]);
    const aggregated = (await (await k8s("/apis", AGGREGATED)).json()) as any;
    const group = aggregated.items.find((item: any) => item.metadata.name === "example.com");
    expect(group.versions[0].resources[0]).toMatchObject({ resource: "widgets", scope: "Namespaced", singularResource: "widget", shortNames: ["wd"] });
  });

  it("answers an empty list, not 404", async () => {
    const response = await k8s("/apis/example.com/v1/widgets");
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ kind: "WidgetList", apiVersion: "example.com/v1", items: [] });
  });

  it("keeps what the CRD says in the informer's object, printer columns included", async () => {
    await k8s("/apis/example.com/v1");
    const stored = await runInDurableObject(informerStub(env, { cluster, name: "widgets" }), (_, state) =>
      state.storage.sql.exec<{ resource: string; description: string }>("SELECT resource, description FROM resource_description").toArray(),
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.resource).toBe("widgets.example.com/v1");
    expect(JSON.parse(stored[0]!.description)).toMatchObject({
      kind: "Widget",
      source: "crd",
      printerColumns: [
        { name: "Color", type: "string", jsonPath: ".spec.color", priority: 0 },
        { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
      ],
    });
  });

  it("prints the CRD's additionalPrinterColumns in Table output, as the API server does", async () => {
    await fake.create("widgets", widget({ name: "w1", namespace: "default", color: "red" }));
    await waitFor("the widget to be cached", async () => (((await (await k8s("/apis/example.com/v1/widgets")).json()) as any).items ?? []).length === 1);
    const table = (await (await k8s("/apis/example.com/v1/namespaces/default/widgets", TABLE)).json()) as any;
    expect(table.columnDefinitions.map((c: any) => [c.name, c.type, c.format])).toEqual([
      ["Name", "string", "name"],
      ["Color", "string", ""],
      ["Age", "date", ""],
    ]);
    expect(table.rows).toHaveLength(1);
    expect(table.rows[0].cells.slice(0, 2)).toEqual(["w1", "red"]);
    expect(table.rows[0].cells[2]).toMatch(/^\d+(s|m|h|d)/);
  });
});
