/**
 * Sensitive resources (issue 17 item 8): an informer of core `secrets` must say `"allowSensitive":
 * true`, and its cache holds no `data` or `stringData` unless `transform.keepSecretData` is true,
 * only the number of their keys (issue 18, F19: so a Table's DATA column can count them).
 */
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { informerSettings, parseDeclaredInformers, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { SECRET_DATA_KEYS_ANNOTATION } from "../../src/cache/sensitive-resources.ts";
import { makeTransform, TRANSFORM_VERSION } from "../../src/cache/transform.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { unwrap } from "../../src/errors.ts";
import { newCluster, startInformer, waitFor, waitSynced } from "../helpers/informer.ts";
import { json, send, unique } from "../helpers/clusters.ts";

const secret = (): KubeObject => ({
  metadata: { name: "token", namespace: "default", resourceVersion: "7", managedFields: [] },
  type: "kubernetes.io/service-account-token",
  data: { token: "c2VjcmV0" },
  stringData: { extra: "plain" },
});

const SENSITIVE = /'secrets' holds credentials .* set "allowSensitive": true/;

describe("sensitive resources", () => {
  it.each([
    ["secrets", {}],
    ["secrets in core v1", { apiVersion: "v1" }],
  ])("refuses an informer of %s without allowSensitive, saying why", (_, extra) => {
    expect(() => parseInformerSpec({ resource: "secrets", ...extra })).toThrow(SENSITIVE);
    expect(() => parseInformerSpec({ resource: "secrets", allowSensitive: false, ...extra })).toThrow(SENSITIVE);
  });

  it("answers PUT /informers/{name} for secrets without allowSensitive with a 400 that says why", async () => {
    const response = await send("PUT", `/informers/${unique("secrets")}`, { resource: "secrets" });
    expect(response.status).toBe(400);
    expect((await json(response)).error).toMatchObject({ code: "BadRequest", message: expect.stringMatching(SENSITIVE) });
  });

  it("refuses one declared in INFORMERS too", () => {
    const { specs, errors } = parseDeclaredInformers(JSON.stringify([{ resource: "secrets" }, { resource: "pods" }]));
    expect(specs.map((s) => s.name)).toEqual(["pods"]);
    expect(errors).toEqual([expect.stringMatching(/^INFORMERS\[0\]: invalid informer spec: allowSensitive: 'secrets' holds credentials/)]);
  });

  it("accepts other resources without it, and refuses keepSecretData where there is no secret data", () => {
    expect(parseInformerSpec({ resource: "configmaps" }).allowSensitive).toBeUndefined();
    expect(() => parseInformerSpec({ resource: "configmaps", transform: { keepSecretData: true } })).toThrow(
      /transform\.keepSecretData: only informers of secrets have secret data to keep/,
    );
  });

  it("leaves the spec of other resources as it was, so stored specs compare equal after an upgrade", () => {
    expect(parseInformerSpec({ resource: "pods" }).transform).toEqual({ dropManagedFields: true, dropFields: [] });
  });

  it("drops data and stringData from secrets unless keepSecretData is true, keeping the number of their keys", () => {
    const dropping = makeTransform(informerSettings(parseInformerSpec({ resource: "secrets", allowSensitive: true })).transform);
    expect(dropping(secret())).toEqual({
      metadata: { name: "token", namespace: "default", resourceVersion: "7", annotations: { [SECRET_DATA_KEYS_ANNOTATION]: "2" } },
      type: "kubernetes.io/service-account-token",
    });
    const keeping = makeTransform(
      informerSettings(parseInformerSpec({ resource: "secrets", allowSensitive: true, transform: { keepSecretData: true } })).transform,
    );
    expect(keeping(secret())).toMatchObject({ data: { token: "c2VjcmV0" }, stringData: { extra: "plain" } });
  });

  it.each([
    ["counts a key in both data and stringData once, and keeps the Secret's own annotations", { data: { a: "", b: "" }, stringData: { b: "x" }, metadata: { name: "s", annotations: { team: "x" } } }, { team: "x", [SECRET_DATA_KEYS_ANNOTATION]: "2" }],
    ["adds nothing to a Secret without values", { type: "Opaque", metadata: { name: "s" } }, undefined],
    ["adds nothing for empty values", { data: {}, metadata: { name: "s" } }, undefined],
    // A watch-list may apply the transform twice: the second time there is nothing to count.
    ["leaves a Secret it already transformed as it is", { metadata: { name: "s", annotations: { [SECRET_DATA_KEYS_ANNOTATION]: "4" } } }, { [SECRET_DATA_KEYS_ANNOTATION]: "4" }],
  ])("%s", (_, object, annotations) => {
    const dropping = makeTransform({ dropSecretData: true });
    const transformed = dropping(structuredClone(object) as KubeObject);
    expect(transformed).not.toHaveProperty("data");
    expect(transformed).not.toHaveProperty("stringData");
    expect(transformed.metadata.annotations).toEqual(annotations);
  });

  it("keeps no secret data in the cache of a live informer", async () => {
    const cluster = await newCluster();
    await cluster.create("secrets", secret());
    const { stub } = await startInformer(cluster, { resource: "secrets", allowSensitive: true });
    await waitSynced(stub);
    const cached = unwrap(await stub.listObjects({ limit: 10 })).value.items.map((text) => JSON.parse(text) as KubeObject);
    expect(cached).toHaveLength(1);
    expect(cached[0]).not.toHaveProperty("data");
    expect(cached[0]).not.toHaveProperty("stringData");
    expect(cached[0]).toMatchObject({ type: "kubernetes.io/service-account-token", metadata: { annotations: { [SECRET_DATA_KEYS_ANNOTATION]: "2" } } });
  });

  it("re-transforms, at its next start, a secrets cache an earlier release filled with data", async () => {
    const cluster = await newCluster();
    await cluster.create("secrets", secret());
    const { name, stub } = await startInformer(cluster, { resource: "secrets", allowSensitive: true });
    await waitSynced(stub);
    const cached = async () => unwrap(await stub.listObjects({ limit: 10 })).value.items.map((text) => JSON.parse(text) as KubeObject);
    // As an earlier release left it: bodies with their data, and no transform version recorded.
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec(`UPDATE objects SET body = json_set(body, '$.data', json('{"token":"c2VjcmV0"}'))`);
      state.storage.sql.exec("UPDATE informer_spec SET transform_version = 0");
    });
    expect((await cached())[0]).toHaveProperty("data");

    await evictDurableObject(stub);
    await env.INFORMER.getByName(name).ensureRunning();
    await waitFor("the cache to be made again without secret data", async () => (await cached()).every((object) => !("data" in object)));
    expect(await cached()).toHaveLength(1);
    const version = await runInDurableObject(stub, (_, state) => state.storage.sql.exec("SELECT transform_version AS v FROM informer_spec").one().v);
    expect(version).toBe(TRANSFORM_VERSION);
  });

  it("re-transforms a secrets cache made before dropped data was counted (transform version 1), so DATA counts it", async () => {
    const cluster = await newCluster();
    await cluster.create("secrets", secret());
    const { name, stub } = await startInformer(cluster, { resource: "secrets", allowSensitive: true });
    await waitSynced(stub);
    const counts = async () =>
      unwrap(await stub.listObjects({ limit: 10 })).value.items.map((text) => (JSON.parse(text) as KubeObject).metadata.annotations?.[SECRET_DATA_KEYS_ANNOTATION]);
    // As release 1 left it: the values dropped, their number not kept.
    await runInDurableObject(stub, (_, state) => {
      state.storage.sql.exec(`UPDATE objects SET body = json_remove(body, '$.metadata.annotations')`);
      state.storage.sql.exec("UPDATE informer_spec SET transform_version = 1");
    });
    expect(await counts()).toEqual([undefined]);

    await evictDurableObject(stub);
    await env.INFORMER.getByName(name).ensureRunning();
    await waitFor("the cache to be made again with the count", async () => (await counts())[0] === "2");
  });
});
