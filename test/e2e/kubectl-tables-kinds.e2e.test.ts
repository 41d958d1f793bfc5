/**
 * kubectl's human-readable output on /k8s for every kind with server-side columns that the table
 * fixtures cover (issue 18, F19): pods, services, endpoints, events, the apps and batch workloads,
 * PVCs, ingresses, HPAs (autoscaling/v2), a custom resource with printer columns of every type, a
 * custom resource named Pod in its own group, and Secrets whose data the informer drops. For each,
 * the real kubectl 1.32 runs `get <kind> -A`, `get <kind> -A -o wide` and `get <kind> -A -w` (which
 * sees an object created) against /k8s and against the fake API server, whose Tables come from its
 * own reference printers (test/fake-apiserver/reference/), and the two must print the same, ages
 * aside. Each kind's header and some cells are also checked against what the fixtures say by hand
 * (table-fixtures*.ts), so a rule both printers got wrong the same way still fails.
 *
 * This file runs its own fake cluster and Worker, with an informer per kind: the global e2e Worker
 * mirrors only what the other files need, and each informer more slows every file's start.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { startFakeApiServer, type FakeApiServer } from "../fake-apiserver/server.ts";
import { e2e } from "./context.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { comparable, KUBECTL_MISSING, kubectlSuite, parseTable, printedByBoth, watchedByBoth, type TargetPair } from "./kubectl.ts";
import type { KindFixture } from "./table-fixtures.ts";
import { CORE_FIXTURES } from "./table-fixtures-core.ts";
import { OTHER_FIXTURES } from "./table-fixtures-others.ts";
import { WORKLOAD_FIXTURES } from "./table-fixtures-workloads.ts";
import { startWorker, waitInformersSynced, type RunningWorker } from "./worker.ts";

const FIXTURES: readonly KindFixture[] = [...CORE_FIXTURES, ...WORKLOAD_FIXTURES, ...OTHER_FIXTURES];

/** The informer of a fixture's resource: `deployments.apps` is named deployments-apps. */
function informerOf(fixture: KindFixture): Record<string, unknown> {
  return {
    name: fixture.resource.replaceAll(".", "-"),
    resource: fixture.resource,
    ...(fixture.apiVersion ? { apiVersion: fixture.apiVersion } : {}),
    // Without keepSecretData: the cache holds no secret values, and DATA must still count them.
    ...(fixture.resource === "secrets" ? { allowSensitive: true } : {}),
  };
}

let server: FakeApiServer;
let cluster: FakeCluster;
let worker: RunningWorker;
let pair: TargetPair;

beforeAll(async () => {
  server = await startFakeApiServer({ port: 0 });
  cluster = await FakeCluster.create(server.url, { id: "tables" });
  await cluster.apply(FIXTURES.flatMap((f) => f.objects.map((object) => ({ op: "create" as const, resource: f.resource, object }))));
  const informers = FIXTURES.map(informerOf);
  // kubectl sends a token only over https; this Worker is reached on loopback only.
  worker = await startWorker({ vars: { KUBE_API_URL: cluster.url, INFORMERS: JSON.stringify(informers), ALLOW_UNAUTHENTICATED: "true" } });
  await waitInformersSynced(worker, informers.map((i) => String(i.name)));
  const { scratchDir } = e2e();
  pair = {
    edge: { kubeconfig: writeKubeconfig(join(scratchDir, "tables-edge.kubeconfig"), { server: `${worker.url}/k8s` }) },
    fake: { kubeconfig: writeKubeconfig(join(scratchDir, "tables-fake.kubeconfig"), { server: cluster.url }) },
  };
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await server?.close();
});

const rowsByName = (output: string) => new Map(parseTable(output).rows.map((row) => [row.NAME, row]));

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get <kind> on /k8s prints what the API server prints"), () => {
  it.each(FIXTURES.map((f) => [f.resource, f] as const))("kubectl get %s -A, and -o wide", async (resource, fixture) => {
    const narrow = await printedByBoth(["get", resource, "-A"], pair);
    expect(comparable(narrow.edge)).toBe(comparable(narrow.fake));
    const wide = await printedByBoth(["get", resource, "-A", "-o", "wide"], pair);
    expect(comparable(wide.edge)).toBe(comparable(wide.fake));

    expect(parseTable(wide.edge).header).toEqual(fixture.header);
    expect(parseTable(narrow.edge).rows).toHaveLength(fixture.objects.length);
    // The cells the rules give, from /k8s and from the fake's reference printers alike.
    for (const [label, output] of Object.entries(wide)) {
      const rows = rowsByName(output);
      for (const [name, cells] of Object.entries(fixture.cells)) expect(rows.get(name), `${label}: ${name}`).toMatchObject(cells);
    }
  });

  // Last: each adds an object the commands above would list.
  it.each(FIXTURES.map((f) => [f.resource, f] as const))("kubectl get %s -A -w prints a created object's row as the API server does", async (resource, fixture) => {
    const printed = await watchedByBoth(["get", resource, "-A", "-w"], fixture.objects.length, () => cluster.create(resource, fixture.watched), pair);
    expect(comparable(printed.edge)).toBe(comparable(printed.fake));
    expect(parseTable(printed.edge).rows).toHaveLength(fixture.objects.length + 1);
  });
});
