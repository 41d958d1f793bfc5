import { describe, expect, it } from "vitest";
import { WebhookVerificationError, verifyWebhook } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/index.ts";
import { DeliverySigner, signDelivery } from "../../src/delivery/sign.ts";
import { newSigningKeyPair } from "../../src/delivery/ed25519-keys.ts";
import { type DeliveryFormat, shapeBody } from "../../src/delivery/cloudevents.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const now = () => Math.floor(Date.now() / 1000);

function event(sequence: number): WebhookEvent {
  return {
    id: `evt_${sequence}`,
    type: "add",
    cluster: "default",
    informer: "pods",
    key: "default/web-1",
    object: { apiVersion: "v1", kind: "Pod", metadata: { name: "web-1", namespace: "default" } },
    initialList: true,
    finalStateUnknown: false,
    resourceVersion: "42",
    sequence,
  };
}

/** A valid delivery; each test breaks one thing. */
function delivery(body: unknown = event(1), options: { secret?: string; timestamp?: number } = {}) {
  const text = JSON.stringify(body);
  const headers = signDelivery(options.secret ?? SECRET, "evt_1", options.timestamp ?? now(), text);
  return { text, headers: { ...headers } as Record<string, string> };
}

describe("verifyWebhook", () => {
  it("returns the event of a valid single-event delivery", async () => {
    const { text, headers } = delivery();
    expect(await verifyWebhook(SECRET, text, headers)).toEqual([event(1)]);
  });

  it("returns a batch's events in order", async () => {
    const { text, headers } = delivery({ events: [event(1), event(2)] });
    expect((await verifyWebhook(SECRET, text, new Headers(headers))).map((e) => e.sequence)).toEqual([1, 2]);
  });

  it("accepts Node-style header records with any casing", async () => {
    const { text, headers } = delivery();
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await verifyWebhook(SECRET, text, upper)).toHaveLength(1);
  });

  it.each([
    ["another secret", () => ({ ...delivery(event(1), { secret: "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }) })],
    ["a timestamp 10 minutes old", () => delivery(event(1), { timestamp: now() - 600 })],
    ["a timestamp 10 minutes ahead", () => delivery(event(1), { timestamp: now() + 600 })],
    [
      "a body changed after signing",
      () => {
        const d = delivery();
        return { ...d, text: d.text.replace("web-1", "web-2") };
      },
    ],
    [
      "a missing signature",
      () => {
        const d = delivery();
        delete d.headers["webhook-signature"];
        return d;
      },
    ],
    ["a body that is no edge-informer event", () => delivery({ hello: "world" })],
  ])("refuses %s", async (_, make) => {
    const { text, headers } = make();
    await expect(verifyWebhook(SECRET, text, headers)).rejects.toThrow(WebhookVerificationError);
  });
});

describe("verifyWebhook with an Ed25519 public key (issue 32)", () => {
  const signer = new DeliverySigner();
  const signed = async (signingKey: string, text: string, options: { timestamp?: number; contentType?: string; previous?: string } = {}) =>
    ({ ...(await signer.sign(signingKey, "evt_1", options.timestamp ?? now(), text, options.previous, options.contentType)) }) as Record<string, string>;

  it("returns the events of a v1a-signed delivery, and refuses another key, an old timestamp, a changed body", async () => {
    const { signingKey, publicKey } = await newSigningKeyPair();
    const other = await newSigningKeyPair();
    const text = JSON.stringify(event(1));
    const headers = await signed(signingKey, text);
    expect(await verifyWebhook(publicKey, text, headers)).toEqual([event(1)]);
    await expect(verifyWebhook(other.publicKey, text, headers)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(publicKey, text.replace("web-1", "web-2"), headers)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(publicKey, text, await signed(signingKey, text, { timestamp: now() - 600 }))).rejects.toThrow(/too old/);
    await expect(verifyWebhook("whpk_AAAA", text, headers)).rejects.toThrow(/not a whpk_ Ed25519 public key/);
    // An HMAC-only delivery has no v1a signature for a public key.
    await expect(verifyWebhook(publicKey, text, delivery().headers)).rejects.toThrow(/No matching signature/);
  });

  it("accepts a rotation's delivery with either the old HMAC secret or the new public key", async () => {
    const { signingKey, publicKey } = await newSigningKeyPair();
    const text = JSON.stringify(event(2));
    const headers = await signed(signingKey, text, { previous: SECRET });
    expect(await verifyWebhook(publicKey, text, headers)).toEqual([event(2)]);
    expect(await verifyWebhook(SECRET, text, headers)).toEqual([event(2)]);
  });
});

describe("verifyWebhook of CloudEvents deliveries (issue 32)", () => {
  const origin = { cluster: "default", informer: "pods" };
  const toSend = (e: WebhookEvent) => ({ eventId: e.id, type: e.type, key: e.key, time: Date.now(), text: JSON.stringify(e) });
  const deliveryOf = (format: DeliveryFormat, events: WebhookEvent[], batched: boolean) => {
    const shaped = shapeBody(format, origin, events.map(toSend), batched);
    const headers = { ...shaped.headers, ...signDelivery(SECRET, "evt_1", now(), shaped.body), "content-type": shaped.contentType };
    return { text: shaped.body, headers };
  };

  it.each([
    ["binary", "cloudevents-binary", false, [event(1)]],
    ["structured", "cloudevents-structured", false, [event(1)]],
    ["a structured batch", "cloudevents-structured", true, [event(1), event(2)]],
  ] as const)("returns the events of %s mode (each CloudEvent's data)", async (_, format, batched, events) => {
    const { text, headers } = deliveryOf(format, [...events], batched);
    expect(await verifyWebhook(SECRET, text, headers)).toEqual(events);
  });

  it("refuses a binary request whose ce-id is not its body's event, and a CloudEvent whose data is not its event", async () => {
    const binary = deliveryOf("cloudevents-binary", [event(1)], false);
    await expect(verifyWebhook(SECRET, binary.text, { ...binary.headers, "ce-id": "evt_other" })).rejects.toThrow(/ce-id/);
    const text = JSON.stringify({ specversion: "1.0", id: "evt_9", source: "/x", type: "t", data: event(1) });
    const headers = { ...signDelivery(SECRET, "evt_9", now(), text), "content-type": "application/cloudevents+json" };
    await expect(verifyWebhook(SECRET, text, headers)).rejects.toThrow(/data is not its edge-informer event/);
  });
});
