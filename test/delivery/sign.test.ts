import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { eventId } from "../../src/delivery/event-id.ts";
import { DeliverySigner, KEPT_SCRATCH_BYTES, SECRET_BYTES, newSecret, signDelivery } from "../../src/delivery/sign.ts";
import { importSigningKey, newSigningKeyPair, publicKeyOf, SIGNING_KEY_PATTERN } from "../../src/delivery/ed25519-keys.ts";
import { env } from "cloudflare:workers";
import { nodeVerifiesEd25519 } from "../receiver/client.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/** HMAC-SHA256 computed independently of the library, with WebCrypto. */
async function expectedSignature(secret: string, content: string): Promise<string> {
  const key = Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0));
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, new TextEncoder().encode(content)));
  return `v1,${btoa(String.fromCharCode(...mac))}`;
}

describe("signDelivery", () => {
  it("signs `{id}.{timestamp}.{body}` with HMAC-SHA256 of the decoded secret (known answer)", async () => {
    const body = '{"id":"evt_1","type":"add"}';
    const headers = signDelivery(SECRET, "evt_1", 1_700_000_000, body);
    expect(headers).toEqual({
      "content-type": "application/json",
      "webhook-id": "evt_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": await expectedSignature(SECRET, `evt_1.1700000000.${body}`),
    });
  });

  it("produces requests the standardwebhooks verifier accepts", () => {
    const body = JSON.stringify({ id: "evt_2", type: "delete" });
    const headers = signDelivery(SECRET, "evt_2", Math.floor(Date.now() / 1000), body);
    expect(new Webhook(SECRET).verify(body, headers)).toEqual({ id: "evt_2", type: "delete" });
  });

  it("signs each attempt with its own timestamp", () => {
    const a = signDelivery(SECRET, "evt_3", 1_700_000_000, "{}");
    const b = signDelivery(SECRET, "evt_3", 1_700_000_060, "{}");
    expect(a["webhook-signature"]).not.toBe(b["webhook-signature"]);
  });
});

describe("DeliverySigner", () => {
  it("signs exactly as the library does, for any secret, id, time and body (UTF-8 included)", async () => {
    const signer = new DeliverySigner();
    const secrets = [SECRET, newSecret((n) => new Uint8Array(n).map((_, i) => i * 37)), "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"];
    const bodies = ["{}", '{"name":"caf\u00e9 \u{1f680}"}', "x".repeat(70_000)];
    for (const secret of secrets) {
      for (const body of bodies) {
        for (const ts of [0, 1_700_000_000]) {
          expect(await signer.sign(secret, "evt_9", ts, body)).toEqual(signDelivery(secret, "evt_9", ts, body));
        }
      }
    }
  });

  it("signs concurrent deliveries each over its own bytes (a redelivery during the loop's delivery)", async () => {
    const signer = new DeliverySigner();
    const old = newSecret((n) => new Uint8Array(n).fill(7));
    const bodies = ['{"a":"' + "x".repeat(20_000) + '"}', '{"b":"caf\u00e9"}', '{"c":1}'];
    const signed = await Promise.all(bodies.map((body, i) => signer.sign(SECRET, `evt_${i}`, 1_700_000_000, body, i === 0 ? old : undefined)));
    signed.forEach((headers, i) => {
      const expected = signDelivery(SECRET, `evt_${i}`, 1_700_000_000, bodies[i]!)["webhook-signature"];
      const both = i === 0 ? `${expected} ${signDelivery(old, "evt_0", 1_700_000_000, bodies[0]!)["webhook-signature"]}` : expected;
      expect(headers["webhook-signature"]).toBe(both);
    });
  });

  it("keeps at most 64 KiB between calls, however big a body it signed", async () => {
    const signer = new DeliverySigner();
    const big = `{"data":"${"\u00e9".repeat(1_000_000)}"}`;
    expect(await signer.sign(SECRET, "evt_big", 1, big)).toEqual(signDelivery(SECRET, "evt_big", 1, big));
    expect(signer.heldBytes).toBeLessThanOrEqual(KEPT_SCRATCH_BYTES);
    const small = '{"b":"' + "y".repeat(10_000) + '"}';
    expect(await signer.sign(SECRET, "evt_small", 1, small)).toEqual(signDelivery(SECRET, "evt_small", 1, small));
    expect(signer.heldBytes).toBeLessThanOrEqual(KEPT_SCRATCH_BYTES);
  });

  it("imports a changed secret again", async () => {
    const signer = new DeliverySigner();
    const other = newSecret((n) => new Uint8Array(n).fill(3));
    expect((await signer.sign(SECRET, "evt_1", 1, "{}"))["webhook-signature"]).toBe(signDelivery(SECRET, "evt_1", 1, "{}")["webhook-signature"]);
    expect((await signer.sign(other, "evt_1", 1, "{}"))["webhook-signature"]).toBe(signDelivery(other, "evt_1", 1, "{}")["webhook-signature"]);
    expect((await signer.sign(SECRET, "evt_1", 1, "{}"))["webhook-signature"]).toBe(signDelivery(SECRET, "evt_1", 1, "{}")["webhook-signature"]);
  });

  it("signs with the new and the previous secret during a rotation's grace period, either verifying", async () => {
    const signer = new DeliverySigner();
    const rotated = newSecret((n) => new Uint8Array(n).fill(7));
    const body = '{"id":"evt_4"}';
    const ts = Math.floor(Date.now() / 1000);
    const headers = await signer.sign(rotated, "evt_4", ts, body, SECRET);
    // Standard Webhooks: several signatures, space-separated; the new one first.
    expect(headers["webhook-signature"]).toBe(
      `${signDelivery(rotated, "evt_4", ts, body)["webhook-signature"]} ${signDelivery(SECRET, "evt_4", ts, body)["webhook-signature"]}`,
    );
    expect(new Webhook(rotated).verify(body, headers)).toEqual({ id: "evt_4" });
    expect(new Webhook(SECRET).verify(body, headers)).toEqual({ id: "evt_4" });
    const after = await signer.sign(rotated, "evt_4", ts, body);
    expect(() => new Webhook(SECRET).verify(body, after)).toThrow();
  });

  it("rejects a secret the library rejects, and recovers with a good one", async () => {
    const signer = new DeliverySigner();
    await expect(signer.sign("whsec_", "evt_1", 1, "{}")).rejects.toThrow();
    await expect(signer.sign("whsec_", "evt_1", 1, "{}")).rejects.toThrow();
    expect(await signer.sign(SECRET, "evt_1", 1, "{}")).toEqual(signDelivery(SECRET, "evt_1", 1, "{}"));
  });
});

