// Tables on the fake API server, and the comparison that makes them worth having: for the kinds the
// fake has reference printers for, its Table (written independently, reference-printers.ts) and
// ours (src/k8s/table.ts) agree on every column and every cell. AGE is left out of the cell
// comparison only because the two are computed a moment apart.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { crdPath, describeFromCrd } from "../../src/kube/resource-description.ts";
import { printedKindOf, table } from "../../src/k8s/table.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { configMap, FakeCluster, namespace, node } from "./client.ts";
import type { FakeObject } from "./types.ts";
import { CORE_FIXTURES } from "../e2e/table-fixtures-core.ts";
import { OTHER_FIXTURES } from "../e2e/table-fixtures-others.ts";
import { WORKLOAD_FIXTURES } from "../e2e/table-fixtures-workloads.ts";

const TABLE_FIXTURES = [...CORE_FIXTURES, ...WORKLOAD_FIXTURES, ...OTHER_FIXTURES];

const BASE = env.FAKE_APISERVER_URL;
const TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

// `any`: assertions read arbitrary fields of Table JSON.
async function getTable(cluster: FakeCluster, path: string): Promise<any> {
  const response = await cluster.kube(path, { headers: { accept: TABLE_ACCEPT } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("application/json");
  return response.json();
}

async function seeded(): Promise<FakeCluster> {
  const cluster = await FakeCluster.create(BASE);
  const readyNode = node({ name: "n1" }) as FakeObject & { status?: unknown };
  readyNode.metadata.labels = { "node-role.kubernetes.io/worker": "" };
  readyNode.status = {
    conditions: [{ type: "Ready", status: "True" }],
    addresses: [{ type: "InternalIP", address: "10.0.0.7" }],
    nodeInfo: { kubeletVersion: "v1.32.1", osImage: "Debian", kernelVersion: "6.1.0", containerRuntimeVersion: "containerd://1.7.0" },
  };
  await cluster.apply([
    { op: "create", resource: "namespaces", object: namespace({ name: "ns" }) },
    { op: "create", resource: "configmaps", object: configMap({ name: "a", namespace: "ns", data: { x: "1", y: "2" } }) },
    { op: "create", resource: "configmaps", object: configMap({ name: "b", namespace: "ns" }) },
    { op: "create", resource: "nodes", object: readyNode },
    { op: "create", resource: "nodes", object: node({ name: "n2", unschedulable: true }) },
  ]);
  return cluster;
}

const shape = (columns: any[]) => columns.map((c) => [c.name, c.type, c.format, c.priority]);
const withoutAge = (columns: { name: string }[], cells: unknown[]) => cells.filter((_, i) => columns[i]?.name !== "Age");

describe("fake API server Tables", () => {
  it("answers a list with a Table: columns, cells, PartialObjectMetadata rows and the list's resourceVersion", async () => {
    const cluster = await seeded();
    const body = await getTable(cluster, "/api/v1/namespaces/ns/configmaps");
    expect(body).toMatchObject({ kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: { resourceVersion: expect.any(String) } });
    expect(body.columnDefinitions.map((c: any) => [c.name, c.type, c.format, c.priority])).toEqual([
      ["Name", "string", "name", 0],
      ["Data", "string", "", 0],
      ["Age", "string", "", 0],
    ]);
    expect(body.rows.map((r: any) => r.cells.slice(0, 2))).toEqual([["a", 2], ["b", 0]]);
    expect(body.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "a", namespace: "ns" } });
  });

  it("answers a get with a one-row Table and honours includeObject=None", async () => {
    const cluster = await seeded();
    const body = await getTable(cluster, "/api/v1/nodes/n2?includeObject=None");
    expect(body.rows).toEqual([{ cells: ["n2", "Ready,SchedulingDisabled", "<none>", expect.any(String), "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"], object: null }]);
  });

  it.each([
    ["ConfigMap", "/api/v1/configmaps"],
    ["Node", "/api/v1/nodes"],
    ["Namespace", "/api/v1/namespaces"],
  ])("prints %s exactly as src/k8s/table.ts does", async (kind, path) => {
    const cluster = await seeded();
    const fake = await getTable(cluster, path);
    const list = (await (await cluster.kube(path)).json()) as { items: KubeObject[] };
    const ours = table({ group: "", kind }, list.items, {}, { now: Date.now(), includeObject: "Metadata", apiVersion: "meta.k8s.io/v1" });
    expect(shape(fake.columnDefinitions)).toEqual(shape(ours.columnDefinitions ?? []));
    expect(fake.rows.map((r: any) => withoutAge(fake.columnDefinitions, r.cells))).toEqual(ours.rows.map((r) => withoutAge(ours.columnDefinitions ?? [], r.cells)));
  });

  // The kubectl e2e test compares printed text; this compares the JSON, where 3 and "3" differ.
  it.each(TABLE_FIXTURES.map((f) => [f.resource, f] as const))("prints the table fixtures' %s as src/k8s/table.ts does, cell types included", async (resource, fixture) => {
    const cluster = await FakeCluster.create(BASE);
    await cluster.apply(fixture.objects.map((object) => ({ op: "create" as const, resource, object })));
    const { apiVersion, kind } = fixture.objects[0]! as { apiVersion: string; kind: string };
    const [plural, ...group] = resource.split(".");
    const path = `${apiVersion.includes("/") ? "/apis" : "/api"}/${apiVersion}/${plural}`;
    const fake = await getTable(cluster, path);
    const list = (await (await cluster.kube(path)).json()) as { items: KubeObject[] };
    // A custom resource prints from the CRD the fake serves, as /k8s reads it.
    const crd = fixture.apiVersion ? describeFromCrd(await (await cluster.kube(crdPath(plural!, group.join(".")))).json(), "v1") : undefined;
    const ours = table(printedKindOf({ group: group.join("."), kind, printerColumns: crd?.printerColumns ?? [] }), list.items, {}, { now: Date.now(), includeObject: "Metadata", apiVersion: "meta.k8s.io/v1" });
    expect(shape(fake.columnDefinitions)).toEqual(shape(ours.columnDefinitions ?? []));
    expect(fake.rows.map((r: any) => withoutAge(fake.columnDefinitions, r.cells))).toEqual(ours.rows.map((r) => withoutAge(ours.columnDefinitions ?? [], r.cells)));
  });
});
