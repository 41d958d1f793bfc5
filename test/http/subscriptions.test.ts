/**
 * Subscription routes through the Worker's HTTP API, driven with the typed client: creation and
 * its validation (invariant 8: a clear 4xx and nothing created), the secret shown once, status,
 * delivery log, dead letters and redelivery, 410 → disabled → enable, and deletion (also with the
 * informer).
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { EdgeInformerClient, type FetchLike, type SubscriptionSpec } from "../../src/client/index.ts";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { createApp } from "../../src/http/app.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import { pod } from "../fake-apiserver/client.ts";
import { apiFailure } from "../helpers/api-failure.ts";
import { newCluster, syncedInformer, waitFor } from "../helpers/informer.ts";
import { subscriptionStored } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const BASE = "http://localhost";
const app = createApp();
// Local development settings (loopback http receivers allowed), with the admin token still required.
const devWorker: FetchLike = async (input, init) => app.fetch(new Request(input, init), { ...env, ALLOW_UNAUTHENTICATED: "true" });
// A deployment's settings: no local development.
const worker: FetchLike = async (input, init) => app.fetch(new Request(input, init), { ...env, ALLOW_UNAUTHENTICATED: "false" });

const admin = new EdgeInformerClient({ baseUrl: BASE, token: "test-admin-token-0123456789abcdef", fetch: devWorker });
const anonymous = new EdgeInformerClient({ baseUrl: BASE, fetch: devWorker });
const production = new EdgeInformerClient({ baseUrl: BASE, token: "test-admin-token-0123456789abcdef", fetch: worker });

const failure = apiFailure;

describe("subscription routes", () => {
  it("rejects bad subscriptions with a clear 4xx and creates nothing", async () => {
    const { name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const bad: [SubscriptionSpec | Record<string, unknown>, RegExp][] = [
      [{ url: "http://hooks.example.com/x" }, /url: must be https/],
      [{ url: "not a url" }, /url: 'not a url' is not an absolute URL/],
      [{ url: "https://user:pw@hooks.example.com/" }, /must not carry credentials/],
      [{ url: "https://169.254.169.254/latest" }, /url: 169\.254\.169\.254 is an IP address: only host names may be used/], // issue 17
      [{ url: hook.url, labelSelector: "app in (" }, /labelSelector/],
      [{ url: hook.url, fieldSelector: "spec.nodeName~x" }, /fieldSelector/],
      [{ url: hook.url, events: ["create"] }, /events/],
      [{ url: hook.url, events: [] }, /at least one event type/],
      [{ url: hook.url, maxBatchSize: 0 }, /maxBatchSize/],
      [{ url: hook.url, timeoutSeconds: 60 }, /timeoutSeconds/],
      [{ url: hook.url, secret: "whsec_mine" }, /secret/],
      [{}, /url/],
    ];
    for (const [spec, message] of bad) {
      const error = await failure(admin.createSubscription(name, spec as SubscriptionSpec));
      expect([error.status, error.code], JSON.stringify(spec)).toEqual([400, "BadRequest"]);
      expect(error.message).toMatch(message);
    }
    // Outside local development, a loopback http receiver is refused too.
    const refused = await failure(production.createSubscription(name, { url: hook.url }));
    expect([refused.status, refused.message]).toEqual([400, expect.stringMatching(/ALLOW_UNAUTHENTICATED/)]);
    expect((await failure(admin.createSubscription("no-such-informer", { url: hook.url }))).status).toBe(404);
    expect((await failure(anonymous.createSubscription(name, { url: hook.url }))).status).toBe(401);
    const raw = await devWorker(`${BASE}/informers/${name}/subscriptions`, {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token-0123456789abcdef", "content-type": "application/json" },
      body: "{not json",
    });
    expect([raw.status, ((await raw.json()) as { error: { code: string } }).error.code]).toEqual([400, "BadRequest"]);
    const huge = await devWorker(`${BASE}/informers/${name}/subscriptions`, {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token-0123456789abcdef", "content-type": "application/json" },
      body: JSON.stringify({ url: hook.url, labelSelector: "a".repeat(20_000) }),
    });
    expect(huge.status).toBe(413);
    expect(await admin.listSubscriptions(name)).toEqual([]);
    expect((await admin.getInformer(name)).subscriptions).toBe(0);
    expect(await hook.requests()).toEqual([]);
    expect((await failure(admin.getSubscription("sub_0123456789abcdef"))).status).toBe(404);
    const malformed = await failure(admin.getSubscription("nope"));
    expect([malformed.status, malformed.message]).toEqual([400, "'nope' is not a subscription id: 'sub_' and 1-128 lower-case letters, digits and '-', not starting with '-'"]);
  });

  it("creates a subscription, shows its secret once, lists, inspects and deletes it", async () => {
    const { name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await admin.createSubscription(name, { url: hook.url, events: ["add", "delete"], resyncPeriodSeconds: 0 });
    expect(created).toMatchObject({ informer: name, url: hook.url, events: ["add", "delete"], state: "active", maxBatchSize: 1 });
    expect(created.id).toMatch(/^sub_[0-9a-f]{32}$/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const fetched = await admin.getSubscription(created.id);
    expect(JSON.stringify(fetched)).not.toContain(created.secret);
    expect(JSON.stringify(await admin.listSubscriptions(name))).not.toContain(created.secret);
    expect((await admin.listSubscriptions(name)).map((s) => s.id)).toEqual([created.id]);
    expect((await admin.getInformer(name)).subscriptions).toBe(1);
    expect((await failure(anonymous.deleteSubscription(created.id))).status).toBe(401);
    await admin.deleteSubscription(created.id);
    expect((await failure(admin.getSubscription(created.id))).status).toBe(404);
    expect((await failure(admin.deleteSubscription(created.id))).status).toBe(404);
    expect((await admin.getInformer(name)).subscriptions).toBe(0);
  });

  it("subscribes to an informer of another cluster under /clusters/{cluster}/informers, whose events name that cluster", async () => {
    const fake = await newCluster();
    await fake.create("pods", pod({ name: "web-1", namespace: "default" }));
    const cluster = `far-${crypto.randomUUID().slice(0, 6)}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await devWorker(`${BASE}${path}`, {
        method,
        headers: { authorization: "Bearer test-admin-token-0123456789abcdef", "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (response.status === 204 ? undefined : await response.json()) as any };
    };
    expect((await call("PUT", `/clusters/${cluster}`, { server: fake.url })).status).toBe(201);
    expect((await call("PUT", `/clusters/${cluster}/informers/pods`, { resource: "pods", watchTimeoutSeconds: 3 })).status).toBe(201);
    await waitFor("the informer to sync", async () => (await call("GET", `/clusters/${cluster}/informers/pods`)).body.synced === true);

    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await call("POST", `/clusters/${cluster}/informers/pods/subscriptions`, { url: hook.url });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ cluster, informer: "pods", state: "active" });
    expect((await call("GET", `/subscriptions/${created.body.id}`)).body).toMatchObject({ id: created.body.id, cluster, informer: "pods" });
    const listed = await call("GET", `/clusters/${cluster}/informers/pods/subscriptions`);
    expect(listed.body.items.map((s: { id: string; cluster: string }) => [s.id, s.cluster])).toEqual([[created.body.id, cluster]]);
    // The default cluster's informer of that name is another informer: not found, nothing listed there.
    expect((await call("GET", "/informers/pods/subscriptions")).status).toBe(404);

    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    expect(request!.headers["x-edge-informer-cluster"]).toBe(cluster);
    expect(new Webhook(created.body.secret).verify(request!.body, request!.headers)).toMatchObject({ type: "add", cluster, informer: "pods", key: "default/web-1" });
    expect((await call("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
    expect((await call("GET", `/subscriptions/${created.body.id}`)).status).toBe(404);
  });

  it("rotates a lost secret: the new one answered once, the old one still signing for its grace period", async () => {
    const { cluster, name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const { id, secret: old } = await admin.createSubscription(name, { url: hook.url, replayExisting: false });
    const post = (path: string, init: { body?: unknown; token?: string } = {}) =>
      devWorker(`${BASE}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${init.token ?? "test-admin-token-0123456789abcdef"}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
        ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
      });
    const signaturesOf = async (since: number) => {
      const requests = await waitFor("a delivery", async () => {
        const received = await hook.requests(since);
        return received.length > 0 && received;
      });
      return requests[0]!.headers["webhook-signature"]!.split(" ");
    };
    const change = async (n: number) => {
      const seen = (await hook.requests()).length;
      await cluster.create("pods", pod({ name: `rotated-${n}`, namespace: "a" }));
      return seen;
    };

    // Bad input changes nothing (the old secret alone still signs).
    for (const [body, message] of [[{ graceSeconds: -1 }, /graceSeconds/], [{ graceSeconds: 9_000_000 }, /graceSeconds/], [{ bogus: 1 }, /bogus/], ["{nope", /not valid JSON/]] as const) {
      const refused = await post(`/subscriptions/${id}/secret`, { body });
      expect(refused.status).toBe(400);
      expect((await refused.json<{ error: { message: string } }>()).error.message).toMatch(message);
    }
    expect((await post(`/subscriptions/${id}/secret`, { token: "nope" })).status).toBe(401);
    expect((await post(`/subscriptions/sub_0123456789abcdef/secret`)).status).toBe(404);
    let since = await change(1);
    expect(await signaturesOf(since)).toEqual([expect.stringMatching(/^v1,/)]);

    const rotation = await post(`/subscriptions/${id}/secret`);
    expect(rotation.status).toBe(200);
    const rotated = await rotation.json<{ id: string; secret: string; previousSecretExpiresAt: string }>();
    expect(rotated.id).toBe(id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(old);
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(JSON.stringify(await admin.getSubscription(id))).not.toContain(rotated.secret);
    expect(JSON.stringify(await admin.getSubscription(id))).not.toContain(old);

    since = await change(2);
    const during = await signaturesOf(since);
    expect(during).toHaveLength(2);
    const [request] = await hook.requests(since);
    // Either secret verifies the request (Standard Webhooks accepts any matching signature).
    for (const secret of [rotated.secret, old!]) {
      expect(new Webhook(secret).verify(request!.body, request!.headers)).toMatchObject({ type: "add" });
    }

    // A rotation without grace: the previous secret stops at once.
    const now = await (await post(`/subscriptions/${id}/secret`, { body: { graceSeconds: 0 } })).json<{ secret: string }>();
    since = await change(3);
    const [last] = (await signaturesOf(since), await hook.requests(since));
    expect(last!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(new Webhook(now.secret).verify(last!.body, last!.headers)).toMatchObject({ type: "add" });
    expect(() => new Webhook(rotated.secret).verify(last!.body, last!.headers)).toThrow();
  });

  it("dead-letters past the retry budget, shows the delivery log, and redelivers on request", async () => {
    const { cluster, name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 500, body: "boom" } });
    const { id } = await admin.createSubscription(name, { url: hook.url, retryBudgetSeconds: 1, replayExisting: false });
    await cluster.create("pods", pod({ name: "x", namespace: "a" }));
    const [dead] = await waitFor("a dead letter", async () => {
      const letters = await admin.deadLetters(id);
      return letters.length > 0 && letters;
    });
    expect(dead).toMatchObject({ type: "add", key: "a/x", sequence: 1, lastError: "HTTP 500", event: { key: "a/x", type: "add" } });
    expect(await admin.getSubscription(id)).toMatchObject({ deadLetters: 1, cursor: expect.any(Number) });
    const log = await admin.deliveries(id);
    expect(log[0]).toMatchObject({ eventIds: [dead!.eventId], status: 500, error: "HTTP 500", response: "boom" });

    const refused = await failure(admin.redeliver(id, dead!.eventId));
    expect([refused.status, refused.code]).toEqual([502, "DeliveryFailed"]);
    // A 410 answer to a redelivery disables the subscription, which then redelivers nothing (#7.14).
    await hook.setBehaviour({ default: { status: 410 } });
    expect((await failure(admin.redeliver(id, dead!.eventId))).status).toBe(502);
    expect(await admin.getSubscription(id)).toMatchObject({ state: "disabled", disabledReason: expect.stringMatching(/410 Gone/) });
    const sent = (await hook.requests()).length;
    const disabled = await failure(admin.redeliver(id, dead!.eventId));
    expect([disabled.status, disabled.code, disabled.message]).toEqual([409, "Conflict", expect.stringMatching(/disabled.*enable it/)]);
    expect(await hook.requests()).toHaveLength(sent);
    await admin.enableSubscription(id);
    await hook.setBehaviour({ default: { status: 204 } });
    expect(await admin.redeliver(id, dead!.eventId)).toMatchObject({ delivered: true, attempt: { status: 204 } });
    expect(await admin.deadLetters(id)).toEqual([]);
    expect((await hook.requests()).at(-1)!.headers["webhook-id"]).toBe(dead!.eventId);
    expect((await failure(admin.redeliver(id, dead!.eventId))).status).toBe(404);
  });

  it("is disabled by 410 Gone and delivers what it held once re-enabled", async () => {
    const { cluster, name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { script: [{ status: 410 }] });
    const { id } = await admin.createSubscription(name, { url: hook.url, replayExisting: false });
    await cluster.create("pods", pod({ name: "y", namespace: "a" }));
    const disabled = await waitFor("410 to disable", async () => {
      const s = await admin.getSubscription(id);
      return s.state === "disabled" && s;
    });
    expect(disabled).toMatchObject({ disabledReason: expect.stringMatching(/410 Gone/) });
    await cluster.create("pods", pod({ name: "z", namespace: "a" }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await hook.requests()).toHaveLength(1);
    expect(await admin.enableSubscription(id)).toMatchObject({ state: "active" });
    const requests = await hook.waitForRequests(3);
    expect(requests.map((r) => (JSON.parse(r.body) as { key: string }).key)).toEqual(["a/y", "a/y", "a/z"]);
  });

  it("deletes an informer's subscriptions with it", async () => {
    const cluster = await newCluster();
    const name = `cascade-${crypto.randomUUID().slice(0, 8)}`;
    unwrap(await env.FACTORY.getByName(FACTORY_NAME).put(parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3 }, name), "api", cluster.url));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const { id } = await admin.createSubscription(name, { url: hook.url });
    await admin.deleteInformer(name);
    expect((await failure(admin.getSubscription(id))).status).toBe(404);
  });
  it("answers 404 for an unknown subscription on every route and stores nothing; a malformed id is a 400 (#7.17)", async () => {
    const id = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
    const attempts = [
      admin.getSubscription(id),
      admin.deleteSubscription(id),
      admin.enableSubscription(id),
      admin.deliveries(id),
      admin.deadLetters(id),
      admin.redeliver(id, "evt_unknown"),
    ];
    for (const error of await Promise.all(attempts.map(failure))) expect([error.status, error.code]).toEqual([404, "NotFound"]);
    // Not even addressed: locally workerd lists every object ever addressed, stored rows or not.
    expect((await listDurableObjectIds(env.SUBSCRIPTION)).map((o) => o.toString())).not.toContain(env.SUBSCRIPTION.idFromName(id).toString());
    expect(await subscriptionStored(id)).toBe(false);
    for (const bad of ["nope", "sub_UPPER", `sub_${"a".repeat(200)}`, "sub_a%2Fb"]) {
      expect((await failure(admin.getSubscription(bad))).status, bad).toBe(400);
    }
  });

  it("pages subscription lists, deliveries and dead letters with continue, keeping their shapes (#7.18)", async () => {
    const { name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await admin.createSubscription(name, { url: hook.url, replayExisting: false })).id);
    const get = async (path: string) => {
      const response = await devWorker(`${BASE}${path}`, { headers: { authorization: "Bearer test-admin-token-0123456789abcdef" } });
      return { status: response.status, body: (await response.json()) as { items: { id: string }[]; continue?: string } };
    };
    const first = await get(`/informers/${name}/subscriptions?limit=2`);
    expect(first.body.items.map((s) => s.id)).toEqual(ids.slice(0, 2));
    const second = await get(`/informers/${name}/subscriptions?limit=2&continue=${first.body.continue}`);
    expect(second.body).toEqual({ items: [expect.objectContaining({ id: ids[2] })] });
    expect((await admin.listSubscriptions(name)).map((s) => s.id)).toEqual(ids); // the client follows continue
    for (const path of [`/informers/${name}/subscriptions`, `/subscriptions/${ids[0]}/dead-letters`, `/subscriptions/${ids[0]}/deliveries`]) {
      const bad = await get(`${path}?continue=bm90LWEtdG9rZW4`);
      expect([bad.status, bad.body], path).toEqual([400, { error: { code: "BadRequest", message: expect.stringMatching(/continue/) } }]);
      expect((await get(path)).body).toEqual({ items: expect.any(Array) });
    }
  });
});
