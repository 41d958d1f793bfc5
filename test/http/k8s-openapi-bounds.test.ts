/**
 * The `/k8s` OpenAPI proxy's scope and bounds (review N6, issue 29 item 4), through the Worker's
 * whole app with cluster-scoped credentials and the Cache API doing nothing, as on workers.dev or
 * behind Access: a cluster's documents are read only by readers of that cluster; a group version
 * the cluster does not serve is a 404 Status with no upstream request; concurrent misses of one
 * document share one upstream request. The documents themselves: test/http/k8s-openapi.test.ts.
 */
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { json, startInCluster } from "../helpers/clusters.ts";

const app = createApp();
const token = (name: string) => `${name}-${"x".repeat(32)}`;
const tokens = { reader: token("reader"), aReader: token("a-reader") };

let a: Awaited<ReturnType<typeof startInCluster>>;
let b: Awaited<ReturnType<typeof startInCluster>>;
let settings: typeof env;

/** The Cache API as workers.dev and Access deployments have it: nothing is kept. */
const storesNothing = { match: async () => undefined, put: async () => {}, delete: async () => false } as unknown as Cache;

beforeAll(async () => {
  [a, b] = await Promise.all([startInCluster("oapi-a"), startInCluster("oapi-b")]);
  const entries = [
    { name: "reader", sha256: await sha256Hex(tokens.reader), role: "read", clusters: ["*"] },
    { name: "a-reader", sha256: await sha256Hex(tokens.aReader), role: "read", clusters: [a.cluster] },
  ];
  settings = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: JSON.stringify(entries) } as typeof env;
  vi.stubGlobal("caches", { default: storesNothing });
}, 120_000);

afterAll(() => {
  vi.unstubAllGlobals();
});

function k8s(path: string, bearer: string, accept = "application/json") {
  return app.request(`http://localhost/k8s${path}`, { headers: { authorization: `Bearer ${bearer}`, accept } }, settings);
}

describe("/k8s OpenAPI scope", () => {
  it("refuses another cluster's documents with the 403 Status the other /k8s routes give, and serves the caller's own", async () => {
    const refusedPods = await k8s(`/clusters/${b.cluster}/api/v1/pods`, tokens.aReader);
    expect(refusedPods.status).toBe(403);
    const refusal = await json(refusedPods);
    for (const path of ["/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"]) {
      const response = await k8s(`/clusters/${b.cluster}${path}`, tokens.aReader);
      expect(response.status, path).toBe(403);
      expect(await json(response), path).toEqual(refusal);
    }
    // The default cluster's, at /k8s/openapi, is the default cluster's to read.
    const refusedDefault = await k8s("/openapi/v2", tokens.aReader);
    expect(refusedDefault.status).toBe(403);
    expect(await json(refusedDefault)).toMatchObject({ kind: "Status", reason: "Forbidden" });
    const own = await k8s(`/clusters/${a.cluster}/openapi/v3/api/v1`, tokens.aReader);
    expect(own.status).toBe(200);
    expect(await json(own)).toMatchObject({ openapi: "3.0.0" });
  });
});

describe("/k8s OpenAPI bounds, with the Cache API keeping nothing", () => {
  it("answers a group version the cluster does not serve with a 404 Status, asking its API server nothing", async () => {
    const upstream = new FakeCluster(env.FAKE_APISERVER_URL);
    const asked = async () => (await upstream.requests()).filter((r) => /^\/openapi\/v3\/apis\/g\d+\.example\//.test(r.path)).length;
    const before = await asked();
    for (let i = 0; i < 50; i++) {
      const response = await k8s(`/openapi/v3/apis/g${i}.example/v1`, tokens.reader);
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ kind: "Status", status: "Failure", reason: "NotFound", code: 404 });
    }
    expect(await asked()).toBe(before);
    // apps/v1 exists upstream, but this cluster mirrors only pods.
    expect((await k8s(`/clusters/${b.cluster}/openapi/v3/apis/apps/v1`, tokens.reader)).status).toBe(404);
    expect((await b.fake.requests()).filter((r) => r.path.startsWith("/openapi/v3/apis/apps"))).toEqual([]);
  });

  it("sends 20 concurrent misses of one document upstream once", async () => {
    await b.fake.clearRequests();
    const responses = await Promise.all(Array.from({ length: 20 }, () => k8s(`/clusters/${b.cluster}/openapi/v2`, tokens.reader)));
    for (const response of responses) expect(response.status).toBe(200);
    const bodies = await Promise.all(responses.map((r) => r.json()));
    for (const body of bodies) expect(body).toMatchObject({ swagger: "2.0" });
    expect((await b.fake.requests()).filter((r) => r.path === "/openapi/v2")).toHaveLength(1);
    // And later reads are answered from this isolate's copy.
    expect((await k8s(`/clusters/${b.cluster}/openapi/v2`, tokens.reader)).status).toBe(200);
    expect((await b.fake.requests()).filter((r) => r.path === "/openapi/v2")).toHaveLength(1);
  });
});
