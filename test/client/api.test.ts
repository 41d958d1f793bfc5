/**
 * The typed API client (src/client/api.ts): informer and query methods end to end against the real
 * Worker and the fake server's default cluster, error mapping (never leaking the token), and the
 * subscription methods against a stub that records each request and answers from the contract.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type CreatedSubscription,
  type DeadLetter,
  type DeliveryAttempt,
  EdgeInformerApiError,
  EdgeInformerClient,
  type FetchLike,
  type InformerSpec,
  type InformerStatus,
  type KubernetesObject,
  type SubscriptionSpec,
  type SubscriptionStatus,
} from "../../src/client/index.ts";
import type { InformerSpecInput } from "../../src/config/informer-spec.ts";
import { createApp } from "../../src/http/app.ts";
import type { InformerStatus as ServerInformerStatus } from "../../src/objects/informer-object.ts";
import type {
  DeliveryAttempt as ServerDeliveryAttempt,
  SubscriptionStatus as ServerSubscriptionStatus,
} from "../../src/delivery/subscription-views.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { waitFor } from "../helpers/informer.ts";

const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
const BASE = "http://localhost";
const worker: FetchLike = (input, init) => exports.default.fetch(new Request(input, init));

const admin = new EdgeInformerClient({ baseUrl: BASE, token: ADMIN_TOKEN, fetch: worker });
const anonymous = new EdgeInformerClient({ baseUrl: BASE, fetch: worker });
const uniqueName = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
const keyOf = (o: KubernetesObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!);

/** Resolves to the error `promise` rejects with; fails when it resolves. */
async function failure(promise: Promise<unknown>): Promise<EdgeInformerApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EdgeInformerApiError);
  return error as EdgeInformerApiError;
}

/** Everything an error shows when logged or serialized. */
const rendered = (error: Error) => `${String(error)} ${error.stack} ${JSON.stringify(error)} ${JSON.stringify({ ...error })}`;

/** Creates an informer with short watches, runs `body`, deletes it. */
async function withInformer(spec: InformerSpec, body: (name: string) => Promise<void>): Promise<void> {
  const name = uniqueName("cl");
  await admin.putInformer(name, { watchTimeoutSeconds: 3, ...spec });
  try {
    await waitFor(`${name} to sync`, async () => (await admin.getInformer(name)).synced);
    await body(name);
  } finally {
    await admin.deleteInformer(name);
  }
}

describe("API client types", () => {
  it("match the server's (checked by tsc)", () => {
    expectTypeOf<InformerStatus>().toEqualTypeOf<ServerInformerStatus>();
    expectTypeOf<SubscriptionStatus>().toEqualTypeOf<ServerSubscriptionStatus>();
    expectTypeOf<DeliveryAttempt>().toEqualTypeOf<ServerDeliveryAttempt>();
    // `subscriptions` is accepted only in INFORMERS (wrangler.toml), never through the API.
    type ApiSpecInput = Omit<InformerSpecInput, "subscriptions">;
    expectTypeOf<keyof InformerSpec>().toEqualTypeOf<keyof ApiSpecInput>();
    expectTypeOf<InformerSpec>().toExtend<ApiSpecInput>();
    expectTypeOf<Required<ApiSpecInput>>().toExtend<Required<InformerSpec>>();
    expectTypeOf<keyof NonNullable<InformerSpec["transform"]>>().toEqualTypeOf<keyof NonNullable<InformerSpecInput["transform"]>>();
    expectTypeOf<keyof NonNullable<InformerSpec["retention"]>>().toEqualTypeOf<keyof NonNullable<InformerSpecInput["retention"]>>();
  });
});

