/**
 * The HTTP API through the Worker's front door (API.md): admin, status and query routes against
 * the fake server's default cluster, authentication, and validation (invariant 8: bad input is a
 * clear 4xx and changes nothing).
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { configMap } from "../fake-apiserver/builders.ts";
import { newCluster, startInformer, waitFor, waitSynced } from "../helpers/informer.ts";

const ADMIN = { authorization: "Bearer test-admin-token-0123456789abcdef" };
const base = "http://localhost";

function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${base}${path}`, init));
}

function put(path: string, body: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return call(path, {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function json(response: Response) {
  return (await response.json()) as any;
}

async function createSynced(name: string, spec: object) {
  const created = await put(`/informers/${name}`, { watchTimeoutSeconds: 3, ...spec });
  expect([200, 201]).toContain(created.status);
  await waitFor(`${name} to sync`, async () => (await json(await call(`/informers/${name}`))).synced === true);
}

const defaultCluster = () => new FakeCluster(env.FAKE_APISERVER_URL);
const informerIds = async () => (await listDurableObjectIds(env.INFORMER)).map((id) => id.toString()).sort();
/** Every read route under /informers/{name}. */
const informerPaths = (name: string) => [
  `/informers/${name}`,
  `/informers/${name}/objects`,
  `/informers/${name}/objects/default/web-1`,
  `/informers/${name}/objects/web-1`,
  `/informers/${name}/indexes/namespace`,
  `/informers/${name}/indexes/namespace/default`,
  `/informers/${name}/subscriptions`,
];