const hexBase64 = (hex: string) => btoa(String.fromCharCode(...hex.match(/../g)!.map((h) => parseInt(h, 16))));
/** RFC 8032 §7.1 TEST 1: the private key (seed) and its public key. */
const RFC8032_KEY = `whsk_${hexBase64("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")}`;
const RFC8032_PUBLIC = `whpk_${hexBase64("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")}`;

describe("Ed25519 keys and v1a signatures (issue 32)", () => {
  it("derives the RFC 8032 public key from its private key (known answer)", async () => {
    expect(RFC8032_KEY).toMatch(SIGNING_KEY_PATTERN);
    expect(await publicKeyOf(RFC8032_KEY)).toBe(RFC8032_PUBLIC);
  });

  it("makes whsk_/whpk_ pairs of raw 32-byte keys, base64, that belong together", async () => {
    const { signingKey, publicKey } = await newSigningKeyPair();
    expect(signingKey).toMatch(SIGNING_KEY_PATTERN);
    expect(atob(publicKey.slice("whpk_".length))).toHaveLength(32);
    expect(await publicKeyOf(signingKey)).toBe(publicKey);
    expect((await newSigningKeyPair()).signingKey).not.toBe(signingKey);
    await expect(importSigningKey("whsk_AAAA")).rejects.toThrow(/32 bytes/);
  });

  it("signs `{id}.{timestamp}.{body}` as v1a, verified by Node's crypto.verify (an independent implementation)", async () => {
    const signer = new DeliverySigner();
    const body = '{"name":"caf\u00e9 \u{1f680}"}';
    const headers = await signer.sign(RFC8032_KEY, "evt_ed", 1_700_000_000, body);
    expect(headers["webhook-signature"]).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    const signature = headers["webhook-signature"].slice("v1a,".length);
    expect(await nodeVerifiesEd25519(env.RECEIVER_URL, RFC8032_PUBLIC, `evt_ed.1700000000.${body}`, signature)).toBe(true);
    expect(await nodeVerifiesEd25519(env.RECEIVER_URL, RFC8032_PUBLIC, `evt_ed.1700000001.${body}`, signature)).toBe(false);
    // Deterministic (RFC 8032): the same content, the same signature.
    expect(await signer.sign(RFC8032_KEY, "evt_ed", 1_700_000_000, body)).toEqual(headers);
  });

  it("sends v1a and v1 side by side while rotating from HMAC to Ed25519, each verifying on its own", async () => {
    const signer = new DeliverySigner();
    const body = '{"id":"evt_5"}';
    const ts = Math.floor(Date.now() / 1000);
    const headers = await signer.sign(RFC8032_KEY, "evt_5", ts, body, SECRET);
    const [v1a, v1] = headers["webhook-signature"].split(" ");
    expect(v1).toBe(signDelivery(SECRET, "evt_5", ts, body)["webhook-signature"]);
    expect(new Webhook(SECRET).verify(body, headers)).toEqual({ id: "evt_5" }); // the library skips v1a
    expect(await nodeVerifiesEd25519(env.RECEIVER_URL, RFC8032_PUBLIC, `evt_5.${ts}.${body}`, v1a!.slice("v1a,".length))).toBe(true);
  });
});

describe("newSecret", () => {
  it("is whsec_ and base64 of the requested random bytes", () => {
    const secret = newSecret((n) => new Uint8Array(n).fill(7));
    expect(secret.startsWith("whsec_")).toBe(true);
    expect(atob(secret.slice(6))).toHaveLength(SECRET_BYTES);
    expect(() => new Webhook(secret)).not.toThrow();
  });
});

describe("eventId", () => {
  const identity = { informer: "pods", key: "default/web-1", uid: "u-1", resourceVersion: "42", type: "update" };

  it("is the same for the same change, whenever it is computed", async () => {
    expect(await eventId(identity)).toBe(await eventId({ ...identity }));
    expect(await eventId(identity)).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
  });

  it.each(["informer", "key", "uid", "resourceVersion", "type"] as const)("changes with the %s", async (field) => {
    expect(await eventId({ ...identity, [field]: `${identity[field]}x` })).not.toBe(await eventId(identity));
  });

  it("does not confuse fields that run together", async () => {
    expect(await eventId({ ...identity, key: "a", uid: "bc" })).not.toBe(await eventId({ ...identity, key: "ab", uid: "c" }));
  });
});