describe("API client against the Worker", () => {
  it("creates, reads, updates, lists and deletes an informer", async () => {
    const name = uniqueName("cl-crud");
    const created = await admin.putInformer(name, { resource: "pods", watchTimeoutSeconds: 3 });
    try {
      expect(created).toMatchObject({ created: true, status: { name, resource: "pods", subscriptions: 0 } });
      const synced = await waitFor("sync", async () => {
        const status = await admin.getInformer(name);
        return status.synced && status;
      });
      expect(synced).toMatchObject({ name, objects: expect.any(Number), watch: { state: expect.any(String) } });
      const updated = await admin.putInformer(name, { resource: "pods", labelSelector: "app=web", watchTimeoutSeconds: 3 });
      expect(updated).toMatchObject({ created: false, status: { name } });
      expect((await anonymous.listInformers()).map((i) => i.name)).toContain(name);
    } finally {
      await admin.deleteInformer(name);
    }
    const gone = await failure(admin.getInformer(name));
    expect(gone).toMatchObject({ status: 404, code: "NotFound", method: "GET", path: `/informers/${name}` });
    expect((await failure(admin.deleteInformer(name))).status).toBe(404);
  });

  it("adds a cluster, runs an informer in it through forCluster, and deletes it with its informers", async () => {
    const server = await FakeCluster.create(env.FAKE_APISERVER_URL, { token: "client-test-token" });
    const name = uniqueName("cl-cluster");
    const added = await admin.putCluster(name, { server: server.url, token: "client-test-token" });
    expect(added).toEqual({ created: true, cluster: { name, server: server.url, source: "api", credentials: ["token"], authorization: "scopes", informers: 0 } });
    const inCluster = admin.forCluster(name);
    expect(inCluster.cluster).toBe(name);
    await inCluster.putInformer("pods", { resource: "pods", watchTimeoutSeconds: 3 });
    await waitFor("sync", async () => (await inCluster.getInformer("pods")).synced);
    expect((await inCluster.listInformers()).map((i) => [i.cluster, i.name])).toEqual([[name, "pods"]]);
    expect((await admin.listClusters()).find((c) => c.name === name)).toMatchObject({ informers: 1, health: { reachable: true } });
    expect(await admin.getCluster(name)).toMatchObject({ name, health: { version: expect.any(String) } });
    await server.create("pods", pod({ name: "searched", namespace: "client" }));
    await waitFor("the pod to be cached", async () => (await inCluster.listObjects("pods", { namespace: "client" })).items.length === 1);
    const found = await admin.search("pods", { clusters: [name], namespace: "client", limit: 10 });
    expect(found.items.map((o) => [o.metadata.name, o.metadata.annotations?.["edge-informer/cluster"]])).toEqual([["searched", name]]);
    expect(Object.keys(found.resourceVersions)).toEqual([name]);
    expect((await failure(admin.deleteCluster(name))).status).toBe(409);
    await admin.deleteCluster(name, { cascade: true });
    expect(await failure(inCluster.getInformer("pods"))).toMatchObject({ status: 404, path: `/clusters/${name}/informers/pods` });
  });

  it("lists, pages, gets and queries indexes", async () => {
    const truth = (await new FakeCluster(env.FAKE_APISERVER_URL).state("pods")).items as KubernetesObject[];
    await withInformer({ resource: "pods", indexers: { byNode: "spec.nodeName" } }, async (name) => {
      const all = await anonymous.listObjects(name);
      expect(all.synced).toBe(true);
      expect(all.resourceVersion).toMatch(/^\d+$/);
      expect(all.continue).toBeUndefined();
      expect(all.items.map(keyOf)).toEqual(truth.map(keyOf));

      const namespace = truth[0]!.metadata.namespace!;
      const inNamespace = await anonymous.listObjects(name, { namespace, labelSelector: undefined });
      expect(inNamespace.items.map(keyOf)).toEqual(truth.filter((o) => o.metadata.namespace === namespace).map(keyOf));
      const web = await anonymous.listObjects(name, { labelSelector: "app in (web, api)", fieldSelector: "metadata.namespace=demo" });
      expect(web.items.map(keyOf)).toEqual(
        truth.filter((o) => ["web", "api"].includes(o.metadata.labels?.app ?? "") && o.metadata.namespace === "demo").map(keyOf),
      );

      const first = await anonymous.listObjects(name, { limit: 2 });
      expect(first.items).toHaveLength(2);
      expect(first.continue).toEqual(expect.any(String));
      const second = await anonymous.listObjects(name, { limit: 2, continue: first.continue! });
      expect(second.items.map(keyOf)).toEqual(all.items.slice(2, 4).map(keyOf));
      const paged: string[] = [];
      for await (const pod of anonymous.listAllObjects(name, { limit: 2 })) paged.push(keyOf(pod));
      expect(paged).toEqual(all.items.map(keyOf));

      const pod = await anonymous.getObject(name, keyOf(truth[0]!));
      expect(pod.metadata.uid).toBe(truth[0]!.metadata.uid);

      const nodes = [...new Set(truth.map((o) => (o.spec as { nodeName?: string }).nodeName).filter(Boolean))].sort();
      expect(await anonymous.indexValues(name, "byNode")).toEqual(nodes);
      const onNode = truth.filter((o) => (o.spec as { nodeName?: string }).nodeName === nodes[0]).map(keyOf);
      const byIndex = await anonymous.byIndex(name, "byNode", nodes[0]!);
      expect([byIndex.synced, byIndex.items.map(keyOf)]).toEqual([true, onNode]);
      const byIndexPage = await anonymous.byIndex(name, "byNode", nodes[0]!, { limit: 1 });
      expect(byIndexPage.items.map(keyOf)).toEqual(onNode.slice(0, 1));
      expect(byIndexPage.continue).toEqual(expect.any(String));
    });
  });

  it("gets cluster-scoped objects by name", async () => {
    const [first] = (await new FakeCluster(env.FAKE_APISERVER_URL).state("namespaces")).items as KubernetesObject[];
    await withInformer({ resource: "namespaces" }, async (name) => {
      expect((await anonymous.getObject(name, first!.metadata.name!)).metadata.uid).toBe(first!.metadata.uid);
    });
  });

  it("throws EdgeInformerApiError with the body's code and message", async () => {
    await withInformer({ resource: "pods" }, async (name) => {
      expect(await failure(anonymous.getObject(name, "nope/nothing"))).toMatchObject({ status: 404, code: "NotFound" });
      const badSelector = await failure(anonymous.listObjects(name, { labelSelector: "app in (" }));
      expect(badSelector).toMatchObject({ status: 400, code: "BadRequest", name: "EdgeInformerApiError" });
      expect(badSelector.message).toMatch(/label selector "app in \("/);
      expect((await failure(anonymous.listObjects(name, { limit: 0 }))).code).toBe("BadRequest");
      expect(await failure(anonymous.indexValues(name, "nope"))).toMatchObject({ status: 404, code: "NotFound" });
    });
    const badSpec = await failure(admin.putInformer(uniqueName("cl-bad"), { resource: "widgets.example.com" }));
    expect(badSpec).toMatchObject({ status: 400, code: "BadRequest" });
    expect(badSpec.message).toMatch(/apiVersion/);
    await expect(anonymous.getObject("pods", "a/b/c")).rejects.toThrow(TypeError);
    await expect(anonymous.getObject("pods", "/x")).rejects.toThrow(TypeError);
  });

  it("answers 401 and 403 without leaking the token", async () => {
    const name = uniqueName("cl-auth");
    const secret = "not-the-admin-token-s3cr3t";
    const wrong = new EdgeInformerClient({ baseUrl: BASE, token: secret, fetch: worker });
    for (const client of [anonymous, wrong]) {
      const error = await failure(client.putInformer(name, { resource: "pods" }));
      expect(error).toMatchObject({ status: 401, code: "Unauthorized" });
      expect(rendered(error)).not.toContain(secret);
    }
    expect((await failure(anonymous.getInformer(name))).status).toBe(404);

    const noAdminToken = { ...env, ADMIN_TOKEN: undefined, ALLOW_UNAUTHENTICATED: "false" };
    const locked = new EdgeInformerClient({
      baseUrl: BASE,
      token: secret,
      fetch: async (input, init) => createApp().request(new Request(input, init), undefined, noAdminToken),
    });
    const forbidden = await failure(locked.deleteInformer(name));
    expect(forbidden).toMatchObject({ status: 401, code: "Unauthorized", method: "DELETE" });
    expect(forbidden.message).toMatch(/configures none \(ADMIN_TOKEN/);
    expect(rendered(forbidden)).not.toContain(secret);
  });
});

interface Recorded {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A fetch that records each request and answers with the next canned response. */
function stub(...answers: (() => Response)[]) {
  const requests: Recorded[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const text = await request.text();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    requests.push({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers,
      body: text === "" ? undefined : JSON.parse(text),
    });
    const answer = answers.shift();
    if (!answer) throw new Error(`unexpected request ${request.method} ${url.pathname}`);
    return answer();
  };
  return { requests, fetch };
}

const json = (body: unknown, status = 200) => () => Response.json(body, { status });
const noContent = () => new Response(null, { status: 204 });

const subscription: SubscriptionStatus = {
  id: "sub_1",
  cluster: "default",
  informer: "pods",
  url: "https://hooks.example.com/pods",
  events: ["add", "update", "delete"],
  namespace: "demo",
  signing: "hmac",
  format: "edge-informer",
  resyncPeriodSeconds: 0,
  replayExisting: true,
  maxBatchSize: 10,
  retryBudgetSeconds: 3600,
  timeoutSeconds: 15,
  state: "active",
  declared: false,
  disabledReason: null,
  cursor: 12,
  lag: 0,
  marker: null,
  lastDeliveryAt: "2026-11-22T03:30:00.000Z",
  consecutiveFailures: 0,
  deadLetters: 1,
  deadLettersDropped: 0,
  expired: false,
  nextAttemptAt: null,
  lastError: null,
  createdAt: "2026-11-22T03:00:00.000Z",
};
const attempt: DeliveryAttempt = { eventId: "evt_1", eventIds: ["evt_1"], sequence: 3, attempt: 2, status: 200, durationMs: 41, at: "2026-11-22T03:31:00.000Z" };
const deadLetter: DeadLetter = {
  eventId: "evt/1",
  sequence: 3,
  type: "delete",
  key: "demo/web-1",
  resourceVersion: "42",
  attempts: 9,
  lastError: "HTTP 500",
  deadLetteredAt: "2026-11-22T03:20:00.000Z",
  event: {
    id: "evt/1",
    type: "delete",
    cluster: "default",
    informer: "pods",
    key: "demo/web-1",
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: "demo" } },
    initialList: false,
    finalStateUnknown: false,
    resourceVersion: "42",
    sequence: 3,
  },
};