describe("HTTP API", () => {
  it("answers /healthz", async () => {
    const response = await call("/healthz");
    expect([response.status, await response.text()]).toEqual([200, "ok"]);
  });

  it("echoes npm start's run id on /healthz, so the script knows the Worker it polls is its own", async () => {
    const app = createApp();
    const response = await app.request(`${base}/healthz`, {}, { ...env, DEV_RUN_ID: "run-1" });
    expect(response.headers.get("x-edge-informer-dev-run")).toBe("run-1");
    expect((await call("/healthz")).headers.has("x-edge-informer-dev-run")).toBe(false);
  });

  it("creates, reads, updates, lists and deletes an informer", async () => {
    const created = await put("/informers/crud", { resource: "pods", watchTimeoutSeconds: 3 });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name: "crud", resource: "pods", subscriptions: 0 });
    const status = await waitFor("sync", async () => {
      const body = await json(await call("/informers/crud"));
      return body.synced && body;
    });
    expect(status).toMatchObject({ objects: expect.any(Number), queueDepth: 0, watch: { state: expect.any(String) } });
    // The database against its ceiling (storage-ceiling.ts): far under it, retention as configured.
    expect(status.storage).toEqual({ bytes: expect.any(Number), ceilingBytes: 7_000_000_000, maxEvents: 100_000, retentionShrunk: null, retentionCutPast: [] });
    expect(status.storage.bytes).toBeGreaterThan(0);
    expect((await put("/informers/crud", { resource: "pods", labelSelector: "app=web", watchTimeoutSeconds: 3 })).status).toBe(200);
    const listed = await json(await call("/informers"));
    expect(listed.items.map((i: { name: string }) => i.name)).toContain("crud");
    expect((await call("/informers/crud", { method: "DELETE", headers: ADMIN })).status).toBe(204);
    expect((await call("/informers/crud")).status).toBe(404);
    expect((await call("/informers/crud", { method: "DELETE", headers: ADMIN })).status).toBe(404);
  });

  describe("authentication", () => {
    it("answers 401 without the admin token and with a wrong one", async () => {
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: "Basic abc" }] as Record<string, string>[]) {
        const response = await put("/informers/auth", { resource: "pods" }, headers);
        expect(response.status).toBe(401);
        expect(await json(response)).toMatchObject({ error: { code: "Unauthorized" } });
      }
      expect((await call("/informers/auth")).status).toBe(404);
    });

    it("answers 403 to mutations while no ADMIN_TOKEN is set, unless unauthenticated access is allowed", async () => {
      const app = createApp();
      const request = () =>
        new Request(`${base}/informers/x`, { method: "DELETE" });
      const noToken = { ...env, ADMIN_TOKEN: undefined, ALLOW_UNAUTHENTICATED: "false" };
      const forbidden = await app.request(request(), undefined, noToken);
      expect(forbidden.status).toBe(403);
      expect((await json(forbidden)).error.message).toMatch(/ADMIN_TOKEN/);
      const allowed = await app.request(request(), undefined, { ...noToken, ALLOW_UNAUTHENTICATED: "true" });
      expect(allowed.status).toBe(404); // reached the handler: no such informer
    });

    it("guards reads with READ_TOKEN when it is set, accepting the admin token too", async () => {
      const app = createApp();
      const reader = "reader-0123456789abcdefghijklmnopqrstuvwxyz";
      const withReadToken = { ...env, READ_TOKEN: reader };
      const get = (headers: Record<string, string>) => app.request(`${base}/informers`, { headers }, withReadToken);
      expect((await get({})).status).toBe(401);
      expect((await get({ authorization: "Bearer nope" })).status).toBe(401);
      expect((await get({ authorization: `Bearer ${reader}` })).status).toBe(200);
      expect((await get(ADMIN)).status).toBe(200);
    });
  });

  describe("validation", () => {
    it.each([
      ["an unknown field", { resource: "pods", bogus: true }, /bogus/],
      ["no resource", {}, /resource/],
      ["a bad label selector", { resource: "pods", labelSelector: "app in (" }, /labelSelector/],
      ["a bad field selector", { resource: "pods", fieldSelector: "spec.nodeName" }, /fieldSelector/],
      ["a custom resource without apiVersion", { resource: "widgets.example.com" }, /apiVersion/],
      ["a namespace on a cluster-scoped resource", { resource: "nodes", namespace: "x" }, /cluster-scoped/],
      ["a bad indexer path", { resource: "pods", indexers: { byX: "spec..x" } }, /indexers/],
      ["an indexer named namespace", { resource: "pods", indexers: { namespace: "spec.x" } }, /namespace index/],
      ["a mismatched name", { name: "other", resource: "pods" }, /does not match/],
      ["a negative page size", { resource: "pods", pageSize: -1 }, /pageSize/],
      ["a negative maxLagSeconds", { resource: "pods", maxLagSeconds: -1 }, /maxLagSeconds: .*>=0/],
      ["a maxLagSeconds over an hour", { resource: "pods", maxLagSeconds: 3601 }, /maxLagSeconds: .*<=3600/],
      ["a fractional maxLagSeconds", { resource: "pods", maxLagSeconds: 1.5 }, /maxLagSeconds: .*int/],
      ["a maxLagSeconds as text", { resource: "pods", maxLagSeconds: "60" }, /maxLagSeconds: .*number/],
      // kubectl resolves short, singular and unqualified names; a spec names the resource exactly.
      ["a built-in without its group", { resource: "deployments" }, /'deployments' is kubectl's shorthand for the built-in resource 'deployments.apps'/],
      ["a built-in's singular", { resource: "pod" }, /write "resource": "pods"/],
      ["a built-in's short name", { resource: "deploy" }, /'deployments.apps'/],
      ["a built-in's kind", { resource: "Deployment" }, /'deployments.apps'/],
      ["a built-in without its group, with an apiVersion", { resource: "deployments", apiVersion: "apps/v1" }, /'deployments.apps'/],
      // Names of Object.prototype members are not built-ins (own-property lookups only).
      ["a resource named constructor", { resource: "constructor" }, /'constructor' is not a built-in resource/],
      // Field paths walk parsed objects: a prototype segment would read or delete outside the object.
      ["an indexer path through __proto__", { resource: "pods", indexers: { byX: "__proto__.polluted" } }, /indexers.byX: .*'__proto__'/],
      ["a bracketed constructor in an indexer", { resource: "pods", indexers: { byX: "metadata['constructor']" } }, /indexers.byX: .*'constructor'/],
      ["a dropFields path through prototype", { resource: "pods", transform: { dropFields: ["spec.constructor.prototype"] } }, /dropFields.0: .*'constructor'/],
    ])("refuses %s with 400 and creates nothing", async (_, body, message) => {
      const response = await put("/informers/invalid", body);
      expect(response.status).toBe(400);
      const error = (await json(response)).error;
      expect(error.code).toBe("BadRequest");
      expect(error.message).toMatch(message);
      expect((await call("/informers/invalid")).status).toBe(404);
    });

    it("refuses malformed JSON, oversized bodies and bad names", async () => {
      expect((await put("/informers/invalid", "{nope")).status).toBe(400);
      expect((await put("/informers/invalid", { resource: "pods", pad: "x".repeat(70_000) })).status).toBe(413);
      expect((await put("/informers/Bad_Name", { resource: "pods" })).status).toBe(400);
      expect((await call("/informers/invalid")).status).toBe(404);
    });

    // A browser sends text/plain, form and multipart bodies cross-site without a preflight: a page
    // could otherwise create a subscription on a dev instance (ALLOW_UNAUTHENTICATED) and stream the cache away.
    it.each([
      ["a text/plain body", "text/plain;charset=UTF-8"],
      ["a form body", "application/x-www-form-urlencoded"],
      ["a multipart body", "multipart/form-data; boundary=x"],
      ["a body without a content type", undefined],
    ])("refuses a mutating request with %s with 415 and changes nothing", async (_, type) => {
      expect([200, 201]).toContain((await put("/informers/media", { resource: "pods", watchTimeoutSeconds: 3 })).status);
      const devInstance = { ...env, ADMIN_TOKEN: undefined, ALLOW_UNAUTHENTICATED: "true" };
      const send = (method: string, path: string, body: unknown) =>
        createApp().request(
          new Request(`${base}${path}`, {
            method,
            headers: type === undefined ? {} : { "content-type": type },
            body: new TextEncoder().encode(JSON.stringify(body)), // bytes: no implied content type
          }),
          undefined,
          devInstance,
        );
      for (const [method, path, body] of [
        ["POST", "/informers/media/subscriptions", { url: "https://hooks.example.com/x" }],
        ["PUT", "/informers/media-415", { resource: "pods" }],
      ] as const) {
        const response = await send(method, path, body);
        expect(response.status).toBe(415);
        expect((await json(response)).error).toEqual({
          code: "UnsupportedMediaType",
          message: expect.stringMatching(/application\/json/),
        });
      }
      expect((await json(await call("/informers/media/subscriptions"))).items).toEqual([]);
      expect((await call("/informers/media-415")).status).toBe(404);
    });

    // A bodiless POST or DELETE needs no preflight either: a page could delete an informer or
    // redeliver dead letters on a dev instance. Browsers say where a request comes from.
    it.each([
      ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site" }],
      ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site" }],
      ["a foreign Origin", { origin: "https://evil.example" }],
    ])("refuses a bodiless mutation from a browser on another site (%s) with 403 and changes nothing", async (_, headers) => {
      expect([200, 201]).toContain((await put("/informers/cross-site", { resource: "pods", watchTimeoutSeconds: 3 })).status);
      const devInstance = { ...env, ADMIN_TOKEN: undefined, ALLOW_UNAUTHENTICATED: "true" };
      const response = await createApp().request(new Request(`${base}/informers/cross-site`, { method: "DELETE", headers }), undefined, devInstance);
      expect(response.status).toBe(403);
      expect((await json(response)).error).toEqual({ code: "Forbidden", message: expect.stringMatching(/another site/) });
      expect((await call("/informers/cross-site")).status).toBe(200);
      // the same request from the instance's own pages, or from a tool that is no browser, passes
      for (const own of [{ "sec-fetch-site": "same-origin" }, { origin: base }, {}] as Record<string, string>[]) {
        const again = await createApp().request(new Request(`${base}/informers/cross-site`, { method: "DELETE", headers: own }), undefined, devInstance);
        expect([204, 404]).toContain(again.status);
      }
      expect((await call("/informers/cross-site")).status).toBe(404);
    });

    it("accepts JSON with parameters, and bodiless mutations without a content type", async () => {
      const created = await put("/informers/media-ok", { resource: "pods", watchTimeoutSeconds: 3 }, { ...ADMIN, "content-type": "Application/JSON; charset=utf-8" });
      expect(created.status).toBe(201);
      expect((await call("/informers/media-ok", { method: "DELETE", headers: ADMIN })).status).toBe(204);
    });

    it("refuses a malformed informer name on every route with 400, before touching a Durable Object", async () => {
      const before = await informerIds();
      for (const name of ["Bad_Name", "a".repeat(64), "-x", "%E2%9C%93"]) {
        for (const path of informerPaths(name)) {
          const response = await call(path);
          expect([path, response.status]).toEqual([path, 400]);
          expect((await json(response)).error).toEqual({ code: "BadRequest", message: expect.stringMatching(/name/) });
        }
      }
      expect(await informerIds()).toEqual(before);
    });

    it.each([
      ["GET", "/informers/Bad_Name"],
      ["PUT", "/informers/Bad_Name"],
      ["DELETE", "/informers/Bad_Name"],
      ["GET", "/informers/Bad_Name/objects"],
      ["POST", "/informers/Bad_Name/subscriptions"],
    ])("says what an informer name is when %s %s gets a malformed one", async (method, path) => {
      const response = await call(path, { method, headers: { ...ADMIN, "content-type": "application/json" }, ...(method === "GET" || method === "DELETE" ? {} : { body: JSON.stringify({ resource: "pods", url: "https://x.example/" }) }) });
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toBe(
        "'Bad_Name' is not an informer name: a lower-case DNS label of 1-63 characters (a-z, 0-9 and '-', starting and ending with a letter or digit)",
      );
    });

    // Reads are anonymous unless READ_TOKEN is set: a probe must not create objects with stored rows.
    it("answers 404 for an unknown informer on every route and leaves no storage behind", async () => {
      const name = `ghost-${crypto.randomUUID().slice(0, 8)}`;
      for (const path of informerPaths(name)) {
        const response = await call(path);
        expect([path, response.status]).toEqual([path, 404]);
        expect((await json(response)).error).toEqual({ code: "NotFound", message: `informer '${name}' not found` });
      }
      for (const [method, path] of [["DELETE", `/informers/${name}`], ["POST", `/informers/${name}/subscriptions`]] as const) {
        const init = method === "POST" ? { body: JSON.stringify({ url: "https://hooks.example/x" }), headers: { ...ADMIN, "content-type": "application/json" } } : { headers: ADMIN };
        const response = await call(path, { method, ...init });
        expect([path, response.status, (await json(response)).error.message]).toEqual([path, 404, `informer '${name}' not found`]);
      }
      expect(await informerIds()).not.toContain(env.INFORMER.idFromName(name).toString());
    });

    it("names a deleted informer on every route, although this isolate saw it registered", async () => {
      const name = `gone-${crypto.randomUUID().slice(0, 8)}`;
      await createSynced(name, { resource: "pods" });
      for (const path of informerPaths(name)) await call(path); // remembered as registered
      expect((await call(`/informers/${name}`, { method: "DELETE", headers: ADMIN })).status).toBe(204);
      for (const path of informerPaths(name)) {
        const response = await call(path);
        expect([path, response.status, (await json(response)).error.message]).toEqual([path, 404, `informer '${name}' not found`]);
      }
    });

    it("answers 404 with a JSON error for unknown routes", async () => {
      const response = await call("/nowhere");
      expect(response.status).toBe(404);
      expect((await json(response)).error.code).toBe("NotFound");
    });
  });

  describe("queries", () => {
    it("lists objects with namespace, selectors and pagination, with the resourceVersion headers", async () => {
      await createSynced("q-pods", { resource: "pods", indexers: { byNode: "spec.nodeName" } });
      const truth = (await defaultCluster().state("pods")).items as KubeObject[];
      const all = await call("/informers/q-pods/objects");
      expect(all.headers.get("x-synced")).toBe("true");
      expect(all.headers.get("x-resource-version")).toMatch(/^\d+$/);
      const body = await json(all);
      expect(body.items).toHaveLength(truth.length);
      expect(body.continue).toBeUndefined();

      const namespace = truth[0]!.metadata.namespace!;
      const inNamespace = await json(await call(`/informers/q-pods/objects?namespace=${namespace}`));
      expect(inNamespace.items.every((o: KubeObject) => o.metadata.namespace === namespace)).toBe(true);
      expect(inNamespace.items).toHaveLength(truth.filter((o) => o.metadata.namespace === namespace).length);

      const app = truth.find((o) => o.metadata.labels?.app)!.metadata.labels!.app!;
      const selected = await json(await call(`/informers/q-pods/objects?labelSelector=${encodeURIComponent(`app=${app}`)}`));
      expect(selected.items.length).toBe(truth.filter((o) => o.metadata.labels?.app === app).length);
      const byField = await json(
        await call(`/informers/q-pods/objects?fieldSelector=${encodeURIComponent(`metadata.namespace!=${namespace}`)}`),
      );
      expect(byField.items.length).toBe(truth.filter((o) => o.metadata.namespace !== namespace).length);

      const names: string[] = [];
      let token: string | undefined;
      do {
        const page = await json(await call(`/informers/q-pods/objects?limit=2${token ? `&continue=${token}` : ""}`));
        expect(page.items.length).toBeLessThanOrEqual(2);
        names.push(...page.items.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`));
        token = page.continue;
      } while (token);
      expect(names).toEqual(body.items.map((o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`));
    });

    it("gets one object by key, and 404 for a missing one", async () => {
      await createSynced("q-get", { resource: "pods" });
      const [first] = (await defaultCluster().state("pods")).items as KubeObject[];
      const response = await call(`/informers/q-get/objects/${first!.metadata.namespace}/${first!.metadata.name}`);
      expect(response.status).toBe(200);
      expect((await json(response)).metadata.uid).toBe(first!.metadata.uid);
      expect((await call("/informers/q-get/objects/nope/nothing")).status).toBe(404);
      expect((await call("/informers/missing/objects")).status).toBe(404);
    });

    it("gets cluster-scoped objects by name", async () => {
      await createSynced("q-ns", { resource: "namespaces" });
      const [first] = (await defaultCluster().state("namespaces")).items as KubeObject[];
      const response = await call(`/informers/q-ns/objects/${first!.metadata.name}`);
      expect((await json(response)).metadata.name).toBe(first!.metadata.name);
    });

    it("answers index values and ByIndex, and 404 for an unknown index", async () => {
      await createSynced("q-idx", { resource: "pods", indexers: { byNode: "spec.nodeName" } });
      const truth = (await defaultCluster().state("pods")).items as KubeObject[];
      const nodes = [...new Set(truth.map((o) => (o.spec as { nodeName?: string }).nodeName).filter(Boolean))].sort();
      expect((await json(await call("/informers/q-idx/indexes/byNode"))).values).toEqual(nodes);
      const onNode = await json(await call(`/informers/q-idx/indexes/byNode/${nodes[0]}`));
      expect(onNode.items.length).toBe(truth.filter((o) => (o.spec as { nodeName?: string }).nodeName === nodes[0]).length);
      expect((await call("/informers/q-idx/indexes/nope")).status).toBe(404);
      expect((await call("/informers/q-idx/indexes/nope/x")).status).toBe(404);
    });

    // 5,000 large objects in one answer would exceed the isolate's 128 MB: pages are cut by bytes too.
    it("cuts object lists, ByIndex and index values into pages of a few MB, with continue", async () => {
      const cluster = await newCluster();
      const blob = (i: number) => `${String(i).padStart(2, "0")}-${"x".repeat(700_000)}`;
      for (let i = 0; i < 10; i++) await cluster.create("configmaps", configMap({ name: `big-${i}`, data: { blob: blob(i) } }));
      const { name, stub } = await startInformer(cluster, { resource: "configmaps", indexers: { byName: "metadata.name" } });
      await waitSynced(stub);
      /** Every page of a paged answer, following continue. */
      const pages = async (path: string) => {
        const texts: string[] = [];
        let token: string | undefined;
        do {
          const response = await call(`${path}${token ? `${path.includes("?") ? "&" : "?"}continue=${token}` : ""}`);
          expect(response.status).toBe(200);
          texts.push(await response.text());
          token = JSON.parse(texts.at(-1)!).continue;
        } while (token);
        return texts;
      };
      const names = (texts: string[]) => texts.flatMap((t) => JSON.parse(t).items.map((o: KubeObject) => o.metadata.name));
      const expected = Array.from({ length: 10 }, (_, i) => `big-${i}`);
      for (const path of [`/informers/${name}/objects`, `/informers/${name}/indexes/namespace/default`]) {
        const texts = await pages(path);
        expect(texts.length).toBeGreaterThan(1);
        for (const text of texts) expect(text.length).toBeLessThan(5 * 1024 * 1024);
        expect(names(texts)).toEqual(expected);
      }
      // Index values page by count here; their byte bound is in test/cache/lister.test.ts.
      const valuePages = await pages(`/informers/${name}/indexes/byName?limit=3`);
      expect(valuePages.map((t) => JSON.parse(t).values.length)).toEqual([3, 3, 3, 1]);
      expect(valuePages.flatMap((t) => JSON.parse(t).values)).toEqual(expected);
    });

    it.each([
      ["limit=0", 400],
      ["limit=abc", 400],
      ["limit=5001", 400],
      ["bogus=1", 400],
      ["labelSelector=app%20in%20(", 400],
      ["continue=not-a-token", 400],
    ])("refuses ?%s", async (query, status) => {
      await createSynced("q-bad", { resource: "pods" });
      const response = await call(`/informers/q-bad/objects?${query}`);
      expect(response.status).toBe(status);
      expect((await json(response)).error.code).toBe("BadRequest");
    });
  });
});
