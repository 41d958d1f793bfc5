/**
 * Webhook secrets at rest (issue 17 item 11): a subscription's secret, and the previous one a
 * rotation keeps for its grace period, are stored sealed, sign deliveries after a restart and
 * across a key rotation; plain text from an earlier release keeps signing and is sealed when the
 * object wakes; a sealed secret moved to another subscription's row is refused.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { webhookSecretBinding } from "../../src/delivery/stored-secrets.ts";
import { subscriptionSpecSchema } from "../../src/delivery/subscription-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { SEALED_PREFIX, SecretSealer } from "../../src/secrets/secret-sealer.ts";
import { pod } from "../fake-apiserver/builders.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { newCluster, startInformer, waitFor, waitSynced } from "../helpers/informer.ts";
import { withObjectEnv } from "../helpers/object-env.ts";
import { receiverView, subscribe, subscriptionStored } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const currentKeyOnly = new SecretSealer({ key: env.ENCRYPTION_KEY, allowPlaintext: false });
const previousKey = new SecretSealer({ key: env.ENCRYPTION_KEY_PREVIOUS, allowPlaintext: false });

type SecretColumns = { secret: string; previous_secret: string | null; previous_secret_until: number | null };

const subscriptionObject = (id: string) => env.SUBSCRIPTION.getByName(id);

async function storedSecrets(id: string): Promise<SecretColumns> {
  return runInDurableObject(subscriptionObject(id), (_, state) =>
    state.storage.sql.exec<SecretColumns>("SELECT secret, previous_secret, previous_secret_until FROM subscription").one(),
  );
}

/** Overwrites the stored secret, as an earlier release or another key left it, and restarts the object. */
async function storeSecret(id: string, secret: string): Promise<void> {
  await runInDurableObject(subscriptionObject(id), (_, state) => {
    state.storage.sql.exec("UPDATE subscription SET secret = ?", secret);
  });
  await evictDurableObject(subscriptionObject(id));
}

async function subscribedInformer() {
  const cluster = await newCluster();
  const informer = await startInformer(cluster);
  await waitSynced(informer.stub);
  const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
  const subscription = await subscribe(informer.name, hook);
  return { cluster, hook, ...subscription };
}

/** A new pod reaches the receiver, signed with `secret` (receiverView verifies every request). */
async function deliversSignedWith(cluster: FakeCluster, hook: ReceiverEndpoint, secret: string): Promise<void> {
  const name = `p-${crypto.randomUUID().slice(0, 6)}`;
  await cluster.create("pods", pod({ name, namespace: "default" }));
  await waitFor(`${name} delivered`, async () => (await receiverView(hook, secret)).state.has(`default/${name}`));
}

/** Creates a subscription on a new informer through an object whose Worker variables are `vars`. */
async function createWith(vars: Record<string, string | undefined>) {
  const informer = await startInformer(await newCluster());
  const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
  const id = `sub_${crypto.randomUUID().replace(/-/g, "")}`;
  const spec = subscriptionSpecSchema.parse({ url: hook.url });
  const answer = await withObjectEnv(subscriptionObject(id), vars, (instance) => instance.create(id, { cluster: "default", name: informer.name }, spec));
  return { id, informer, answer };
}

describe("webhook secrets at rest", () => {
  it("stores the secret sealed, and signs with it after a restart", async () => {
    const { cluster, hook, id, secret } = await subscribedInformer();
    const stored = await storedSecrets(id);
    expect(stored.secret.startsWith(SEALED_PREFIX)).toBe(true);
    expect(stored.secret).not.toContain(secret.slice("whsec_".length));
    expect((await currentKeyOnly.open(stored.secret, webhookSecretBinding(id))).value).toBe(secret);
    await evictDurableObject(subscriptionObject(id));
    await deliversSignedWith(cluster, hook, secret);
  });

  it("stores a rotated secret and the one it replaced sealed, and drops the old one once its grace period ended", async () => {
    const { id, stub } = await subscribedInformer();
    const rotated = unwrap(await stub().rotateSecret(1));
    const stored = await storedSecrets(id);
    expect([stored.secret, stored.previous_secret].every((value) => value?.startsWith(SEALED_PREFIX))).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(rotated.secret!.slice("whsec_".length));
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await evictDurableObject(subscriptionObject(id));
    unwrap(await stub().status());
    expect(await storedSecrets(id)).toEqual({ secret: stored.secret, previous_secret: null, previous_secret_until: null });
  });

  it("keeps a plain-text secret from an earlier release signing, and seals it when the object wakes", async () => {
    const { cluster, hook, id, secret, stub } = await subscribedInformer();
    await storeSecret(id, secret);
    unwrap(await stub().status());
    const stored = await storedSecrets(id);
    expect(stored.secret.startsWith(SEALED_PREFIX)).toBe(true);
    expect(await currentKeyOnly.open(stored.secret, webhookSecretBinding(id))).toEqual({ value: secret, stale: false });
    await deliversSignedWith(cluster, hook, secret);
  });

  it("opens a secret sealed with ENCRYPTION_KEY_PREVIOUS during a rotation, and seals it with ENCRYPTION_KEY when the object wakes", async () => {
    const { cluster, hook, id, secret, stub } = await subscribedInformer();
    await storeSecret(id, await previousKey.seal(secret, webhookSecretBinding(id)));
    unwrap(await stub().status());
    expect(await currentKeyOnly.open((await storedSecrets(id)).secret, webhookSecretBinding(id))).toEqual({ value: secret, stale: false });
    await deliversSignedWith(cluster, hook, secret);
  });

  it("refuses a sealed secret moved to another subscription's row: nothing is sent and lastError says why", async () => {
    const one = await subscribedInformer();
    const other = await subscribedInformer();
    await storeSecret(other.id, (await storedSecrets(one.id)).secret);
    const before = (await other.hook.requests()).length;
    await other.cluster.create("pods", pod({ name: "never-signed", namespace: "default" }));
    await waitFor("the refusal in the status", async () =>
      String(unwrap(await other.stub().status()).lastError).includes(
        `cannot sign the delivery: the stored webhook-secret:${other.id} does not decrypt: it was altered, or it belongs to another row`,
      ),
    );
    expect((await other.hook.requests()).length).toBe(before);
  });

  it("refuses a new subscription without ENCRYPTION_KEY with a 503 naming the setting, and stores nothing", async () => {
    const { id, informer, answer: refused } = await createWith({ ENCRYPTION_KEY: undefined, ALLOW_UNAUTHENTICATED: "false" });
    expect(refused).toEqual({ ok: false, error: { code: "ServiceUnavailable", message: expect.stringContaining("ENCRYPTION_KEY is not set") } });
    expect(await subscriptionStored(id)).toBe(false);
    expect(unwrap(await informer.stub.subscriberIds())).toEqual([]);
  });

  it("stores a new secret unencrypted without ENCRYPTION_KEY only in local development (ALLOW_UNAUTHENTICATED)", async () => {
    const { id, answer: created } = await createWith({ ENCRYPTION_KEY: undefined, ALLOW_UNAUTHENTICATED: "true" });
    expect((await storedSecrets(id)).secret).toBe(unwrap(created).secret);
  });
});
