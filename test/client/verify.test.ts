import { describe, expect, it } from "vitest";
import { WebhookVerificationError, verifyWebhook } from "../../src/client/index.ts";
import type { WebhookEvent } from "../../src/client/index.ts";
import { signDelivery } from "../../src/delivery/sign.ts";

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
  it("returns the event of a valid single-event delivery", () => {
    const { text, headers } = delivery();
    expect(verifyWebhook(SECRET, text, headers)).toEqual([event(1)]);
  });

  it("returns a batch's events in order", () => {
    const { text, headers } = delivery({ events: [event(1), event(2)] });
    expect(verifyWebhook(SECRET, text, new Headers(headers)).map((e) => e.sequence)).toEqual([1, 2]);
  });

  it("accepts Node-style header records with any casing", () => {
    const { text, headers } = delivery();
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(SECRET, text, upper)).toHaveLength(1);
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
  ])("refuses %s", (_, make) => {
    const { text, headers } = make();
    expect(() => verifyWebhook(SECRET, text, headers)).toThrow(WebhookVerificationError);
  });
});