describe("API client subscription calls", () => {
  const client = (fetch: FetchLike, baseUrl = "https://edge.example.com") => new EdgeInformerClient({ baseUrl, token: "tok", fetch });

  it("creates and lists subscriptions", async () => {
    const created: CreatedSubscription = { ...subscription, secret: "whsec_c2VjcmV0" };
    const { requests, fetch } = stub(json(created, 201), json({ items: [subscription] }));
    const spec: SubscriptionSpec = { url: subscription.url, events: ["add", "update", "delete"], namespace: "demo", maxBatchSize: 10, replayExisting: false };
    const c = client(fetch);
    expect(await c.createSubscription("pods", spec)).toEqual(created);
    expect(await c.listSubscriptions("pods")).toEqual([subscription]);
    expect(requests).toEqual([
      {
        method: "POST",
        path: "/informers/pods/subscriptions",
        headers: expect.objectContaining({ authorization: "Bearer tok", "content-type": "application/json", accept: "application/json" }),
        body: spec,
      },
      { method: "GET", path: "/informers/pods/subscriptions", headers: expect.objectContaining({ authorization: "Bearer tok" }), body: undefined },
    ]);
    expect(requests[1]!.headers["content-type"]).toBeUndefined();
  });

  it("gets, enables and deletes one", async () => {
    const { requests, fetch } = stub(json(subscription), json({ ...subscription, state: "active" }), noContent);
    const c = client(fetch, "https://edge.example.com/informer-api/");
    expect(await c.getSubscription("sub_1")).toEqual(subscription);
    expect((await c.enableSubscription("sub_1")).state).toBe("active");
    expect(await c.deleteSubscription("sub_1")).toBeUndefined();
    expect(requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ["GET", "/informer-api/subscriptions/sub_1", undefined],
      ["POST", "/informer-api/subscriptions/sub_1/enable", undefined],
      ["DELETE", "/informer-api/subscriptions/sub_1", undefined],
    ]);
  });

  it("reads deliveries and dead letters, and redelivers", async () => {
    const { requests, fetch } = stub(
      json({ items: [attempt] }),
      json({ items: [attempt] }),
      json({ items: [deadLetter] }),
      json({ items: [] }),
      json({ delivered: true, attempt }),
    );
    const c = client(fetch);
    expect(await c.deliveries("sub 1", { limit: 5 })).toEqual([attempt]);
    expect(await c.deliveries("sub 1")).toEqual([attempt]);
    expect(await c.deadLetters("sub 1")).toEqual([deadLetter]);
    expect(await c.deadLetters("sub 1", { limit: 1000 })).toEqual([]);
    expect(await c.redeliver("sub 1", deadLetter.eventId)).toEqual({ delivered: true, attempt });
    expect(requests.map((r) => [r.method, r.path])).toEqual([
      ["GET", "/subscriptions/sub%201/deliveries?limit=5"],
      ["GET", "/subscriptions/sub%201/deliveries"],
      ["GET", "/subscriptions/sub%201/dead-letters"],
      ["GET", "/subscriptions/sub%201/dead-letters?limit=1000"],
      ["POST", "/subscriptions/sub%201/dead-letters/evt%2F1/redeliver"],
    ]);
  });

  it("throws the 502 of a failed redelivery with its code and message", async () => {
    const failed: DeliveryAttempt = { ...attempt, status: 500, error: "HTTP 500" };
    const body = { error: { code: "DeliveryFailed", message: "the endpoint answered 500" }, attempt: failed };
    const { fetch } = stub(json(body, 502));
    const error = await failure(client(fetch).redeliver("sub_1", "evt_1"));
    expect(error).toMatchObject({ status: 502, code: "DeliveryFailed", message: "the endpoint answered 500", method: "POST" });
    expect(error.details).toEqual({ attempt: failed });
    expect(error.path).toBe("/subscriptions/sub_1/dead-letters/evt_1/redeliver");
  });
});

