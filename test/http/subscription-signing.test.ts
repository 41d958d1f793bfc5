/**
 * Issue 32 items 1 and 2 through the Worker's HTTP API and a real receiver (the Node fake receiver):
 * Ed25519 subscriptions (the public key answered at creation and by GET …/signing-key, readers
 * included; HMAC ones answer 409), a rotation from HMAC to Ed25519 sending both signatures, each
 * checked by an independent implementation (the `standardwebhooks` library for `v1,`, Node's
 * crypto.verify for `v1a,`), and CloudEvents deliveries read by the CloudEvents SDK for JavaScript
 * (`HTTP.toEvent`) and by a Knative-broker-style check of the required attributes.
 */
import { HTTP } from "cloudevents";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { EdgeInformerClient, type FetchLike, type SubscriptionSpec, verifyWebhook } from "../../src/client/index.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import { brokerRefusal } from "../helpers/cloudevents-broker.ts";
import { apiFailure } from "../helpers/api-failure.ts";
import { syncedInformer } from "../helpers/informer.ts";
import { nodeVerifiesEd25519, ReceiverEndpoint } from "../receiver/client.ts";

const BASE = "http://localhost";
const ADMIN_TOKEN = "test-admin-token-0123456789abcdef";
const READ_TOKEN = "test-read-token-0123456789abcdef0";
const app = createApp();
const worker: FetchLike = async (input, init) => app.fetch(new Request(input, init), { ...env, ALLOW_UNAUTHENTICATED: "true", READ_TOKEN });
const admin = new EdgeInformerClient({ baseUrl: BASE, token: ADMIN_TOKEN, fetch: worker });
const reader = new EdgeInformerClient({ baseUrl: BASE, token: READ_TOKEN, fetch: worker });

const failure = apiFailure;

