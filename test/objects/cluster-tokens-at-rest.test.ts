/**
 * Cluster tokens at rest (issue 17 item 11): a `PUT /clusters` token is sealed in every stored copy
 * (the factory's registry row, each informer's spec row), opens after a restart and across a key
 * rotation, plain text from an earlier release keeps working and is sealed at the cron, and a
 * sealed token moved to another cluster's row is refused.
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clusterTokenBinding } from "../../src/clusters/sealed-connection.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import { SEALED_PREFIX, SecretSealer } from "../../src/secrets/secret-sealer.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { call, json, send, startInCluster, unique } from "../helpers/clusters.ts";
import { withObjectEnv } from "../helpers/object-env.ts";
import { waitFor } from "../helpers/informer.ts";

const factory = () => env.FACTORY.getByName(FACTORY_NAME);
const currentKeyOnly = new SecretSealer({ key: env.ENCRYPTION_KEY, allowPlaintext: false });
const previousKey = new SecretSealer({ key: env.ENCRYPTION_KEY_PREVIOUS, allowPlaintext: false });

/** The stored token of `cluster`: in the factory's registry, and in its informer `pods`. */
async function storedTokens(cluster: string, stub: DurableObjectStub): Promise<{ factory: string; informer: string }> {
  const inFactory = await runInDurableObject(factory(), (_, state) =>
    state.storage.sql.exec<{ connection: string }>("SELECT connection FROM clusters WHERE name = ?", cluster).one(),
  );
  const inInformer = await runInDurableObject(stub, (_, state) => state.storage.sql.exec<{ connection: string }>("SELECT connection FROM informer_spec").one());
  return { factory: JSON.parse(inFactory.connection).token, informer: JSON.parse(inInformer.connection).token };
}

/** Overwrites the stored token of `cluster` in both copies, as an earlier release or another key left it. */
async function storeTokens(cluster: string, stub: DurableObjectStub, token: string): Promise<void> {
  await runInDurableObject(factory(), (_, state) => {
    state.storage.sql.exec("UPDATE clusters SET connection = json_set(connection, '$.token', ?) WHERE name = ?", token, cluster);
  });
  await runInDurableObject(stub, (_, state) => {
    state.storage.sql.exec("UPDATE informer_spec SET connection = json_set(connection, '$.token', ?)", token);
  });
}

/** The informer's cache follows a new pod, so its watch authenticated with the stored token. */
async function followsNewPod(cluster: string, fake: { create(resource: string, object: object): Promise<unknown> }): Promise<void> {
  const name = `p-${crypto.randomUUID().slice(0, 6)}`;
  await fake.create("pods", pod({ name, namespace: "default" }));
  await waitFor(`${name} in the cache of ${cluster}`, async () => (await call(`/clusters/${cluster}/informers/pods/objects/default/${name}`)).status === 200);
}

describe("cluster tokens at rest", () => {
  it("stores a PUT /clusters token sealed in the factory and in each informer, and watches with it after a restart", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const { fake, cluster, stub, remove } = await startInCluster("sealed", { token });
    const stored = await storedTokens(cluster, stub);
    for (const copy of [stored.factory, stored.informer]) {
      expect(copy.startsWith(SEALED_PREFIX)).toBe(true);
      expect(copy).not.toContain(token);
      expect((await currentKeyOnly.open(copy, clusterTokenBinding(cluster))).value).toBe(token);
    }
    await evictDurableObject(stub);
    await evictDurableObject(factory());
    await followsNewPod(cluster, fake);
    expect((await json(await call(`/clusters/${cluster}`))).health).toEqual({ reachable: true, version: "v1.34.0-fake" });
    await remove();
  });

  it("keeps a plain-text token from an earlier release working, and seals it at the cron", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const { fake, cluster, stub, remove } = await startInCluster("legacy", { token });
    await storeTokens(cluster, stub, token);
    await evictDurableObject(stub);
    await followsNewPod(cluster, fake);

    await factory().reconcile();
    const stored = await storedTokens(cluster, stub);
    expect(stored.factory.startsWith(SEALED_PREFIX) && stored.informer.startsWith(SEALED_PREFIX)).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(token);
    await followsNewPod(cluster, fake);
    await remove();
  });

  it("opens a token sealed with ENCRYPTION_KEY_PREVIOUS during a rotation, and seals it with ENCRYPTION_KEY at the cron", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const { fake, cluster, stub, remove } = await startInCluster("rotated", { token });
    await storeTokens(cluster, stub, await previousKey.seal(token, clusterTokenBinding(cluster)));
    await evictDurableObject(stub);
    await followsNewPod(cluster, fake);

    await factory().reconcile();
    const stored = await storedTokens(cluster, stub);
    // Only the current key opens them now: ENCRYPTION_KEY_PREVIOUS can be removed.
    for (const copy of [stored.factory, stored.informer]) {
      expect(await currentKeyOnly.open(copy, clusterTokenBinding(cluster))).toEqual({ value: token, stale: false });
    }
    await remove();
  });

  it("refuses a sealed token moved to another cluster's row: the informer reports it and the health probe too", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const one = await startInCluster("one", { token });
    const other = await startInCluster("other", { token });
    await storeTokens(other.cluster, other.stub, (await storedTokens(one.cluster, one.stub)).factory);
    await evictDurableObject(other.stub);
    await waitFor("the moved token to be refused", async () =>
      String((await json(await call(`/clusters/${other.cluster}/informers/pods`))).lastError).includes(
        `the stored cluster-token:${other.cluster} does not decrypt: it was altered, or it belongs to another row`,
      ),
    );
    const health = (await json(await call(`/clusters/${other.cluster}`))).health;
    expect(health.reachable).toBe(false);
    expect(health.error).toContain("does not decrypt");
    await one.remove();
    await other.remove();
  });

  it("refuses a PUT /clusters token without ENCRYPTION_KEY with a 503 naming the setting, and stores nothing", async () => {
    const name = unique("keyless");
    const connection = { server: "https://k8s.example.com", token: `tok-${crypto.randomUUID()}` };
    const refused = await withObjectEnv(factory(), { ENCRYPTION_KEY: undefined, ALLOW_UNAUTHENTICATED: "false" }, (instance) => instance.putCluster(name, connection));
    expect(refused).toEqual({ ok: false, error: { code: "ServiceUnavailable", message: expect.stringContaining("ENCRYPTION_KEY is not set") } });
    expect(await factory().hasCluster(name)).toBe(false);
    // A cluster without a token holds no secret, and needs no key.
    const bare = await withObjectEnv(factory(), { ENCRYPTION_KEY: undefined, ALLOW_UNAUTHENTICATED: "false" }, (instance) => instance.putCluster(name, { server: connection.server }));
    expect(bare.ok).toBe(true);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(204);
  });

  it("stores a token unencrypted without ENCRYPTION_KEY only in local development (ALLOW_UNAUTHENTICATED)", async () => {
    const name = unique("plain");
    const connection = { server: "http://127.0.0.1:1", token: `tok-${crypto.randomUUID()}` };
    const vars = { ENCRYPTION_KEY: undefined, ALLOW_UNAUTHENTICATED: "true" };
    expect((await withObjectEnv(factory(), vars, (instance) => instance.putCluster(name, connection))).ok).toBe(true);
    const stored = await runInDurableObject(factory(), (_, state) =>
      state.storage.sql.exec<{ connection: string }>("SELECT connection FROM clusters WHERE name = ?", name).one(),
    );
    expect(JSON.parse(stored.connection).token).toBe(connection.token);
    expect((await send("DELETE", `/clusters/${name}`)).status).toBe(204);
  });
});
