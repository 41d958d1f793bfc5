/**
 * OpenAPI under `/k8s` (issue 18, F2): the upstream API server's documents (here the fake API
 * server's), fetched once and cached, the v3 index narrowed to what the cluster serves with its
 * URLs under this API server's prefix (client-go replaces the whole path with them), and a Status
 * for a group version the cluster does not serve. Scope and bounds: k8s-openapi-bounds.test.ts. `kubectl explain` reads it in
 * test/e2e/kubectl-server-endpoints.e2e.test.ts.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { startInCluster } from "../helpers/clusters.ts";

let cluster: Awaited<ReturnType<typeof startInCluster>>;
beforeAll(async () => {
  cluster = await startInCluster("oapi");
}, 120_000);

const prefix = () => `/k8s/clusters/${cluster.cluster}`;
const ours = (path: string, accept = "application/json") => exports.default.fetch(new Request(`http://localhost${path}`, { headers: { accept } }));
const theirs = async (path: string) => (await fetch(`${cluster.fake.url}${path}`, { headers: { accept: "application/json" } })).json();

describe("/k8s OpenAPI", () => {
  it("serves the upstream's v2 document, fetched from it once", async () => {
    await cluster.fake.clearRequests();
    for (let i = 0; i < 3; i++) {
      const response = await ours(`${prefix()}/openapi/v2`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await response.json()).toEqual(await theirs("/openapi/v2"));
    }
    const fetched = (await cluster.fake.requests()).filter((r) => r.path === "/openapi/v2");
    expect(fetched).toHaveLength(1 + 3); // ours once, and the three comparisons above
  });

  it("narrows the v3 index to the served group versions, its URLs under this API server's prefix", async () => {
    const index = (await (await ours(`${prefix()}/openapi/v3`)).json()) as any;
    const upstream = (await theirs("/openapi/v3")) as any;
    expect(Object.keys(upstream.paths)).toContain("apis/apps/v1");
    expect(Object.keys(index.paths)).toEqual(["api/v1"]); // only pods are mirrored here
    expect(index.paths["api/v1"].serverRelativeURL).toBe(`${prefix()}${upstream.paths["api/v1"].serverRelativeURL}`);
    const document = await ours(index.paths["api/v1"].serverRelativeURL);
    expect(document.status).toBe(200);
    const schema = (await document.json()) as any;
    expect(schema).toEqual(await theirs("/openapi/v3/api/v1"));
    expect(schema.components.schemas["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"]).toEqual([{ group: "", kind: "Pod", version: "v1" }]);
  });

  it("answers a group version the cluster does not serve with a NotFound Status, as kube-apiserver an unknown one", async () => {
    for (const path of ["/openapi/v3/apis/nothing.example.com/v1", "/openapi/v3/apis/apps/v1", "/openapi/v4"]) {
      const response = await ours(`${prefix()}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.json(), path).toMatchObject({ kind: "Status", reason: "NotFound", message: "the server could not find the requested resource" });
    }
    // A served group version the upstream has no document for: k8s/openapi.test.ts.
  });

  it("passes the upstream's v2 protobuf on byte for byte, as client-go's discovery OpenAPISchema() asks for it", async () => {
    const response = await ours(`${prefix()}/openapi/v2`, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
    const bytes = new Uint8Array(await response.arrayBuffer());
    const upstream = await fetch(`${cluster.fake.url}/openapi/v2`, { headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" } });
    expect(bytes).toEqual(new Uint8Array(await upstream.arrayBuffer()));
    // openapi_v2.Document field 1 (swagger), length-delimited: "2.0".
    expect([...bytes.slice(0, 5)]).toEqual([0x0a, 3, ..."2.0"].map((c) => (typeof c === "string" ? c.charCodeAt(0) : c)));
    // And the JSON form, cached beside it, is still JSON.
    expect(await (await ours(`${prefix()}/openapi/v2`)).json()).toMatchObject({ swagger: "2.0" });
  });

  it("refuses a media type the server does not offer with 406", async () => {
    expect((await ours(`${prefix()}/openapi/v3`, "application/com.github.proto-openapi.spec.v3@v1.0+protobuf")).status).toBe(406);
    expect((await ours(`${prefix()}/openapi/v2`, "text/html")).status).toBe(406);
  });
});