async function rotate(id: string, body: unknown): Promise<Response> {
  return worker(`${BASE}/subscriptions/${id}/secret`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Each `v1a,` signature of a recorded request, checked by Node's crypto.verify. */
async function nodeVerifies(publicKey: string, request: { body: string; headers: Record<string, string> }): Promise<boolean[]> {
  const message = `${request.headers["webhook-id"]}.${request.headers["webhook-timestamp"]}.${request.body}`;
  const signatures = request.headers["webhook-signature"]!.split(" ").filter((s) => s.startsWith("v1a,"));
  return Promise.all(signatures.map((s) => nodeVerifiesEd25519(env.RECEIVER_URL, publicKey, message, s.slice("v1a,".length))));
}

describe("Ed25519 signing", () => {
  it("refuses bad signing and format values with a 400 and creates nothing", async () => {
    const { name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ url: hook.url, signing: "rsa" }, /signing/],
      [{ url: hook.url, format: "xml" }, /format/],
      [{ url: hook.url, format: "cloudevents-binary", maxBatchSize: 5 }, /cloudevents-binary carries one event per request/],
    ];
    for (const [spec, message] of bad) {
      const error = await failure(admin.createSubscription(name, spec as unknown as SubscriptionSpec));
      expect([error.status, error.code], JSON.stringify(spec)).toEqual([400, "BadRequest"]);
      expect(error.message).toMatch(message);
    }
    expect(await admin.listSubscriptions(name)).toEqual([]);
  });

  it("answers the public key at creation and to readers at GET …/signing-key, and signs v1a with it", async () => {
    const { cluster, name } = await syncedInformer();
    await cluster.create("pods", pod({ name: "signed-1", namespace: "a" }));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await admin.createSubscription(name, { url: hook.url, signing: "ed25519" });
    expect(created).toMatchObject({ signing: "ed25519", format: "edge-informer" });
    expect(created.secret).toBeUndefined(); // the private key never leaves the Worker
    expect(created.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(await reader.getSigningKey(created.id)).toEqual({ id: created.id, signing: "ed25519", publicKey: created.publicKey });
    expect(await reader.getSubscription(created.id)).toMatchObject({ signing: "ed25519" });

    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    expect(request!.headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(await nodeVerifies(created.publicKey!, request!)).toEqual([true]);
    expect((await verifyWebhook(created.publicKey!, request!.body, request!.headers))[0]).toMatchObject({ key: "a/signed-1", type: "add" });
    // Another key does not verify it.
    const other = await admin.createSubscription(name, { url: hook.url, signing: "ed25519", replayExisting: false });
    await expect(verifyWebhook(other.publicKey!, request!.body, request!.headers)).rejects.toThrow(/No matching signature/);
  });

  it("answers 409 for an HMAC subscription's signing key, 404 for an unknown one", async () => {
    const { name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const { id } = await admin.createSubscription(name, { url: hook.url, replayExisting: false });
    const hmac = await failure(reader.getSigningKey(id));
    expect([hmac.status, hmac.code]).toEqual([409, "Conflict"]);
    expect(hmac.message).toMatch(/signs with HMAC .* no public key/);
    expect((await failure(reader.getSigningKey("sub_0123456789abcdef"))).status).toBe(404);
  });

  it("rotates from HMAC to Ed25519: both signatures during the grace period, each verifying independently", async () => {
    const { cluster, name } = await syncedInformer();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const { id, secret } = await admin.createSubscription(name, { url: hook.url, replayExisting: false });
    for (const body of [{ signing: "dsa" }, { signing: "ed25519", graceSeconds: -1 }]) {
      expect((await rotate(id, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await admin.getSubscription(id)).toMatchObject({ signing: "hmac" }); // nothing changed

    const rotation = await rotate(id, { signing: "ed25519", graceSeconds: 3600 });
    expect(rotation.status).toBe(200);
    const rotated = await rotation.json<{ signing: string; publicKey: string; secret?: string; previousSecretExpiresAt: string }>();
    expect(rotated).toMatchObject({ signing: "ed25519", publicKey: expect.stringMatching(/^whpk_/) });
    expect(rotated.secret).toBeUndefined();
    expect(await admin.getSubscription(id)).toMatchObject({ signing: "ed25519" });
    expect(await reader.getSigningKey(id)).toMatchObject({ publicKey: rotated.publicKey });

    await cluster.create("pods", pod({ name: "rotating-1", namespace: "a" }));
    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    const signatures = request!.headers["webhook-signature"]!.split(" ");
    expect(signatures.map((s) => s.split(",")[0]).sort()).toEqual(["v1", "v1a"]);
    // A receiver still holding the HMAC secret (the library checks it), one given the public key (Node's crypto).
    expect(new Webhook(secret!).verify(request!.body, request!.headers)).toMatchObject({ key: "a/rotating-1" });
    expect(await nodeVerifies(rotated.publicKey, request!)).toEqual([true]);
    expect(await verifyWebhook(secret!, request!.body, request!.headers)).toHaveLength(1);
    expect(await verifyWebhook(rotated.publicKey, request!.body, request!.headers)).toHaveLength(1);
  });
});

describe("CloudEvents formats", () => {
  it("delivers binary mode: one event a request, ce-* attributes, read by the CloudEvents SDK and signed over the body", async () => {
    const { cluster, name } = await syncedInformer();
    await cluster.create("pods", pod({ name: "ce-1", namespace: "a" }));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await admin.createSubscription(name, { url: hook.url, format: "cloudevents-binary", signing: "ed25519" });
    expect(created.format).toBe("cloudevents-binary");
    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    expect(brokerRefusal(request!.headers, request!.body)).toBeUndefined();
    const event = HTTP.toEvent({ headers: request!.headers, body: request!.body });
    const [verified] = await verifyWebhook(created.publicKey!, request!.body, request!.headers);
    expect(event).toMatchObject({
      specversion: "1.0",
      id: verified!.id,
      source: `/clusters/${created.cluster}/informers/${name}`,
      type: "dev.edge-informer.added",
      subject: "a/ce-1",
      datacontenttype: "application/json",
      data: verified,
    });
    expect(request!.headers["webhook-id"]).toBe(verified!.id); // one dedupe id for both worlds
    expect(await nodeVerifies(created.publicKey!, request!)).toEqual([true]);
  });

  it("delivers structured mode, a batch as application/cloudevents-batch+json, read by the SDK", async () => {
    const { cluster, name } = await syncedInformer();
    for (const n of [1, 2, 3]) await cluster.create("pods", pod({ name: `ceb-${n}`, namespace: "a" }));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await admin.createSubscription(name, { url: hook.url, format: "cloudevents-structured", maxBatchSize: 10 });
    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    expect(request!.headers["content-type"]).toBe("application/cloudevents-batch+json");
    expect(brokerRefusal(request!.headers, request!.body)).toBeUndefined();
    const events = HTTP.toEvent({ headers: request!.headers, body: request!.body });
    const verified = await verifyWebhook(created.secret!, request!.body, request!.headers);
    expect(Array.isArray(events) && events.map((e) => [e.id, e.type, e.subject, e.data])).toEqual(
      verified.map((v) => [v.id, "dev.edge-informer.added", v.key, v]),
    );
    expect(verified.map((v) => v.key).sort()).toEqual(["a/ceb-1", "a/ceb-2", "a/ceb-3"]);
  });

  it("delivers structured mode one event a request as application/cloudevents+json", async () => {
    const { cluster, name } = await syncedInformer();
    await cluster.create("pods", pod({ name: "ces-1", namespace: "a" }));
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const created = await admin.createSubscription(name, { url: hook.url, format: "cloudevents-structured" });
    const [request] = await hook.waitForRequests(1, { timeoutMs: 15_000 });
    expect(request!.headers["content-type"]).toBe("application/cloudevents+json");
    expect(brokerRefusal(request!.headers, request!.body)).toBeUndefined();
    const event = HTTP.toEvent({ headers: request!.headers, body: request!.body });
    const [verified] = await verifyWebhook(created.secret!, request!.body, request!.headers);
    expect(event).toMatchObject({ id: verified!.id, subject: "a/ces-1", data: verified });
  });
});
