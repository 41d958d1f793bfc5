/**
 * Access (issue 17, API.md "Access"), through the Worker's whole app with a deployment's settings:
 * nothing but /healthz answers anonymously; misconfigured credentials fail closed; local development
 * serves only loopback Hosts; TOKENS credentials are scoped to clusters on every route and rotate
 * one at a time; Cloudflare Access JWTs are verified against a key set served on loopback; receiver
 * URLs are masked for readers; mutations are audited by credential name.
 */
import { env } from "cloudflare:workers";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { ADMIN, createSynced, json, send, startInCluster, unique } from "../helpers/clusters.ts";
import { parseMetrics, samples } from "../metrics/prometheus-parse.ts";
import { anonymousWalk } from "../helpers/routes.ts";

const app = createApp();
const base = "http://localhost";
type Settings = { [name in keyof typeof env]?: string };

/** A deployment: no local development, the admin token as configured for the tests, and `settings`. */
const deployment = (settings: Settings = {}) => ({ ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: undefined, ...settings }) as typeof env;
const request = async (settings: typeof env, path: string, init: RequestInit = {}, origin = base) => app.request(`${origin}${path}`, init, settings);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const token = (name: string) => `${name}-${"x".repeat(32)}`;
const tokens = {
  reader: token("reader"),
  readerNext: token("reader-next"),
  stagingReader: token("staging-reader"),
  stagingAdmin: token("staging-admin"),
};

async function tokensSetting(entries: { name: string; token?: string; identity?: string; role: "read" | "admin"; clusters: string[] }[]) {
  return JSON.stringify(
    await Promise.all(
      entries.map(async ({ token, ...entry }) => (token === undefined ? entry : { ...entry, sha256: await sha256Hex(token) })),
    ),
  );
}

let staging: Awaited<ReturnType<typeof startInCluster>>;
let defaultInformer: string;
let scoped: ReturnType<typeof deployment>;

beforeAll(async () => {
  staging = await startInCluster("stg");
  defaultInformer = unique("acc");
  await createSynced(`/informers/${defaultInformer}`);
  scoped = deployment({
    TOKENS: await tokensSetting([
      { name: "reader", token: tokens.reader, role: "read", clusters: ["*"] },
      { name: "staging-reader", token: tokens.stagingReader, role: "read", clusters: [staging.cluster] },
      { name: "staging-admin", token: tokens.stagingAdmin, role: "admin", clusters: [staging.cluster] },
    ]),
  });
}, 120_000);

afterEach(() => vi.restoreAllMocks());

