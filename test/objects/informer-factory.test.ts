/**
 * InformerFactory: declared informers follow INFORMERS; API-created ones cannot shadow them; the
 * cron's reconcile re-arms an informer whose alarm went missing (DESIGN invariant 7).
 */
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";
import { FACTORY_NAME, MAX_CLUSTERS } from "../../src/objects/informer-factory.ts";
import type { InformerObject } from "../../src/objects/informer-object.ts";
import { verifyWebhook } from "../../src/client/index.ts";
import { newSigningKeyPair } from "../../src/delivery/ed25519-keys.ts";
import { unwrap } from "../../src/errors.ts";
import { newCluster, status, waitFor } from "../helpers/informer.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { informerStub } from "../../src/clusters/stubs.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { withObjectEnv } from "../helpers/object-env.ts";
import { subscriptionStored } from "../helpers/webhooks.ts";
import { underSubrequestLimit } from "../helpers/subrequest-limit.ts";

const factory = () => env.FACTORY.getByName(FACTORY_NAME);
const declared = (...specs: object[]) => JSON.stringify(specs);

/** Syncs with extra Worker variables (local development settings, the operator's secrets), for this factory instance only. */
const syncWith = (vars: Record<string, string>, informers: string, clusters?: string) =>
  withObjectEnv(factory(), vars, (instance) => instance.syncDeclared(informers, clusters));

