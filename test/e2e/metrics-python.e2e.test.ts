/**
 * GET /metrics of the e2e Worker (informers synced, subscriptions created by other suites or here)
 * read by the official Prometheus client for Python (Debian's python3-prometheus-client, whose
 * parser follows the text format and OpenMetrics' family rules): every line parses, no two families
 * share a name (a counter `x_total` belongs to family `x`, so a gauge `x` beside it is a clash a
 * strict scraper refuses), counters are `_total`, and every histogram series has its `_sum`,
 * `_count` and a `+Inf` bucket equal to the count; every informer and subscription sample names its
 * cluster (issue 12). Skipped with the reason in its name when the
 * module is missing (.ci/run installs it where it can).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { e2e } from "./context.ts";

const PYTHON = process.env.E2E_PYTHON ?? "/usr/bin/python3";
const SCRIPT = fileURLToPath(new URL("./python/metrics.py", import.meta.url));
const PYTHON_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "PYTHONPATH" && name !== "PYTHONHOME"));

function missingReason(): string | undefined {
  const probe = spawnSync(PYTHON, ["-c", "import prometheus_client"], { env: PYTHON_ENV, encoding: "utf8", timeout: 15_000 });
  if (probe.error) return `${PYTHON} not runnable: ${probe.error.message}`;
  if (probe.status !== 0) return `${PYTHON} -c 'import prometheus_client' failed (install python3-prometheus-client)`;
  return undefined;
}

const MISSING = missingReason();
const suite = (title: string) => (MISSING === undefined ? title : `${title} [skipped: ${MISSING}]`);

interface Family {
  name: string;
  type: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

describe.skipIf(MISSING !== undefined)(suite("/metrics read by the official Prometheus Python client"), () => {
  it("parses, with one family per name, _total counters and whole histograms", async () => {
    const { workerUrl, adminToken } = e2e();
    // A subscription, so the subscription families have samples (its endpoint refuses connections).
    const created = await fetch(`${workerUrl}/informers/pods/subscriptions`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: "https://127.0.0.1:9/metrics-hook" }),
    });
    expect(created.status).toBe(201);
    const response = await fetch(`${workerUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(response.status).toBe(200);
    const parsed = spawnSync(PYTHON, [SCRIPT], { input: await response.text(), env: PYTHON_ENV, encoding: "utf8", timeout: 30_000 });
    expect(parsed.status, parsed.stderr).toBe(0);
    const { families, duplicates } = JSON.parse(parsed.stdout) as { families: Family[]; duplicates: string[] };
    expect(duplicates).toEqual([]);
    expect(families.map((f) => f.name)).toEqual(expect.arrayContaining(["edge_informer_synced", "edge_informer_subscription_deliveries", "edge_informer_cluster_info"]));
    // Issue 12: every informer and subscription sample names its cluster, the default one too.
    const named = families.flatMap((f) => f.samples).filter((sample) => sample.labels.informer !== undefined);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((sample) => !sample.labels.cluster)).toEqual([]);
    expect(families.find((f) => f.name === "edge_informer_cluster_info")!.samples).toContainEqual(
      expect.objectContaining({ labels: { cluster: "default", source: "environment" }, value: 1 }),
    );
    expect(named.find((sample) => sample.name === "edge_informer_synced" && sample.labels.informer === "pods")?.labels.cluster).toBe("default");
    for (const family of families.filter((f) => f.type === "counter")) {
      for (const sample of family.samples) expect(sample.name, family.name).toMatch(/_total$|_created$/);
    }
    for (const family of families.filter((f) => f.type === "histogram")) {
      const series = new Map<string, Family["samples"]>();
      for (const sample of family.samples) {
        const { le: _le, ...labels } = sample.labels;
        const key = JSON.stringify(labels);
        series.set(key, [...(series.get(key) ?? []), sample]);
      }
      expect(series.size, family.name).toBeGreaterThan(0);
      for (const samples of series.values()) {
        const count = samples.find((s) => s.name === `${family.name}_count`);
        const inf = samples.find((s) => s.name === `${family.name}_bucket` && s.labels.le === "+Inf");
        expect(samples.some((s) => s.name === `${family.name}_sum`), family.name).toBe(true);
        expect(inf?.value, family.name).toBe(count?.value);
      }
    }
  });
});
