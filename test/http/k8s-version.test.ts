/**
 * `/k8s[/clusters/{c}]/version` (issue 30 item 6, review G10): the upstream API server's own
 * `/version` (Argo CD records it per cluster, `kubectl version` warns of skew against it), read
 * once and kept — repeated calls send the upstream nothing — and this deployment's stand-in, marked
 * as such, only for a cluster that was never reachable. kubectl reads it in
 * test/e2e/kubectl-version.e2e.test.ts.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { FALLBACK_VERSION_INFO } from "../../src/k8s/server-version.ts";
import { send, startInCluster, unique } from "../helpers/clusters.ts";

let cluster: Awaited<ReturnType<typeof startInCluster>>;
beforeAll(async () => {
  cluster = await startInCluster("version", {}, 1);
}, 120_000);

const get = (path: string) => exports.default.fetch(new Request(`http://localhost/k8s${path}`));

describe("/k8s/version", () => {
  it("answers the upstream's /version, and asks the upstream once for many calls", async () => {
    const upstream = await (await fetch(`${cluster.fake.url}/version`)).json();
    // The fake's is not this deployment's constant, so the comparison means something.
    expect((upstream as { gitVersion: string }).gitVersion).not.toBe(FALLBACK_VERSION_INFO.gitVersion);
    await cluster.fake.clearRequests();
    for (let i = 0; i < 5; i++) {
      const response = await get(`/clusters/${cluster.cluster}/version`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(await response.json()).toEqual(upstream);
    }
    const asked = (await cluster.fake.requests()).filter((r) => r.path === "/version");
    expect(asked.length).toBeLessThanOrEqual(1);
  });

  it("answers the stand-in, marked, for a cluster that was never reachable", async () => {
    const name = unique("never");
    // Nothing listens on the discard port.
    expect((await send("PUT", `/clusters/${name}`, { server: "http://127.0.0.1:9" })).status).toBe(201);
    try {
      const response = await get(`/clusters/${name}/version`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Record<string, string>;
      expect(body).toEqual(FALLBACK_VERSION_INFO);
      expect(body.compiler).toBe("edge-informer");
    } finally {
      await send("DELETE", `/clusters/${name}?cascade=true`);
    }
  });
});
