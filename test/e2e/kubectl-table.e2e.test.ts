/**
 * kubectl's human-readable `get` on /k8s (server-side Table output, issue 8): the real columns and, for
 * every seeded object, the cells kubectl's printers would compute. The expected cells are literal, in
 * fixtures.ts, derived by hand from each object by the rules of reference/kubernetes-api-server-facts.md
 * §2 (printers.go), not from our code. AGE is only checked to be a duration, since the objects were
 * created when the run started.
 */
import { describe, expect, it } from "vitest";
import { DEPLOYMENTS, PODS } from "./fixtures.ts";
import { KUBECTL_MISSING, kubectl, kubectlSuite, parseTable } from "./kubectl.ts";

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
