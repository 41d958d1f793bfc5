/**
 * `/k8s` wire details (issue 18): discovery paths with a trailing slash (the Python client's
 * get_api_resources asks `/api/v1/`); F20's path rules (`?watch=true` on an item path is a get, a
 * namespaced object without its namespace is no route); F23's gzip for large lists when the client
 * accepts it, never for watches; F24's namespace stand-in only for namespaces that hold objects.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { startInCluster } from "../helpers/clusters.ts";

/** More than one informer page (500), so the list without limit is streamed; well over 128 KiB. */
const PODS = 600;

let cluster: Awaited<ReturnType<typeof startInCluster>>;
let namespace: string;
let podName: string;
beforeAll(async () => {
  cluster = await startInCluster("wire", {}, PODS);
  const first = ((await (await fetch(`${cluster.fake.url}/api/v1/pods?limit=1`)).json()) as any).items[0];
  namespace = first.metadata.namespace;
  podName = first.metadata.name;
}, 180_000);

const k8s = (path: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster.cluster}${path}`, { headers }));

async function text(response: Response): Promise<string> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  // In-process, the runtime may hand the body over before or after compressing it.
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  return new TextDecoder().decode(bytes);
}

describe("/k8s paths", () => {
  it("serves every discovery document with a trailing slash too, as the real server does", async () => {
    for (const [path, kind] of [
      ["/api/", "APIVersions"],
      ["/api/v1/", "APIResourceList"],
      ["/apis/", "APIGroupList"],
    ] as const) {
      const response = await k8s(path, { accept: "application/json" });
      expect(response.status, path).toBe(200);
      expect(((await response.json()) as any).kind, path).toBe(kind);
    }
    expect(((await (await k8s("/version/")).json()) as any).major).toBe("1");
  });

  it("answers ?watch=true on an item path as a get, and a namespaced object without its namespace as no route", async () => {
    const got = await k8s(`/api/v1/namespaces/${namespace}/pods/${podName}?watch=true`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as any).metadata.name).toBe(podName);
    const bare = await k8s(`/api/v1/pods/${podName}`);
    expect(bare.status).toBe(404);
    expect(((await bare.json()) as any).message).toBe("the server could not find the requested resource");
  });
});

describe("/k8s compression", () => {
  it("gzips a large list for a client that accepts gzip, and nothing for one that does not", async () => {
    const gzipped = await k8s("/api/v1/pods", { "accept-encoding": "gzip" });
    expect(gzipped.headers.get("content-encoding")).toBe("gzip");
    expect(JSON.parse(await text(gzipped)).items).toHaveLength(PODS);
    const plain = await k8s("/api/v1/pods", { "accept-encoding": "identity" });
    expect(plain.headers.get("content-encoding")).toBeNull();
    const small = await k8s("/api/v1/pods?limit=2", { "accept-encoding": "gzip" });
    expect(small.headers.get("content-encoding")).toBeNull();
  });

  it("never compresses a watch", async () => {
    const watch = await k8s("/api/v1/pods?watch=true&timeoutSeconds=1", { "accept-encoding": "gzip" });
    expect(watch.headers.get("content-encoding")).toBe("identity");
    await watch.body?.cancel();
  });
});

describe("/k8s namespace stand-in", () => {
  it("stands in for a namespace that holds objects, marked as a stand-in, and answers NotFound for any other", async () => {
    const held = await k8s(`/api/v1/namespaces/${namespace}`);
    expect(held.status).toBe(200);
    expect(await held.json()).toMatchObject({
      kind: "Namespace",
      metadata: { name: namespace, annotations: { "edge-informer.dev/stand-in": "true" } },
      status: { phase: "Active" },
    });
    const typo = await k8s("/api/v1/namespaces/no-such-namespace");
    expect(typo.status).toBe(404);
    expect(((await typo.json()) as any).message).toBe('namespaces "no-such-namespace" not found');
  });
});