describe("API client error fallbacks", () => {
  const client = (...answers: (() => Response)[]) =>
    new EdgeInformerClient({ baseUrl: "https://edge.example.com", token: "tok-123456", fetch: stub(...answers).fetch });

  it("derives the code from the status when the body is not an API error", async () => {
    const html = () => new Response("<html>\n  <h1>502 Bad Gateway</h1>\n</html>", { status: 502, statusText: "Bad Gateway" });
    expect(await failure(client(html).getInformer("pods"))).toMatchObject({
      status: 502,
      code: "BadGateway",
      message: "<html> <h1>502 Bad Gateway</h1> </html>",
      details: undefined,
    });
    const empty = () => new Response(null, { status: 503, statusText: "Service Unavailable" });
    expect(await failure(client(empty).getInformer("pods"))).toMatchObject({ status: 503, code: "Unavailable", message: "Service Unavailable" });
    const odd = () => new Response("", { status: 418 });
    expect(await failure(client(odd).getInformer("pods"))).toMatchObject({ status: 418, code: "HTTP418", message: "HTTP 418" });
    const long = () => new Response("x".repeat(5000), { status: 500 });
    expect((await failure(client(long).getInformer("pods"))).message.length).toBeLessThan(300);
  });

  it("refuses a 2xx answer that is not JSON", async () => {
    const error = await failure(client(() => new Response("<html>login</html>", { status: 200 })).listInformers());
    expect(error).toMatchObject({ status: 200, code: "InvalidResponse" });
    expect(error.message).toMatch(/login/);
  });

  it("redacts the token should anything echo it", async () => {
    const echo = () => Response.json({ error: { code: "Unauthorized", message: "bad header 'Bearer tok-123456'" } }, { status: 401 });
    const error = await failure(client(echo).deleteInformer("pods"));
    expect(error.message).toBe("bad header 'Bearer [redacted]'");
    expect(rendered(error)).not.toContain("tok-123456");
  });

  it("checks its base URL and path segments", async () => {
    expect(() => new EdgeInformerClient({ baseUrl: "edge.example.com" })).toThrow(TypeError);
    expect(() => new EdgeInformerClient({ baseUrl: "https://edge.example.com/?x=1" })).toThrow(TypeError);
    await expect(admin.getSubscription("")).rejects.toThrow(TypeError);
  });
});