describe("fail closed", () => {
  it("answers nothing but /healthz to an anonymous caller of a deployment that configured only ADMIN_TOKEN", async () => {
    const settings = deployment();
    const walked = await anonymousWalk((method, path) => request(settings, path, { method }), { cluster: staging.cluster, informer: defaultInformer });
    expect(walked.filter((route) => route.status < 400 && route.path !== "/healthz")).toEqual([]);
    expect(walked.find((route) => route.path === "/healthz")?.status).toBe(200);
    const read = await request(settings, "/informers");
    expect(read.status).toBe(401);
    expect((await json(read)).error.message).toMatch(/READ_TOKEN or TOKENS .*ACCESS_TEAM_DOMAIN and ACCESS_AUD/);
    // The admin credential reads.
    expect((await request(settings, "/informers", { headers: ADMIN })).status).toBe(200);
  });

  it.each([
    ["a short ADMIN_TOKEN", { ADMIN_TOKEN: "short-admin-token" }, /ADMIN_TOKEN is shorter than 32 characters/],
    ["a short READ_TOKEN", { READ_TOKEN: "short-read-token" }, /READ_TOKEN is shorter than 32 characters/],
    ["TOKENS that are not JSON", { TOKENS: "[{" }, /TOKENS is not JSON/],
    ["a TOKENS entry without a hash or identity", { TOKENS: '[{"name":"x","role":"read","clusters":["*"]}]' }, /exactly one of sha256/],
    ["a TOKENS hash that is not one", { TOKENS: '[{"name":"x","role":"read","clusters":["*"],"sha256":"abc"}]' }, /sha256/],
    ["an identity without Cloudflare Access", { TOKENS: '[{"name":"x","role":"read","clusters":["*"],"identity":"a@b.c"}]' }, /ACCESS_TEAM_DOMAIN/],
    ["Access half configured", { ACCESS_AUD: "aud" }, /both ACCESS_TEAM_DOMAIN and ACCESS_AUD/],
    ["Access over plain http elsewhere", { ACCESS_TEAM_DOMAIN: "http://team.example.com", ACCESS_AUD: "aud" }, /must be https/],
    ["ADMIN_TOKEN reused as READ_TOKEN", { READ_TOKEN: "test-admin-token-0123456789abcdef" }, /same token/],
  ])("refuses %s as misconfiguration, for every credential, naming the setting and never its value", async (_, settings, message) => {
    for (const headers of [{}, ADMIN]) {
      const response = await request(deployment(settings), "/informers", { headers });
      expect(response.status).toBe(500);
      const body = await json(response);
      expect(body.error.code).toBe("Misconfigured");
      expect(body.error.message).toMatch(message);
      for (const value of Object.values(settings) as string[]) if (value.length > 6) expect(body.error.message).not.toContain(value);
    }
  });

  it("serves local development only to loopback Hosts, so a rebound DNS name reaches nothing", async () => {
    const local = deployment({ ALLOW_UNAUTHENTICATED: "true" });
    for (const origin of ["http://localhost:8787", "http://127.0.0.1:8787", "http://[::1]:8787", "http://edge.localhost"]) {
      expect((await request(local, "/informers", {}, origin)).status, origin).toBe(200);
    }
    for (const origin of ["http://evil.example", "http://127.0.0.1.evil.example:8787", "http://10.0.0.5:8787"]) {
      for (const path of ["/informers", "/k8s/api/v1/pods", "/", "/metrics"]) {
        const response = await request(local, path, { headers: ADMIN }, origin);
        expect(response.status, `${origin}${path}`).toBe(403);
        expect(await response.text()).toMatch(/ALLOW_UNAUTHENTICATED serves only requests addressed to localhost/);
      }
    }
  });
});