describe("InformerFactory", () => {
  it("adds, updates and removes declared informers as INFORMERS changes", async () => {
    expect(await factory().syncDeclared(declared({ name: "decl-a", resource: "pods" }))).toMatchObject({
      added: ["decl-a"],
      errors: [],
    });
    expect(await factory().syncDeclared(declared({ name: "decl-a", resource: "pods" }))).toMatchObject({
      added: [],
      updated: [],
    });
    expect(
      await factory().syncDeclared(declared({ name: "decl-a", resource: "pods", labelSelector: "app=web" })),
    ).toMatchObject({ updated: ["decl-a"] });
    expect((await factory().get({ cluster: "default", name: "decl-a" }))?.spec.labelSelector).toBe("app=web");
    expect(await factory().syncDeclared(declared())).toMatchObject({ removed: ["decl-a"] });
    expect(await factory().get({ cluster: "default", name: "decl-a" })).toBeUndefined();
    expect((await env.INFORMER.getByName("decl-a").status()).ok).toBe(false);
  });

  it("keeps declared and API-created informers across a restart of every object", async () => {
    await factory().syncDeclared(declared({ name: "decl-r", resource: "pods" }));
    expect((await factory().put(parseInformerSpec({ resource: "pods", labelSelector: "app=web" }, "api-r"))).ok).toBe(true);
    await abortAllDurableObjects().catch(() => {}); // every instance torn down; storage stays
    const registered = await factory().list();
    expect(registered.map((i) => [i.name, i.source])).toEqual(
      expect.arrayContaining([
        ["decl-r", "config"],
        ["api-r", "api"],
      ]),
    );
    const restored = await waitFor("the restarted informer's status", async () => {
      const result = await env.INFORMER.getByName("api-r").status();
      return result.ok && result.value;
    });
    expect(restored.name).toBe("api-r");
    expect((await factory().get({ cluster: "default", name: "api-r" }))?.spec.labelSelector).toBe("app=web");
    await factory().remove({ cluster: "default", name: "api-r" });
    await factory().syncDeclared(declared());
  });

  it("removes nothing when INFORMERS does not parse", async () => {
    await factory().syncDeclared(declared({ name: "decl-b", resource: "pods" }));
    for (const broken of ["{not json", declared({ name: "decl-b", resource: "pods", bogus: 1 })]) {
      const result = await factory().syncDeclared(broken);
      expect(result.errors).toHaveLength(1);
      expect(result.removed).toEqual([]);
    }
    expect(await factory().get({ cluster: "default", name: "decl-b" })).toBeDefined();
    await factory().syncDeclared(declared());
  });

  it("refuses a declared subscription by name in a deployment while WEBHOOK_ALLOWED_HOSTS is unset (review N8)", async () => {
    const secret = `whsec_${btoa("declared secret of 24 by")}`;
    const audit = { name: "audit", url: "https://audit.example.com/hook", secretBinding: "AUDIT_WEBHOOK_SECRET" };
    const deployment = { AUDIT_WEBHOOK_SECRET: secret, ALLOW_UNAUTHENTICATED: "false" };
    const refused = await syncWith(deployment, declared({ name: "decl-egress", resource: "pods", subscriptions: [audit] }));
    expect(refused.subscriptions).toEqual([]);
    expect(refused.errors).toEqual([expect.stringMatching(/^decl-egress\.subscriptions\.audit: invalid subscription: url: audit\.example\.com is refused: WEBHOOK_ALLOWED_HOSTS is unset.*ALLOW_ANY_EGRESS/)]);
    expect(await subscriptionStored("sub_decl-egress-audit")).toBe(false);
    await factory().syncDeclared(declared());
  });

  it("creates, updates and removes subscriptions declared next to their informer", async () => {
    const secret = `whsec_${btoa("declared secret of 24 by")}`;
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const audit = { name: "audit", url: hook.url, secretBinding: "AUDIT_WEBHOOK_SECRET", replayExisting: true };
    const sync = (text: string, vars: Record<string, string> = { AUDIT_WEBHOOK_SECRET: secret, ALLOW_UNAUTHENTICATED: "true" }) =>
      syncWith(vars, text);
    const id = "sub_decl-s-audit";
    expect(await sync(declared({ name: "decl-s", resource: "pods", subscriptions: [audit] }))).toMatchObject({
      subscriptions: ["decl-s.subscriptions.audit created"],
      errors: [],
    });
    expect(unwrap(await env.SUBSCRIPTION.getByName(id).status())).toMatchObject({ declared: true, informer: "decl-s" });
    // The receiver verifies with the secret the operator put in the Worker's secrets.
    const [request] = await hook.waitForRequests(1);
    expect((await verifyWebhook(secret, request!.body, request!.headers))[0]).toMatchObject({ informer: "decl-s", initialList: true });
    expect(await env.SUBSCRIPTION.getByName(id).destroy()).toBe("declared");

    const narrowed = { ...audit, events: ["delete"] };
    expect(await sync(declared({ name: "decl-s", resource: "pods", subscriptions: [narrowed] }))).toMatchObject({
      subscriptions: ["decl-s.subscriptions.audit updated"],
    });
    expect(unwrap(await env.SUBSCRIPTION.getByName(id).status()).events).toEqual(["delete"]);
    const missingSecret = await sync(declared({ name: "decl-s", resource: "pods", subscriptions: [narrowed] }), { AUDIT_WEBHOOK_SECRET: "" });
    expect(missingSecret.errors).toEqual([expect.stringMatching(/decl-s.subscriptions.audit: the Worker secret 'AUDIT_WEBHOOK_SECRET' must hold/)]);
    expect((await env.SUBSCRIPTION.getByName(id).status()).ok).toBe(true);

    expect(await sync(declared({ name: "decl-s", resource: "pods" }))).toMatchObject({ subscriptions: [`${id} removed`] });
    expect((await env.SUBSCRIPTION.getByName(id).status()).ok).toBe(false);
    await sync(declared());
  });

  it("creates a subscription declared with a queue and no secretBinding, and refuses an unlisted queue or a url without one", async () => {
    const vars = { ALLOW_UNAUTHENTICATED: "true" };
    const events = { name: "events", queue: "EVENTS", replayExisting: true };
    const result = await syncWith(vars, declared({ name: "decl-q", resource: "pods", subscriptions: [events] }));
    expect(result).toMatchObject({ subscriptions: ["decl-q.subscriptions.events created"], errors: [] });
    expect(unwrap(await env.SUBSCRIPTION.getByName("sub_decl-q-events").status())).toMatchObject({ declared: true, queue: "EVENTS" });
    // Synced again unchanged: its fixed, unused secret is the same.
    expect(await syncWith(vars, declared({ name: "decl-q", resource: "pods", subscriptions: [events] }))).toMatchObject({ subscriptions: [], errors: [] });

    const refused = await syncWith(
      vars,
      declared({ name: "decl-q", resource: "pods", subscriptions: [{ name: "other", queue: "UNLISTED" }, { name: "hook", url: "http://localhost:9/x" }] }),
    );
    expect(refused.errors).toEqual([
      "decl-q.subscriptions.other: invalid subscription: queue 'UNLISTED' is not listed in WEBHOOK_QUEUES",
      expect.stringMatching(/^decl-q\.subscriptions\.hook: a url subscription needs a secretBinding/),
    ]);
    expect(await subscriptionStored("sub_decl-q-other")).toBe(false);
    await factory().syncDeclared(declared());
  });

  it("declares an Ed25519 CloudEvents subscription with the operator's whsk_ key, and refuses a mismatched key or format (issue 32)", async () => {
    const { signingKey, publicKey } = await newSigningKeyPair();
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const signed = { name: "signed", url: hook.url, secretBinding: "SIGNED_WEBHOOK_KEY", signing: "ed25519", format: "cloudevents-binary" };
    const sync = (subscription: object, key = signingKey) =>
      syncWith({ SIGNED_WEBHOOK_KEY: key, ALLOW_UNAUTHENTICATED: "true" }, declared({ name: "decl-ed", resource: "pods", subscriptions: [subscription] }));
    const id = "sub_decl-ed-signed";
    // An HMAC secret where an Ed25519 key is declared, and binary mode with batches: refused, nothing created.
    expect((await sync(signed, `whsec_${btoa("declared secret of 24 by")}`)).errors).toEqual([expect.stringMatching(/must hold a whsk_ key \(signing: ed25519\)/)]);
    expect((await sync({ ...signed, maxBatchSize: 5 })).errors).toEqual([expect.stringMatching(/cloudevents-binary carries one event per request/)]);
    expect(await subscriptionStored(id)).toBe(false);

    expect(await sync(signed)).toMatchObject({ subscriptions: ["decl-ed.subscriptions.signed created"], errors: [] });
    expect(unwrap(await env.SUBSCRIPTION.getByName(id).signingKey())).toMatchObject({ publicKey });
    const [request] = await hook.waitForRequests(1);
    expect(request!.headers["ce-type"]).toBe("dev.edge-informer.added");
    expect((await verifyWebhook(publicKey, request!.body, request!.headers))[0]).toMatchObject({ informer: "decl-ed", initialList: true });
    await syncWith({}, declared());
  });

  // Every isolate syncs INFORMERS on its first request, and the cron too: calls into the factory
  // interleave wherever it awaits an informer object (#7.16).
  it("applies concurrent syncs of the same INFORMERS once", async () => {
    const text = declared({ name: "decl-twice", resource: "pods" });
    const results = await Promise.all([factory().syncDeclared(text), factory().syncDeclared(text)]);
    expect(results.flatMap((r) => [...r.added, ...r.updated, ...r.errors])).toEqual(["decl-twice"]);
    await factory().syncDeclared(declared());
  });

  it("applies concurrent syncs in arrival order, leaving registry and informers in agreement", async () => {
    await factory().syncDeclared(declared({ name: "decl-race", resource: "pods" }));
    // A removal in flight (awaiting the informer's destroy) must not swallow the re-declaration after it.
    const removing = factory().syncDeclared(declared());
    const redeclaring = factory().syncDeclared(declared({ name: "decl-race", resource: "pods" }));
    expect((await removing).removed).toEqual(["decl-race"]);
    expect((await redeclaring).added).toEqual(["decl-race"]);
    expect(await factory().get({ cluster: "default", name: "decl-race" })).toBeDefined();
    expect((await env.INFORMER.getByName("decl-race").status()).ok).toBe(true);
    await factory().syncDeclared(declared());
    expect((await env.INFORMER.getByName("decl-race").status()).ok).toBe(false);
  });

  it("refuses to let the admin API change or delete a declared informer", async () => {
    await factory().syncDeclared(declared({ name: "decl-c", resource: "pods" }));
    const put = await factory().put(parseInformerSpec({ resource: "pods" }, "decl-c"));
    expect(put).toMatchObject({ ok: false, error: { code: "Conflict" } });
    expect(await factory().remove({ cluster: "default", name: "decl-c" })).toMatchObject({ ok: false, error: { code: "Conflict" } });
    await factory().syncDeclared(declared());
  });

  it("reports a missing API server URL in the status and retries slowly, not in a tight loop", async () => {
    const app = env.INFORMER.getByName("no-url");
    // configure through the object, with the Worker's env lacking KUBE_API_URL
    await runInDurableObject(app, async (instance) => {
      (instance as unknown as { env: Record<string, unknown> }).env.KUBE_API_URL = undefined;
      await instance.configure(parseInformerSpec({ resource: "pods" }, "no-url"));
    });
    const failed = await waitFor("the failure to show", async () => {
      const s = await status(app);
      return s.lastError !== null && s;
    });
    expect(failed.lastError).toMatch(/KUBE_API_URL is not set/);
    const alarm = await runInDurableObject(app, (_, state) => state.storage.getAlarm());
    expect(alarm! - Date.now()).toBeGreaterThan(20_000);
    await app.destroy();
  });

  it("re-arms an informer whose alarm is missing, and leaves running ones alone", async () => {
    // An unreachable API server keeps the informer backing off, idle between alarms.
    const spec = parseInformerSpec({ resource: "pods" }, "rearm-me");
    expect((await factory().put(spec, "api", "http://127.0.0.1:1")).ok).toBe(true);
    const stub = env.INFORMER.getByName("rearm-me");
    await waitFor("the informer to back off", async () => (await status(stub)).watch.state === "backoff");
    const rearmed = await waitFor("the cron to re-arm it", async () => {
      await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
      const names = await factory().reconcile();
      return names.length > 0 && names;
    });
    expect(rearmed).toEqual(["rearm-me"]);
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await factory().reconcile()).toEqual([]);
    expect((await status(stub)).lastError).toMatch(/could not reach the API server/);
    expect((await factory().remove({ cluster: "default", name: "rearm-me" })).ok).toBe(true);
  });

  it("adds declared clusters from CLUSTERS, runs their declared informers, and guards both", async () => {
    const cluster = await newCluster();
    await cluster.create("pods", pod({ name: "d-1", namespace: "default" }));
    const clusters = (entries: Record<string, object>) => JSON.stringify(entries);
    const informers = declared({ name: "decl-pods", resource: "pods", cluster: "decl-east", watchTimeoutSeconds: 3 });
    const first = await factory().syncDeclared(informers, clusters({ "decl-east": { server: cluster.url } }));
    expect(first).toMatchObject({ clusters: ["decl-east added"], added: ["decl-east/decl-pods"], errors: [] });
    const stub = informerStub(env, { cluster: "decl-east", name: "decl-pods" });
    await waitFor("the declared informer to sync", async () => (await status(stub)).synced);
    expect(await status(stub)).toMatchObject({ cluster: "decl-east", name: "decl-pods", objects: 1 });

    // Declared: changed only in CLUSTERS.
    expect(await factory().putCluster("decl-east", { server: cluster.url })).toMatchObject({ ok: false, error: { code: "Conflict" } });
    expect(await factory().removeCluster("decl-east", true)).toMatchObject({ ok: false, error: { code: "Conflict" } });
    // Dropped from CLUSTERS while an informer uses it: it stays, and the sync says why.
    const kept = await factory().syncDeclared(informers, clusters({}));
    expect(kept.errors.join()).toContain("cluster 'decl-east' was removed but informers use it (decl-pods)");
    expect(await factory().hasCluster("decl-east")).toBe(true);
    // Both gone together: the informer first, then the cluster.
    expect(await factory().syncDeclared(declared(), clusters({}))).toMatchObject({ removed: ["decl-east/decl-pods"], clusters: ["decl-east removed"] });
    expect(await factory().hasCluster("decl-east")).toBe(false);
  });

  it("refuses CLUSTERS entries that are malformed, inline secrets or redefine the default cluster", async () => {
    const result = await factory().syncDeclared(
      declared({ name: "orphan", resource: "pods", cluster: "nowhere" }),
      JSON.stringify({
        default: { server: "https://a.example" },
        "Bad Name": { server: "https://a.example" },
        inline: { server: "https://a.example", token: "s3cr3t" },
        half: { server: "https://a.example", accessClientIdSecret: "CF_ID" },
      }),
    );
    expect(result.errors).toEqual([
      "CLUSTERS: 'default' is the cluster of KUBE_API_URL (with KUBE_TOKEN and CF_ACCESS_*): configure it there",
      "CLUSTERS: 'Bad Name' is not a cluster name: a lower-case DNS label of 1-63 characters (a-z, 0-9 and '-', starting and ending with a letter or digit)",
      expect.stringMatching(/^CLUSTERS\.inline: .*token/),
      "CLUSTERS.half: accessClientIdSecret and accessClientSecretSecret go together",
      "nowhere/orphan: cluster 'nowhere' not found",
    ]);
    expect(JSON.stringify(result)).not.toContain("s3cr3t");
    expect(await factory().get({ cluster: "nowhere", name: "orphan" })).toBeUndefined();
  });

  it("tells a declared cluster whose named secret is missing in the informer's status", async () => {
    const cluster = await newCluster();
    await factory().syncDeclared(
      declared({ name: "needs-secret", resource: "pods", cluster: "decl-secret" }),
      JSON.stringify({ "decl-secret": { server: cluster.url, tokenSecret: "KUBE_TOKEN_NOT_SET" } }),
    );
    const stub = informerStub(env, { cluster: "decl-secret", name: "needs-secret" });
    await waitFor("the failure to show", async () => (await status(stub)).lastError?.includes("KUBE_TOKEN_NOT_SET"));
    expect((await status(stub)).lastError).toBe(
      "cluster 'decl-secret' names the Worker secret 'KUBE_TOKEN_NOT_SET', which is not set (wrangler secret put KUBE_TOKEN_NOT_SET)",
    );
    // GET /clusters says so too; the default cluster's secrets are optional, and none is set here.
    const views = await factory().clusters();
    expect(views.find((c) => c.name === "decl-secret")?.credentials).toEqual(["secret:KUBE_TOKEN_NOT_SET (not set)"]);
    expect(views.find((c) => c.name === "default")?.credentials).toEqual([]);
    await factory().syncDeclared(declared(), JSON.stringify({}));
  });

  it("holds at most MAX_CLUSTERS clusters, the default one included, refusing one more whether PUT or declared (bounded metric cardinality)", async () => {
    // A factory of its own, so filling it up leaves the deployment's factory to the other tests.
    const own = env.FACTORY.getByName(`cap-${crypto.randomUUID()}`);
    const server = { server: "https://api.example.com" };
    for (let i = 1; i < MAX_CLUSTERS; i++) expect((await own.putCluster(`c-${i}`, server)).ok).toBe(true);
    expect(await own.putCluster("one-more", server)).toEqual({
      ok: false,
      error: { code: "Conflict", message: `cluster 'one-more' would be one too many: a deployment holds at most ${MAX_CLUSTERS} clusters (default included); delete one first` },
    });
    expect((await own.putCluster("c-1", { server: "https://other.example.com" })).ok).toBe(true); // changing one is not adding one
    const sync = await own.syncDeclared(declared(), JSON.stringify({ "one-more": server }));
    expect(sync.errors).toEqual([expect.stringMatching(/^CLUSTERS: cluster 'one-more' would be one too many/)]);
    expect((await own.clusters()).length).toBe(MAX_CLUSTERS);
    expect(await own.hasCluster("one-more")).toBe(false);
    unwrap(await own.removeCluster("c-1", false));
    expect((await own.putCluster("one-more", server)).ok).toBe(true);
  });

  it("gives informers that missed a connection change the registry's connection on a retry and on the cron", async () => {
    const [before, after] = [await newCluster(), await newCluster()];
    await before.create("pods", pod({ name: "old", namespace: "default" }));
    await after.create("pods", pod({ name: "new", namespace: "default" }));
    const cluster = `heal-${crypto.randomUUID().slice(0, 6)}`;
    unwrap(await factory().putCluster(cluster, { server: before.url }));
    const spec = parseInformerSpec({ resource: "pods", cluster, watchTimeoutSeconds: 3 }, "pods");
    unwrap(await factory().put(spec));
    const stub = informerStub(env, { cluster, name: "pods" });
    const names = async () => unwrap(await stub.listObjects({})).value.items.map((o) => JSON.parse(o).metadata.name).join();
    await waitFor("the old server's pod", async () => (await names()) === "old");
    unwrap(await factory().putCluster(cluster, { server: after.url }));
    await waitFor("the new server's pod", async () => (await names()) === "new");

    // An informer the change did not reach (its object was unavailable), as if left behind:
    unwrap(await stub.configure(spec, { server: before.url }));
    await waitFor("the stale informer to mirror the old server", async () => (await names()) === "old");
    // A retry of the same PUT reaches it …
    unwrap(await factory().putCluster(cluster, { server: after.url }));
    await waitFor("the retry to reach it", async () => (await names()) === "new");
    // … and so does the cron, without any request.
    unwrap(await stub.configure(spec, { server: before.url }));
    await waitFor("the stale informer again", async () => (await names()) === "old");
    await factory().reconcile();
    await waitFor("the cron to reach it", async () => (await names()) === "new");
    unwrap(await factory().removeCluster(cluster, true));
  });

  it("asks each informer once on the cron's minute, and reconfigures only one whose connection differs from its cluster's (B6)", async () => {
    const server = await newCluster();
    const cluster = `steady-${crypto.randomUUID().slice(0, 6)}`;
    unwrap(await factory().putCluster(cluster, { server: server.url }));
    for (const name of ["pods", "more-pods"]) unwrap(await factory().put(parseInformerSpec({ resource: "pods", cluster, watchTimeoutSeconds: 3 }, name)));
    await factory().reconcile(); // heals whatever earlier tests left, and completes the subscription index
    // One call per informer (its re-arm, carrying its cluster's connection), not a re-arm and a configure.
    const calls = await underSubrequestLimit(factory(), 10_000, async (instance) => {
      await instance.reconcile();
      return (await instance.list()).length;
    });
    expect(calls.refused).toBe(0);
    expect(calls.made).toBe(calls.result);
    unwrap(await factory().removeCluster(cluster, true));
  });

  it("answers an admin PUT while the cron's minute waits on a blocked informer (review B6(a): reconcile held the change queue)", async () => {
    // A factory of its own, so its cron minute asks only the informers of this test.
    const own = env.FACTORY.getByName(`blocked-${crypto.randomUUID()}`);
    const name = (what: string) => `${what}-${crypto.randomUUID().slice(0, 8)}`;
    const [blocked, other] = [parseInformerSpec({ resource: "pods" }, name("blocked")), parseInformerSpec({ resource: "pods" }, name("other"))];
    for (const spec of [blocked, other]) unwrap(await own.put(spec, "api", "http://127.0.0.1:1"));
    // The blocked informer answers the cron only once the gate opens (as an object stuck behind a long answer would).
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // RPC calls the class's method (an own property is not one), so the prototype's is wrapped, for that instance alone.
    const prototype = Object.getPrototypeOf(await runInDurableObject(informerStub(env, { cluster: "default", name: blocked.name }), (instance: InformerObject) => instance)) as InformerObject;
    const blockedName = blocked.name;
    const reconcile = prototype.reconcile;
    prototype.reconcile = async function (this: InformerObject, connection) {
      if (this.ctx.id.name === blockedName) await gate;
      return reconcile.call(this, connection);
    };
    try {
      let reconciled = false;
      const reconciling = own.reconcile().then((names) => ((reconciled = true), names));
      let answered = false;
      const putting = own.put(parseInformerSpec({ resource: "pods", labelSelector: "app=web" }, other.name), "api", "http://127.0.0.1:1").then((result) => ((answered = true), result));
      await waitFor("the PUT to be answered while the cron waits", async () => answered);
      expect((await putting).ok).toBe(true);
      expect(reconciled).toBe(false); // still waiting on the blocked informer
      open();
      await reconciling;
    } finally {
      open();
      prototype.reconcile = reconcile;
    }
    for (const spec of [blocked, other]) unwrap(await own.remove({ cluster: "default", name: spec.name }));
  });

  it("refuses a declared subscription whose id another informer's declared subscription holds", async () => {
    const receiver = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const hook = (name: string, secretBinding: string) => ({ name, url: receiver.url, secretBinding });
    const cluster = await newCluster();
    const secret = `whsec_${btoa("declared secret of 24 by")}`;
    const vars = { CLASH_SECRET: secret, CLASH_SECRET_TOO: secret, ALLOW_UNAUTHENTICATED: "true" };
    const result = await syncWith(
      vars,
      declared(
        { name: "clash--pods", resource: "pods", watchTimeoutSeconds: 3, subscriptions: [hook("hook", "CLASH_SECRET")] },
        { name: "pods", cluster: "clash", resource: "pods", watchTimeoutSeconds: 3, subscriptions: [hook("hook", "CLASH_SECRET_TOO")] },
      ),
      JSON.stringify({ clash: { server: cluster.url } }),
    );
    expect(result.errors).toEqual([expect.stringContaining("'sub_clash--pods-hook' already follows informer 'clash--pods'")]);
    expect(unwrap(await env.SUBSCRIPTION.getByName("sub_clash--pods-hook").status())).toMatchObject({ cluster: "default", informer: "clash--pods" });
    await syncWith(vars, declared(), JSON.stringify({}));
  });

  it("refuses declared subscriptions that share a secretBinding: a receiver could not tell their deliveries apart", async () => {
    const receiver = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const vars = { SHARED_SECRET: `whsec_${btoa("declared secret of 24 by")}`, ALLOW_UNAUTHENTICATED: "true" };
    const hook = { name: "hook", url: receiver.url, secretBinding: "SHARED_SECRET" };
    const result = await syncWith(
      vars,
      declared(
        { name: "shared-a", resource: "pods", watchTimeoutSeconds: 3, subscriptions: [hook] },
        { name: "shared-b", resource: "pods", watchTimeoutSeconds: 3, subscriptions: [hook] },
      ),
    );
    const why = "the Worker secret 'SHARED_SECRET' is the secretBinding of shared-a.subscriptions.hook and shared-b.subscriptions.hook";
    expect(result.errors).toEqual([expect.stringContaining(why), expect.stringContaining(why)]);
    expect(result.errors[0]).toMatch(/give each declared subscription its own secret/);
    expect(result.subscriptions).toEqual([]);
    for (const id of ["sub_shared-a-hook", "sub_shared-b-hook"]) expect((await env.SUBSCRIPTION.getByName(id).status()).ok).toBe(false);
    await syncWith(vars, declared());
  });

  it("answers callers of the previous release, which name informers without a cluster, as the default cluster's", async () => {
    const { cluster: _, ...oldSpec } = parseInformerSpec({ resource: "pods" }, "old-caller");
    const legacy = factory() as unknown as {
      put(spec: object): Promise<{ ok: boolean }>;
      get(name: string): Promise<{ cluster: string; name: string } | undefined>;
      remove(name: string): Promise<{ ok: boolean }>;
    };
    expect((await legacy.put(oldSpec)).ok).toBe(true);
    expect(await legacy.get("old-caller")).toMatchObject({ cluster: "default", name: "old-caller" });
    expect((await legacy.remove("old-caller")).ok).toBe(true);
    expect(await factory().get({ cluster: "default", name: "old-caller" })).toBeUndefined();
  });
});
