/**
 * The `/k8s` endpoints that are not resources (issue 18, F2), through the Worker's whole app:
 * health as kube-apiserver answers it, and the self-review APIs answered from the caller's
 * credential and its cluster scopes — get, list and watch allowed on what it may read, writes and
 * other clusters refused — while every other POST stays 405. kubectl reads them in
 * test/e2e/kubectl-server-endpoints.e2e.test.ts.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { json, startInCluster } from "../helpers/clusters.ts";

const app = createApp();
const token = (name: string) => `${name}-${"x".repeat(32)}`;
const tokens = { reader: token("reader"), stagingReader: token("staging-reader"), jane: token("jane") };

let staging: Awaited<ReturnType<typeof startInCluster>>;
let settings: typeof env;

beforeAll(async () => {
  staging = await startInCluster("ep");
  const entries = [
    { name: "reader", sha256: await sha256Hex(tokens.reader), role: "read", clusters: ["*"] },
    { name: "staging-reader", sha256: await sha256Hex(tokens.stagingReader), role: "read", clusters: [staging.cluster] },
    { name: "jane", sha256: await sha256Hex(tokens.jane), role: "read", clusters: ["*"], user: "jane@example.com", groups: ["team-a", "team-b"] },
  ];
  settings = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: JSON.stringify(entries) } as typeof env;
}, 120_000);

function k8s(path: string, bearer: string, init: RequestInit = {}) {
  return app.request(`http://localhost/k8s${path}`, { ...init, headers: { authorization: `Bearer ${bearer}`, ...init.headers } }, settings);
}

const post = (path: string, bearer: string, body: unknown) =>
  k8s(path, bearer, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

const accessReview = (resourceAttributes: object) => ({
  kind: "SelfSubjectAccessReview",
  apiVersion: "authorization.k8s.io/v1",
  spec: { resourceAttributes },
});

describe("/k8s health", () => {
  it.each(["healthz", "livez", "readyz"])("answers /%s with ok, and ?verbose with each check, as kube-apiserver", async (endpoint) => {
    for (const prefix of ["", () => `/clusters/${staging.cluster}`]) {
      const at = typeof prefix === "string" ? prefix : prefix();
      const plain = await k8s(`${at}/${endpoint}`, tokens.reader);
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await plain.text()).toBe("ok");
      const verbose = await k8s(`${at}/${endpoint}?verbose`, tokens.reader);
      expect(await verbose.text()).toBe(`[+]ping ok\n${endpoint} check passed\n`);
      expect(await (await k8s(`${at}/${endpoint}/ping`, tokens.reader)).text()).toBe("ok");
      expect((await k8s(`${at}/${endpoint}/etcd`, tokens.reader)).status).toBe(404);
    }
  });
});

describe("/k8s self-reviews", () => {
  it("allows get, list and watch of served resources to a reader of the cluster, and nothing else", async () => {
    const ask = async (attributes: object, path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", bearer = tokens.reader) => {
      const response = await post(`/clusters/${staging.cluster}${path}`, bearer, accessReview(attributes));
      expect(response.status).toBe(201);
      return json(response);
    };
    const answer = await ask({ namespace: "default", verb: "list", resource: "pods" });
    expect(answer).toMatchObject({
      kind: "SelfSubjectAccessReview",
      apiVersion: "authorization.k8s.io/v1",
      metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { namespace: "default", verb: "list", resource: "pods" } },
      status: { allowed: true },
    });
    for (const verb of ["get", "watch"]) expect((await ask({ verb, resource: "pods" })).status.allowed, verb).toBe(true);
    for (const verb of ["create", "delete", "patch", "update", "deletecollection"]) {
      expect((await ask({ namespace: "default", verb, resource: "pods" })).status, verb).toMatchObject({ allowed: false, reason: expect.stringMatching(/read-only/) });
    }
    // A resource nobody mirrors, a subresource.
    expect((await ask({ verb: "list", resource: "secrets" })).status.allowed).toBe(false);
    expect((await ask({ verb: "get", resource: "pods", subresource: "log" })).status.allowed).toBe(false);
    // A get of pods/status is served (issue 30: the object itself); any other verb on it is not.
    expect((await ask({ verb: "get", resource: "pods", subresource: "status" })).status.allowed).toBe(true);
    expect((await ask({ verb: "list", resource: "pods", subresource: "status" })).status.allowed).toBe(false);
  });

  it("refuses every resource of a cluster outside the credential's scope, but still lets it discover", async () => {
    const outside = await post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", tokens.stagingReader, accessReview({ verb: "list", resource: "pods" }));
    expect(outside.status).toBe(201);
    expect((await json(outside)).status).toMatchObject({ allowed: false, reason: "credential 'staging-reader' may not read this cluster" });
    const inside = await post(`/clusters/${staging.cluster}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, tokens.stagingReader, accessReview({ verb: "list", resource: "pods" }));
    expect((await json(inside)).status.allowed).toBe(true);
    const discovery = await post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", tokens.stagingReader, {
      spec: { nonResourceAttributes: { path: "/apis", verb: "get" } },
    });
    expect((await json(discovery)).status.allowed).toBe(true);
  });

  it("allows OpenAPI only to readers of the cluster, as the OpenAPI route does (review N6)", async () => {
    const canGet = async (at: string, path: string) =>
      (await json(await post(`${at}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, tokens.stagingReader, { spec: { nonResourceAttributes: { path, verb: "get" } } }))).status.allowed;
    for (const path of ["/openapi/v2", "/openapi/v3/api/v1"]) {
      expect(await canGet("", path), path).toBe(false);
      expect(await canGet(`/clusters/${staging.cluster}`, path), path).toBe(true);
    }
    const rules = async (at: string) =>
      (await json(await post(`${at}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, tokens.stagingReader, { spec: { namespace: "default" } }))).status.nonResourceRules[0].nonResourceURLs;
    expect(await rules("")).not.toContain("/openapi/*");
    expect(await rules(`/clusters/${staging.cluster}`)).toContain("/openapi/*");
  });

  it("lists the rules of a SelfSubjectRulesReview: the served resources, read verbs only", async () => {
    const response = await post(`/clusters/${staging.cluster}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, tokens.stagingReader, {
      kind: "SelfSubjectRulesReview",
      apiVersion: "authorization.k8s.io/v1",
      spec: { namespace: "default" },
    });
    expect(response.status).toBe(201);
    const answer = await json(response);
    // namespaces too: synthesized from the served resources' (issue 30 item 2), so pickers may list them.
    expect(answer.status.resourceRules).toEqual([{ verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["pods", "namespaces"] }]);
    expect(answer.status.nonResourceRules[0]).toMatchObject({ verbs: ["get"], nonResourceURLs: expect.arrayContaining(["/api", "/apis/*", "/healthz"]) });
    const outside = await json(await post("/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", tokens.stagingReader, { spec: { namespace: "default" } }));
    expect(outside.status.resourceRules).toEqual([]);
  });

  it("answers a SelfSubjectReview (kubectl auth whoami) with the credential's Kubernetes user and groups, and no extra", async () => {
    const review = { kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1" };
    const answer = (userInfo: object) => ({ ...review, metadata: { creationTimestamp: null }, status: { userInfo } });
    const jane = await post("/apis/authentication.k8s.io/v1/selfsubjectreviews", tokens.jane, review);
    expect(jane.status).toBe(201);
    expect(await json(jane)).toEqual(answer({ username: "jane@example.com", groups: ["team-a", "team-b", "system:authenticated"] }));
    // Without a configured user: edge-informer:<name>, which no user of the cluster is.
    const staged = await post(`/clusters/${staging.cluster}/apis/authentication.k8s.io/v1/selfsubjectreviews`, tokens.stagingReader, review);
    expect(await json(staged)).toEqual(answer({ username: "edge-informer:staging-reader", groups: ["system:authenticated"] }));
  });

  it("answers local development's anonymous caller as system:anonymous in system:unauthenticated", async () => {
    const local = { ...env, ALLOW_UNAUTHENTICATED: "true", READ_TOKEN: undefined, TOKENS: undefined } as typeof env;
    const response = await app.request("http://localhost/k8s/apis/authentication.k8s.io/v1/selfsubjectreviews", { method: "POST", body: "{}" }, local);
    expect(response.status).toBe(201);
    expect((await json(response)).status).toEqual({ userInfo: { username: "system:anonymous", groups: ["system:unauthenticated"] } });
  });

  it("answers a review without attributes with 422, and a body that is not JSON with 400", async () => {
    const empty = await post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", tokens.reader, { spec: {} });
    expect(empty.status).toBe(422);
    expect(await json(empty)).toMatchObject({ kind: "Status", reason: "Invalid", code: 422 });
    const garbage = await k8s("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", tokens.reader, { method: "POST", body: "{" });
    expect(garbage.status).toBe(400);
  });

  it("refuses a review body over 16 KiB with 413 before reading it, as a Status", async () => {
    const padded = { ...accessReview({ verb: "list", resource: "pods" }), metadata: { annotations: { pad: "x".repeat(20_000) } } };
    const response = await post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", tokens.reader, padded);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ kind: "Status", code: 413 });
  });

  it("keeps every other POST a 405, and refuses a review without a credential", async () => {
    for (const path of ["/api/v1/namespaces/default/pods", "/apis/authorization.k8s.io/v1/subjectaccessreviews", "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews"]) {
      expect((await post(path, tokens.reader, {})).status, path).toBe(405);
    }
    const anonymous = await app.request("http://localhost/k8s/apis/authentication.k8s.io/v1/selfsubjectreviews", { method: "POST", body: "{}" }, settings);
    expect(anonymous.status).toBe(401);
  });
});