describe("scoped credentials (TOKENS)", () => {
  it("keeps a credential scoped to one cluster inside it on every route", async () => {
    const stg = staging.cluster;
    const get = (path: string, who = tokens.stagingReader, accept?: string) =>
      request(scoped, path, { headers: { ...bearer(who), ...(accept ? { accept } : {}) } });

    // Its own cluster, on every kind of route.
    for (const path of [`/clusters/${stg}/informers`, `/clusters/${stg}/informers/pods`, `/clusters/${stg}/informers/pods/objects`, `/clusters/${stg}`, `/k8s/clusters/${stg}/api/v1/pods`]) {
      expect((await get(path)).status, path).toBe(200);
    }
    // Any other cluster: 403, on the Worker's routes as JSON and on /k8s as a Status.
    for (const path of ["/informers", `/informers/${defaultInformer}`, `/informers/${defaultInformer}/objects`, "/clusters/default", "/clusters/default/informers"]) {
      const response = await get(path);
      expect(response.status, path).toBe(403);
      expect((await json(response)).error.message).toBe(`credential 'staging-reader' may not read cluster 'default'`);
    }
    for (const path of ["/k8s/api/v1/pods", "/k8s/api/v1/namespaces/default/pods/web-1", "/k8s/apis/apps/v1/deployments"]) {
      const k8s = await get(path);
      expect(k8s.status, path).toBe(403);
      expect(await json(k8s)).toMatchObject({ kind: "Status", reason: "Forbidden", code: 403 });
    }
    // Discovery answers any reader, as kube-apiserver's does any authenticated user (kubectl discovers first).
    for (const path of ["/k8s/api", "/k8s/apis", "/k8s/api/v1", "/k8s/version"]) expect((await get(path)).status, path).toBe(200);

    // Listings across clusters leave the others out.
    expect((await json(await get("/clusters"))).items.map((c: { name: string }) => c.name)).toEqual([stg]);
    const search = await json(await get("/search/pods"));
    expect(Object.keys(search.resourceVersions)).toEqual([stg]);
    expect(search.items.length).toBeGreaterThan(0);
    expect(await json(await get("/search/pods?clusters=default"))).toEqual({ items: [], resourceVersions: {} });
    const metrics = parseMetrics(await (await get("/metrics")).text());
    const clustersSeen = new Set([...metrics.values()].flatMap((family) => family.metrics.map((sample) => sample.labels?.cluster)).filter(Boolean));
    expect([...clustersSeen]).toEqual([stg]);
    expect(samples(metrics, "edge_informer_cluster_info").map((s) => s.labels?.cluster)).toEqual([stg]);
    const page = (await json(await get("/", tokens.stagingReader, "application/json"))) as { clusters: { name: string }[]; informers: { identity: { cluster: string } }[] };
    expect(page.clusters.map((c) => c.name)).toEqual([stg]);
    expect(new Set(page.informers.map((i) => i.identity.cluster))).toEqual(new Set([stg]));

    // The unscoped reader sees both.
    expect(Object.keys((await json(await get("/search/pods", tokens.reader))).resourceVersions).sort()).toEqual([stg, "default"].sort());
  });

  it("lets an admin scoped to one cluster change only that cluster, and a reader change nothing", async () => {
    const stg = staging.cluster;
    const put = (path: string, who: string, body: unknown) =>
      request(scoped, path, { method: "PUT", headers: { ...bearer(who), "content-type": "application/json" }, body: JSON.stringify(body) });
    const name = unique("scoped");
    const refused = await put(`/informers/${name}`, tokens.stagingAdmin, { resource: "pods" });
    expect([refused.status, (await json(refused)).error.message]).toEqual([403, `credential 'staging-admin' may not change cluster 'default'`]);
    const readOnly = await put(`/clusters/${stg}/informers/${name}`, tokens.stagingReader, { resource: "pods" });
    expect([readOnly.status, (await json(readOnly)).error.message]).toEqual([403, `credential 'staging-reader' may read but not change anything`]);
    const created = await put(`/clusters/${stg}/informers/${name}`, tokens.stagingAdmin, { resource: "pods" });
    expect(created.status).toBe(201);
    const deleted = await request(scoped, `/clusters/${stg}/informers/${name}`, { method: "DELETE", headers: bearer(tokens.stagingAdmin) });
    expect(deleted.status).toBe(204);
    // Nothing was created in the default cluster by the refused call.
    expect((await request(scoped, `/informers/${name}`, { headers: ADMIN })).status).toBe(404);
  });

  it("applies a subscription's cluster to /subscriptions/{id}, and shows readers a masked receiver URL", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const url = `${hook.url}/secret-path?token=capability`;
    const created = await json(await send("POST", `/clusters/${staging.cluster}/informers/pods/subscriptions`, { url }));
    const other = await json(await send("POST", `/informers/${defaultInformer}/subscriptions`, { url }));
    const origin = new URL(hook.url).origin;

    const asReader = await json(await request(scoped, `/subscriptions/${created.id}`, { headers: bearer(tokens.stagingReader) }));
    expect(asReader.url).toBe(`${origin}/…`);
    const listed = await json(await request(scoped, `/clusters/${staging.cluster}/informers/pods/subscriptions`, { headers: bearer(tokens.reader) }));
    expect(listed.items.map((s: { url: string }) => s.url)).toEqual([`${origin}/…`]);
    const asAdmin = await json(await request(scoped, `/subscriptions/${created.id}`, { headers: bearer(tokens.stagingAdmin) }));
    expect(asAdmin.url).toBe(url);

    // Another cluster's subscription answers exactly as an id that does not exist (review A2(g)):
    // a credential scoped to staging must not learn which ids exist in other clusters.
    const missing = "sub_0123456789abcdef0123456789abcdef";
    const answers = async (id: string) => {
      const out: [string, number, string][] = [];
      for (const [method, path, who] of [
        ["GET", `/subscriptions/${id}`, tokens.stagingReader],
        ["GET", `/subscriptions/${id}/deliveries`, tokens.stagingReader],
        ["GET", `/subscriptions/${id}/dead-letters`, tokens.stagingReader],
        ["DELETE", `/subscriptions/${id}`, tokens.stagingAdmin],
        ["POST", `/subscriptions/${id}/secret`, tokens.stagingAdmin],
        ["POST", `/subscriptions/${id}/enable`, tokens.stagingAdmin],
        ["POST", `/subscriptions/${id}/dead-letters/evt_1/redeliver`, tokens.stagingAdmin],
        ["POST", `/status/subscriptions/${id}/redeliver`, tokens.stagingAdmin],
      ] as const) {
        const response = await request(scoped, path, { method, headers: bearer(who) });
        out.push([`${method} ${path.replace(id, "{id}")}`, response.status, await response.text()]);
      }
      return out;
    };
    const ofOtherCluster = await answers(other.id);
    expect(ofOtherCluster).toEqual(await answers(missing));
    expect(ofOtherCluster.map(([, status]) => status)).toEqual([404, 404, 404, 404, 404, 404, 404, 404]);
    expect((await request(scoped, `/subscriptions/${created.id}`, { method: "DELETE", headers: bearer(tokens.stagingReader) })).status).toBe(403);
    expect((await request(scoped, `/subscriptions/${created.id}`, { method: "DELETE", headers: bearer(tokens.stagingAdmin) })).status).toBe(204);
    expect((await send("DELETE", `/subscriptions/${other.id}`)).status).toBe(204);
  });

  it("rotates one credential while the other of its role keeps working", async () => {
    const both = deployment({
      TOKENS: await tokensSetting([
        { name: "reader", token: tokens.reader, role: "read", clusters: ["*"] },
        { name: "reader-next", token: tokens.readerNext, role: "read", clusters: ["*"] },
      ]),
    });
    const revoked = deployment({ TOKENS: await tokensSetting([{ name: "reader-next", token: tokens.readerNext, role: "read", clusters: ["*"] }]) });
    for (const who of [tokens.reader, tokens.readerNext]) expect((await request(both, "/informers", { headers: bearer(who) })).status).toBe(200);
    expect((await request(revoked, "/informers", { headers: bearer(tokens.reader) })).status).toBe(401);
    expect((await request(revoked, "/informers", { headers: bearer(tokens.readerNext) })).status).toBe(200);
    // A status page signs in with HTTP Basic: the password is the token.
    const basic = { authorization: `Basic ${btoa(`anyone:${tokens.readerNext}`)}`, accept: "text/html" };
    expect((await request(revoked, "/", { headers: basic })).status).toBe(200);
  });

  it("writes one audit line per mutation naming the credential, never its token", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "info").mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    const name = unique("audited");
    const path = `/clusters/${staging.cluster}/informers/${name}`;
    const init = { method: "PUT", headers: { ...bearer(tokens.stagingAdmin), "content-type": "application/json" }, body: '{"resource":"pods"}' };
    expect((await request(scoped, path, init)).status).toBe(201);
    expect((await request(scoped, path, { method: "DELETE", headers: bearer(tokens.stagingReader) })).status).toBe(403);
    expect((await request({ ...scoped, LOG_LEVEL: "error" }, path, { method: "DELETE", headers: bearer(tokens.stagingAdmin) })).status).toBe(204);
    const audit = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.audit === true);
    expect(audit.map(({ credential, method, status }) => [credential, method, status])).toEqual([
      ["staging-admin", "PUT", 201],
      ["staging-reader", "DELETE", 403],
      ["staging-admin", "DELETE", 204], // whatever LOG_LEVEL says
    ]);
    expect(audit.every((line) => line.path === path)).toBe(true);
    for (const value of Object.values(tokens)) expect(lines.join("\n")).not.toContain(value);
  });
});

