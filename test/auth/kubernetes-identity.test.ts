/**
 * Who is asking, in Kubernetes terms (issue 31 item 1): TOKENS entries carry an optional `user` and
 * `groups`, validated with errors naming the entry; every authenticated principal is its user with
 * its groups plus `system:authenticated`; a token without `user` is `edge-informer:<name>`; an Access
 * identity is its email (or service token's common_name), with the groups its JWT carries in
 * `custom.groups`, else its TOKENS entry's; local development's anonymous caller is
 * `system:anonymous` in `system:unauthenticated`. The team's key set is served by a stubbed fetch.
 */
import { env } from "cloudflare:workers";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { credentialConfig, MAX_GROUPS, sha256Hex } from "../../src/auth/credentials.ts";
import { authenticate, type Principal } from "../../src/auth/principal.ts";

type Settings = { [name in keyof typeof env]?: string };
const deployment = (settings: Settings) =>
  ({ ...env, ALLOW_UNAUTHENTICATED: "false", ADMIN_TOKEN: undefined, READ_TOKEN: undefined, TOKENS: undefined, FAILED_CREDENTIALS: undefined, ...settings }) as typeof env;
const token = (name: string) => `${name}-${"x".repeat(32)}`;
const entry = async (name: string, extra: Record<string, unknown> = {}) => ({ name, sha256: await sha256Hex(token(name)), role: "read", clusters: ["*"], ...extra });

async function problemOf(entries: unknown): Promise<string | undefined> {
  return (await credentialConfig(deployment({ TOKENS: JSON.stringify(entries) }))).problem;
}

async function principalOf(settings: typeof env, presented: { bearer?: string; jwt?: string; hostname?: string }): Promise<Principal> {
  const outcome = await authenticate(settings, await credentialConfig(settings), {
    authorization: presented.bearer === undefined ? undefined : `Bearer ${presented.bearer}`,
    accessJwt: presented.jwt,
    hostname: presented.hostname ?? "informers.example.com",
  });
  if (!outcome.ok) throw new Error(`refused: ${outcome.status} ${outcome.message}`);
  return outcome.principal;
}

describe("TOKENS user and groups", () => {
  it("accepts a user and groups, and names a credential without a user edge-informer:<name>", async () => {
    const config = await credentialConfig(
      deployment({
        READ_TOKEN: token("shorthand"),
        TOKENS: JSON.stringify([await entry("jane", { user: "jane@example.com", groups: ["team-a", "team-b"] }), await entry("bot")]),
      }),
    );
    expect(config.problem).toBeUndefined();
    expect(config.tokens.map(({ name, user, groups }) => ({ name, user, groups }))).toEqual([
      { name: "read", user: "edge-informer:read", groups: [] },
      { name: "jane", user: "jane@example.com", groups: ["team-a", "team-b"] },
      { name: "bot", user: "edge-informer:bot", groups: [] },
    ]);
  });

  it.each([
    ["an empty user", { user: "" }, /'jane'.*user/],
    ["a user that is not a string", { user: 7 }, /'jane'.*user/],
    ["groups that are not an array", { groups: "team-a" }, /'jane'.*groups/],
    ["an empty group", { groups: ["team-a", ""] }, /'jane'.*groups/],
    ["a group named twice", { groups: ["team-a", "team-a"] }, /'jane'.*groups.*twice/],
    ["too many groups", { groups: Array.from({ length: MAX_GROUPS + 1 }, (_, i) => `g${i}`) }, new RegExp(`'jane'.*groups.*${MAX_GROUPS}`)],
  ])("refuses %s, naming the entry", async (_, extra, message) => {
    const problem = await problemOf([await entry("bot"), await entry("jane", extra)]);
    expect(problem).toMatch(/^TOKENS is invalid/);
    expect(problem).toMatch(message);
  });
});

