/**
 * kubectl's human-readable `get` on /k8s (server-side Table output, issue 8): the real columns and, for
 * every seeded object, the cells kubectl's printers would compute. The expected cells are literal, in
 * fixtures.ts, derived by hand from each object by the rules of reference/kubernetes-api-server-facts.md
 * §2 (printers.go), not from our code. AGE is only checked to be a duration, since the objects were
 * created when the run started.
 *
 * For the other kinds (issue 18, F19) the reference is the fake API server, which prints Tables from
 * printers of its own (test/fake-apiserver/reference-printers.ts): the same kubectl command against
 * /k8s and against the fake must print the same text, ages aside (the two answers are a moment apart,
 * and an age changes the column widths).
 */
import { describe, expect, it } from "vitest";
import { fakeCluster } from "./context.ts";
import { DEPLOYMENTS, PODS } from "./fixtures.ts";
import { comparable, KUBECTL_MISSING, kubectl, kubectlSuite, parseTable, printedByBoth, watchedByBoth } from "./kubectl.ts";

const AGE = /^(\d+(s|m|h|d|y))+$/;

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get tables on /k8s"), () => {
  it.each(["shop", "ops", "batch"])("prints NAME READY STATUS RESTARTS AGE for the pods in %s", async (namespace) => {
    const result = await kubectl(["get", "pods", "-n", namespace], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    const { header, rows } = parseTable(result.stdout);
    expect(header).toEqual(["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    const expected = PODS.filter((p) => p.namespace === namespace)
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .map((p) => ({ NAME: p.name, READY: p.row[0], STATUS: p.row[1], RESTARTS: p.row[2] }));
    expect(rows.map(({ AGE: _age, ...cells }) => cells)).toEqual(expected);
    for (const row of rows) expect(row.AGE).toMatch(AGE);
  });

  it("prints NAMESPACE NAME READY UP-TO-DATE AVAILABLE AGE for deployments -A", async () => {
    const result = await kubectl(["get", "deployments", "-A"], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    const { header, rows } = parseTable(result.stdout);
    expect(header).toEqual(["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    // The API server lists in key order: namespace, then name.
    const expected = [...DEPLOYMENTS]
      .sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1))
      .map((d) => ({ NAMESPACE: d.namespace, NAME: d.name, READY: d.row[0], "UP-TO-DATE": d.row[1], AVAILABLE: d.row[2] }));
    expect(rows.map(({ AGE: _age, ...cells }) => cells)).toEqual(expected);
    for (const row of rows) expect(row.AGE).toMatch(AGE);
  });

  it("adds the NAMESPACE column for pods -A and keeps the cells", async () => {
    const result = await kubectl(["get", "pods", "-A", "-l", "app=web,!churn"], { config: "edge" });
    expect(result.code, result.stderr).toBe(0);
    const { header, rows } = parseTable(result.stdout);
    expect(header).toEqual(["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    const expected = PODS.filter((p) => p.labels.app === "web")
      .sort((a, b) => (`${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1))
      .map((p) => ({ NAMESPACE: p.namespace, NAME: p.name, READY: p.row[0], STATUS: p.row[1], RESTARTS: p.row[2] }));
    expect(rows.map(({ AGE: _age, ...cells }) => cells)).toEqual(expected);
  });
});

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl get tables on /k8s equal the API server's"), () => {
  it.each([
    [["get", "configmaps", "-A"], ["NAMESPACE", "NAME", "DATA", "AGE"]],
    [["get", "configmaps", "-A", "-o", "wide"], ["NAMESPACE", "NAME", "DATA", "AGE"]],
    [["get", "nodes"], ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]],
    [["get", "nodes", "-o", "wide"], ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]],
    [["get", "namespaces"], ["NAME", "STATUS", "AGE"]],
    [["get", "nodes", "node-c"], ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]],
  ])("kubectl %j prints what the API server prints", async (args, header) => {
    const { edge, fake } = await printedByBoth(args);
    expect(comparable(edge)).toBe(comparable(fake));
    expect(parseTable(edge).header).toEqual(header);
  });

  it("prints the cells the rules give (spot check, independent of both servers)", async () => {
    const { rows } = parseTable((await kubectl(["get", "nodes", "-o", "wide"], { config: "edge" })).stdout);
    expect(rows.find((r) => r.NAME === "node-a")).toMatchObject({ STATUS: "Ready", ROLES: "control-plane", VERSION: "v1.32.2", "INTERNAL-IP": "10.0.0.10", "EXTERNAL-IP": "203.0.113.10" });
    expect(rows.find((r) => r.NAME === "node-b")).toMatchObject({ STATUS: "NotReady", ROLES: "worker" });
    expect(rows.find((r) => r.NAME === "node-c")).toMatchObject({ STATUS: "Unknown,SchedulingDisabled", ROLES: "<none>", VERSION: "" });
  });

  // Run last: each adds an object the commands above would list.
  it.each([
    {
      args: ["get", "configmaps", "-n", "ops", "-w"],
      initialRows: 1,
      create: { resource: "configmaps", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "watched", namespace: "ops" }, data: { k: "v" } } },
      cells: (r: Record<string, string>) => [r.NAME, r.DATA],
      expected: [["certs", "2"], ["watched", "1"]],
    },
    {
      args: ["get", "nodes", "-o", "wide", "-w"],
      initialRows: 3,
      create: { resource: "nodes", object: { apiVersion: "v1", kind: "Node", metadata: { name: "node-w" }, spec: {}, status: { conditions: [{ type: "Ready", status: "True" }] } } },
      cells: (r: Record<string, string>) => [r.NAME, r.STATUS, r["OS-IMAGE"]],
      expected: [["node-a", "Ready", "Debian GNU/Linux 12 (bookworm)"], ["node-b", "NotReady", "<unknown>"], ["node-c", "Unknown,SchedulingDisabled", "<unknown>"], ["node-w", "Ready", "<unknown>"]],
    },
  ])("kubectl $args prints the initial rows and a new object's row as from the API server", async ({ args, initialRows, create, cells, expected }) => {
    const printed = await watchedByBoth(args, initialRows, () => fakeCluster().apply([{ op: "create", ...create }]));
    expect(comparable(printed.edge)).toBe(comparable(printed.fake));
    expect(parseTable(printed.edge).rows.map(cells)).toEqual(expected);
  });
});