describe("Cloudflare Access", () => {
  const audience = "edge-informer-app-aud";
  let signingKey: CryptoKey;
  let kid: string;
  let access: ReturnType<typeof deployment>;

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256", { extractable: true });
    signingKey = pair.privateKey;
    kid = crypto.randomUUID();
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid, alg: "RS256", use: "sig" };
    const put = await fetch(`${env.ACCESS_KEYS_URL}/_control/keys`, { method: "PUT", body: JSON.stringify({ keys: [jwk] }) });
    expect(put.status).toBe(204);
    access = deployment({
      ACCESS_TEAM_DOMAIN: env.ACCESS_KEYS_URL,
      ACCESS_AUD: audience,
      ACCESS_HOSTNAMES: "localhost, informers.example.com",
      TOKENS: await tokensSetting([
        { name: "alice", identity: "alice@example.com", role: "read", clusters: [staging.cluster] },
        { name: "deploy-bot", identity: "deploy-bot.access", role: "admin", clusters: ["*"] },
      ]),
    });
  });

  async function jwt(claims: Record<string, unknown>, options: { key?: CryptoKey; audience?: string; issuer?: string; expires?: number } = {}) {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid })
      .setIssuer(options.issuer ?? env.ACCESS_KEYS_URL)
      .setAudience(options.audience ?? audience)
      .setIssuedAt(now - 10)
      .setExpirationTime(options.expires ?? now + 300)
      .sign(options.key ?? signingKey);
  }
  const withJwt = (assertion: string, path = `/clusters/${staging.cluster}/informers`) =>
    request(access, path, { headers: { "cf-access-jwt-assertion": assertion } });

  it("accepts a valid token and maps its email to a TOKENS identity, scoped like any credential", async () => {
    const token = await jwt({ email: "Alice@Example.com" });
    expect((await withJwt(token)).status).toBe(200);
    expect((await withJwt(token, "/informers")).status).toBe(403);
  });

  it("maps a service token's common_name", async () => {
    const token = await jwt({ common_name: "deploy-bot.access" });
    const name = unique("via-access");
    const created = await request(access, `/informers/${name}`, {
      method: "PUT",
      headers: { "cf-access-jwt-assertion": token, "content-type": "application/json" },
      body: '{"resource":"pods"}',
    });
    expect(created.status).toBe(201);
    expect((await send("DELETE", `/informers/${name}`)).status).toBe(204);
  });

  it.each([
    ["a wrong audience", () => jwt({ email: "alice@example.com" }, { audience: "another-app" }), /"aud" claim/],
    ["another issuer", () => jwt({ email: "alice@example.com" }, { issuer: "https://other-team.cloudflareaccess.com" }), /"iss" claim/],
    ["an expired token", () => jwt({ email: "alice@example.com" }, { expires: Math.floor(Date.now() / 1000) - 3600 }), /expired/],
    ["a forged signature", async () => jwt({ email: "alice@example.com" }, { key: (await generateKeyPair("RS256")).privateKey }), /signature is not the team's/],
    ["a token that is not a JWT", async () => "not.a.jwt", /not a valid token/],
  ])("refuses %s with 401", async (_, make, reason) => {
    const response = await withJwt(await make());
    expect(response.status).toBe(401);
    expect((await json(response)).error.message).toMatch(reason);
  });

  it("accepts a JWT only on ACCESS_HOSTNAMES: on workers.dev Access never saw the request (review N9)", async () => {
    const token = await jwt({ email: "alice@example.com" });
    const path = `/clusters/${staging.cluster}/informers`;
    const on = (origin: string) => request(access, path, { headers: { "cf-access-jwt-assertion": token } }, origin);
    expect((await on("https://informers.example.com")).status).toBe(200);
    expect((await on("https://INFORMERS.example.com.")).status).toBe(200);
    for (const origin of ["https://edge-informer.acct.workers.dev", "https://abc123-edge-informer.acct.workers.dev", "https://other.example.com"]) {
      const refused = await on(origin);
      expect(refused.status, origin).toBe(403);
      expect((await json(refused)).error.message).toMatch(/accepted only on ACCESS_HOSTNAMES \(localhost, informers\.example\.com\)/);
    }
    // Bearer tokens are not Access's: they count on any host.
    expect((await request(access, "/informers", { headers: ADMIN }, "https://edge-informer.acct.workers.dev")).status).toBe(200);
  });

  it("fails closed with a 500 naming ACCESS_HOSTNAMES when Access is configured without it", async () => {
    const unset = { ...access, ACCESS_HOSTNAMES: undefined } as typeof env;
    const response = await request(unset, "/informers", { headers: ADMIN });
    expect(response.status).toBe(500);
    expect((await json(response)).error.message).toMatch(/Cloudflare Access needs ACCESS_HOSTNAMES/);
  });

  it("refuses an identity that has no TOKENS entry with 403", async () => {
    const response = await withJwt(await jwt({ email: "mallory@example.com" }));
    expect(response.status).toBe(403);
    expect((await json(response)).error.message).toMatch(/'mallory@example.com' has no entry in TOKENS/);
  });
});

describe("the status page", () => {
  it("forbids framing, sniffing and referrers, and runs no script", async () => {
    const response = await request(deployment(), "/", { headers: { ...ADMIN, accept: "text/html" } });
    expect(response.status).toBe(200);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toMatch(/frame-ancestors 'none'/);
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).toMatch(/form-action 'self'/);
    expect(policy).not.toMatch(/script-src/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
  });
});