describe("the principal's user and groups", () => {
  it("is a token's user with its groups and system:authenticated", async () => {
    const settings = deployment({
      TOKENS: JSON.stringify([
        await entry("jane", { user: "jane@example.com", groups: ["team-a", "system:authenticated"] }),
        await entry("bot"),
      ]),
    });
    expect(await principalOf(settings, { bearer: token("jane") })).toMatchObject({ name: "jane", user: "jane@example.com", groups: ["team-a", "system:authenticated"] });
    expect(await principalOf(settings, { bearer: token("bot") })).toMatchObject({ name: "bot", user: "edge-informer:bot", groups: ["system:authenticated"] });
  });

  it("is system:anonymous in system:unauthenticated for local development", async () => {
    const principal = await principalOf(deployment({ ALLOW_UNAUTHENTICATED: "true" }), { hostname: "localhost" });
    expect(principal).toMatchObject({ via: "anonymous", user: "system:anonymous", groups: ["system:unauthenticated"] });
  });

  describe("Cloudflare Access", () => {
    const team = "http://127.0.0.1:9";
    const audience = "who-is-asking-aud";
    let signingKey: CryptoKey;
    let jwks: string;
    const kid = crypto.randomUUID();
    let settings: typeof env;

    beforeAll(async () => {
      const pair = await generateKeyPair("RS256", { extractable: true });
      signingKey = pair.privateKey;
      const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid, alg: "RS256", use: "sig" };
      jwks = JSON.stringify({ keys: [jwk] });
      settings = deployment({
        ACCESS_TEAM_DOMAIN: team,
        ACCESS_AUD: audience,
        ACCESS_HOSTNAMES: "informers.example.com",
        TOKENS: JSON.stringify([
          { name: "alice", identity: "alice@example.com", role: "read", clusters: ["*"], groups: ["from-tokens"] },
          { name: "carol", identity: "carol@example.com", role: "read", clusters: ["*"] },
          { name: "bot", identity: "bot.access", role: "read", clusters: ["*"], user: "deploy-bot", groups: ["bots"] },
        ]),
      });
    });
    afterEach(() => vi.restoreAllMocks());

    async function jwt(claims: Record<string, unknown>) {
      const original = globalThis.fetch;
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) =>
        String(input instanceof Request ? input.url : input) === `${team}/cdn-cgi/access/certs` ? new Response(jwks, { headers: { "content-type": "application/json" } }) : original(input, init),
      );
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid }).setIssuer(team).setAudience(audience).setIssuedAt(now - 10).setExpirationTime(now + 300).sign(signingKey);
    }

    it("maps an email to the user, with the groups the identity provider sent in custom.groups", async () => {
      const principal = await principalOf(settings, { jwt: await jwt({ email: "Alice@Example.com", custom: { groups: ["idp-admins", "idp-devs"] } }) });
      expect(principal).toMatchObject({ name: "alice", via: "access", user: "alice@example.com", groups: ["idp-admins", "idp-devs", "system:authenticated"] });
    });

    it("takes the TOKENS entry's groups when the JWT carries none", async () => {
      expect(await principalOf(settings, { jwt: await jwt({ email: "alice@example.com" }) })).toMatchObject({ user: "alice@example.com", groups: ["from-tokens", "system:authenticated"] });
      expect(await principalOf(settings, { jwt: await jwt({ email: "carol@example.com", custom: { department: "x" } }) })).toMatchObject({
        user: "carol@example.com",
        groups: ["system:authenticated"],
      });
    });

    it("keeps only the non-empty string groups of the claim, once each, and refuses a JWT naming more than MAX_GROUPS", async () => {
      const principal = await principalOf(settings, { jwt: await jwt({ email: "carol@example.com", custom: { groups: ["a", 7, "", "a", null, "b"] } }) });
      expect(principal.groups).toEqual(["a", "b", "system:authenticated"]);
      const many = await jwt({ email: "carol@example.com", custom: { groups: Array.from({ length: MAX_GROUPS + 1 }, (_, i) => `g${i}`) } });
      const outcome = await authenticate(settings, await credentialConfig(settings), { authorization: undefined, accessJwt: many, hostname: "informers.example.com" });
      expect(outcome).toMatchObject({ ok: false, status: 401, message: expect.stringMatching(new RegExp(`custom.groups claim names more than ${MAX_GROUPS} groups`)) });
    });

    it("takes the entry's user over the identity when the operator set one (a service token's common_name otherwise)", async () => {
      expect(await principalOf(settings, { jwt: await jwt({ common_name: "bot.access" }) })).toMatchObject({ user: "deploy-bot", groups: ["bots", "system:authenticated"] });
    });
  });
});
