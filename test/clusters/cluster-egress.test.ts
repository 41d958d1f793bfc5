/**
 * Where cluster connections may go (issue 17, reviews A4, A5, A9, F22): https unless loopback,
 * `CLUSTER_ALLOWED_HOSTS`, no IP literals but loopback — checked when a cluster is accepted and again
 * before every connection — no redirect followed by the health probe, and a bounded `/version` body.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseClusterBody, parseDeclaredClusters } from "../../src/clusters/cluster-spec.ts";
import { defaultConnection, resolveConnection } from "../../src/clusters/cluster.ts";
import { MAX_VERSION_BODY_BYTES, probeCluster } from "../../src/clusters/health.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { json, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

/** A fetch that must not be called: a refused URL is never contacted. */
const noFetch = (async () => {
  throw new Error("fetch was called");
}) as typeof fetch;

describe("cluster egress", () => {
  it.each([
    [{ KUBE_API_URL: "http://k8s.example.com" }, "KUBE_API_URL is refused, nothing was sent to it: its server must be https (got http;"],
    [{ KUBE_API_URL: "https://10.1.2.3:6443" }, "KUBE_API_URL is refused, nothing was sent to it: its server 10.1.2.3 is an IP address"],
    [
      { KUBE_API_URL: "https://k8s.elsewhere.test", CLUSTER_ALLOWED_HOSTS: "example.com" },
      "KUBE_API_URL is refused, nothing was sent to it: its server k8s.elsewhere.test is not allowed by CLUSTER_ALLOWED_HOSTS (example.com)",
    ],
    // A deployment fails closed (review N8): the declared default cluster too, until the allow-list or ALLOW_ANY_EGRESS is set.
    [{ KUBE_API_URL: "https://k8s.example.com" }, "KUBE_API_URL is refused, nothing was sent to it: its server k8s.example.com is refused: CLUSTER_ALLOWED_HOSTS is unset"],
  ])("refuses the default cluster's %j at use, with an error naming the rule", async (settings, message) => {
    expect(() => resolveConnection("default", defaultConnection(settings), settings)).toThrow(message);
    // The health probe reports it instead of connecting.
    expect(await probeCluster("default", defaultConnection(settings), settings, noFetch)).toEqual({ reachable: false, error: expect.stringContaining(message) });
  });

  it("accepts https to an allowed host and plain http to loopback, with or without an allow-list", () => {
    const allowList = { CLUSTER_ALLOWED_HOSTS: "example.com" };
    expect(resolveConnection("prod", { server: "https://k8s.example.com" }, allowList).apiUrl).toBe("https://k8s.example.com");
    expect(resolveConnection("dev", { server: "http://127.0.0.1:8001" }, allowList).apiUrl).toBe("http://127.0.0.1:8001");
    expect(resolveConnection("dev", { server: "http://localhost:8001" }, {}).apiUrl).toBe("http://localhost:8001");
    expect(resolveConnection("prod", { server: "https://k8s.example.com" }, { ALLOW_ANY_EGRESS: "true" }).apiUrl).toBe("https://k8s.example.com");
    expect(resolveConnection("local", { server: "https://k8s.example.com" }, { ALLOW_UNAUTHENTICATED: "true" }).apiUrl).toBe("https://k8s.example.com");
  });

  it("refuses a server when it is accepted: PUT /clusters bodies and CLUSTERS entries", () => {
    const allowList = { CLUSTER_ALLOWED_HOSTS: "example.com" };
    expect(() => parseClusterBody({ server: "http://k8s.example.com" }, {})).toThrow("invalid cluster: server: must be https (got http;");
    expect(() => parseClusterBody({ server: "https://192.168.1.10" }, {})).toThrow("invalid cluster: server: 192.168.1.10 is an IP address");
    expect(() => parseClusterBody({ server: "https://badexample.com" }, allowList)).toThrow(
      "invalid cluster: server: badexample.com is not allowed by CLUSTER_ALLOWED_HOSTS (example.com)",
    );
    expect(parseClusterBody({ server: "https://k8s.example.com" }, allowList)).toEqual({ server: "https://k8s.example.com" });
    const declared = parseDeclaredClusters(
      JSON.stringify({ plain: { server: "http://k8s.example.com" }, elsewhere: { server: "https://k8s.elsewhere.test" }, good: { server: "https://a.example.com" } }),
      allowList,
    );
    expect(declared.clusters.map((c) => c.name)).toEqual(["good"]);
    expect(declared.errors).toEqual([
      expect.stringMatching(/^CLUSTERS\.plain: server: must be https \(got http;/),
      "CLUSTERS.elsewhere: server: k8s.elsewhere.test is not allowed by CLUSTER_ALLOWED_HOSTS (example.com)",
    ]);
    // Declared clusters follow a deployment's rule (review N8): refused by name, none kept, until CLUSTER_ALLOWED_HOSTS is set.
    const unset = parseDeclaredClusters(JSON.stringify({ prod: { server: "https://k8s.example.com" }, local: { server: "http://127.0.0.1:8001" } }), {});
    expect(unset.clusters.map((c) => c.name)).toEqual(["local"]);
    expect(unset.errors).toEqual([expect.stringMatching(/^CLUSTERS\.prod: server: k8s\.example\.com is refused: CLUSTER_ALLOWED_HOSTS is unset.*ALLOW_ANY_EGRESS/)]);
  });

  it("gives an informer of a stored plain-http cluster a lastError naming the rule, and sends nothing", async () => {
    // As a cluster stored before the rule existed: put through the factory, past the route's check.
    const name = unique("plain");
    const factory = env.FACTORY.getByName(FACTORY_NAME);
    expect((await factory.putCluster(name, { server: "http://k8s.example.com" })).ok).toBe(true);
    expect((await send("PUT", `/clusters/${name}/informers/pods`, { resource: "pods" })).status).toBe(201);
    const status = await waitFor("the informer to report its refused server", async () => {
      const body = await json(await send("GET", `/clusters/${name}/informers/pods`));
      return body.lastError ? body : undefined;
    });
    expect(status.lastError).toMatch(new RegExp(`^cluster '${name}' is refused, nothing was sent to it: its server must be https \\(got http;`));
    expect(status.synced).toBe(false);
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("does not follow a redirect from /version: the other server receives nothing", async () => {
    const fake = await newCluster();
    const elsewhere = await ReceiverEndpoint.create(env.RECEIVER_URL);
    await fake.fault({ kind: "redirect", on: "version", code: 307, location: elsewhere.url });
    const health = await probeCluster("c", { server: fake.url, token: "secret-token" }, {});
    expect(health).toEqual({
      reachable: true,
      error: expect.stringContaining(`GET /version: the API server answered 307, a redirect to ${new URL(elsewhere.url).host}: not followed`),
    });
    expect(await elsewhere.requests()).toEqual([]);
  });

  it("refuses a /version answer over its bound without reading it all", async () => {
    const fake = await newCluster();
    await fake.fault({ kind: "oversizedBody", on: "version", bytes: 256 * 1024 * 1024 });
    // That the rest is cancelled unread, counted in bytes: test/net/bounded-body.test.ts.
    expect(await probeCluster("c", { server: fake.url }, {})).toEqual({
      reachable: true,
      error: `GET /version answered more than ${MAX_VERSION_BODY_BYTES / 1024} KiB: not a Kubernetes version (refused, not read)`,
    });
  });
});
