/**
 * The credentials a deployment configures (API.md "Access"), read from the environment and
 * validated once per value:
 * - `ADMIN_TOKEN` and `READ_TOKEN`: shorthands for an admin credential named `admin` and a read
 *   credential named `read`, on every cluster;
 * - `TOKENS`: named credentials, each a SHA-256 hash of a bearer token or a Cloudflare Access
 *   identity, with a role and the clusters it may see, so one can be rotated or revoked alone, and
 *   the Kubernetes user (default `edge-informer:<name>`) and groups it is (issue 31);
 * - `ACCESS_TEAM_DOMAIN` + `ACCESS_AUD` + `ACCESS_HOSTNAMES`: Cloudflare Access, whose JWTs name an
 *   identity, accepted only on the host names its application protects (review N9: elsewhere, e.g.
 *   `*.workers.dev`, Access never saw the request, so its revocations and device posture do not apply).
 *
 * Guarantees: a configuration that is wrong in any part (a token shorter than 32 characters, TOKENS
 * that do not parse, a `user` or `groups` that is not a bounded non-empty name (or list of them,
 * none twice), two credentials sharing a token or a name, Access half set or without the host
 * names it protects) yields `problem`, naming the TOKENS entry by index and name,
 * and no credential at all, so a mistake fails closed with a message instead of half working. Token
 * values are hashed here and never kept, logged or echoed; a problem names the setting, never a value.
 */
import * as z from "zod/mini";
import { CLUSTER_NAME_RULE, isClusterName } from "../clusters/cluster.ts";
import type { Env } from "../env.ts";
import { describeIssues } from "../errors.ts";
import { toHex } from "../net/byte-encoding.ts";
import { httpsRefusal, parseHostList } from "../net/egress.ts";

export type Role = "read" | "admin";

/** Every cluster, or these. */
export type ClusterScope = "*" | ReadonlySet<string>;

export interface Credential {
  /** What audit lines and messages call it: never a secret. */
  name: string;
  role: Role;
  clusters: ClusterScope;
  /**
   * The Kubernetes user it is (TOKENS `user`); by default `edge-informer:<name>`, a name no real
   * cluster user has, so no RoleBinding of the cluster's names it by accident. An Access identity
   * without `user` is its email (principal.ts).
   */
  user: string;
  /**
   * The Kubernetes groups it is in (TOKENS `groups`), without `system:authenticated` (principal.ts
   * adds it). An Access identity whose JWT carries groups is in those instead.
   */
  groups: readonly string[];
  /** Whether `user` was configured (an Access identity without one is its email). */
  userConfigured?: boolean;
}

export interface TokenCredential extends Credential {
  /** Lower-case hex SHA-256 of the bearer token. */
  sha256: string;
}

export interface IdentityCredential extends Credential {
  /** A Cloudflare Access identity: a user's email, or a service token's common name. */
  identity: string;
}

export interface AccessSettings {
  /** `https://<team>.cloudflareaccess.com`: the JWT's `iss`. */
  issuer: string;
  /** Where the team publishes its signing keys. */
  certsUrl: string;
  /** The application's audience tag: the JWT's `aud`. */
  audience: string;
  /** The host names the Access application protects, lower case: the only ones a JWT is accepted on. */
  hostnames: readonly string[];
}

export interface CredentialConfig {
  tokens: readonly TokenCredential[];
  identities: readonly IdentityCredential[];
  access?: AccessSettings;
  /** A credential that can read is configured (READ_TOKEN, TOKENS or Access; ADMIN_TOKEN alone does not count). */
  readConfigured: boolean;
  /** A credential that can change things is configured (ADMIN_TOKEN or an admin entry of TOKENS). */
  adminConfigured: boolean;
  /** Why the configuration is refused; when set, no credential is accepted. */
  problem?: string;
}

/** The shortest token accepted: 32 characters, e.g. `openssl rand -base64 32` gives 44. */
export const MIN_TOKEN_LENGTH = 32;
const HOW_TO_MAKE_ONE = "generate one with `openssl rand -base64 32`";

const credentialName = z.string().check(z.regex(/^[A-Za-z0-9][-A-Za-z0-9._@]{0,99}$/, "1-100 letters, digits, '-', '.', '_' and '@', starting with a letter or digit"));
const clusterList = z.array(z.string()).check(
  z.minLength(1, "name at least one cluster, or \"*\" for every cluster"),
  z.refine((names) => names.every((name) => name === "*" || isClusterName(name)), `each is "*" or ${CLUSTER_NAME_RULE}`),
  z.refine((names) => !names.includes("*") || names.length === 1, '"*" stands alone'),
);
/** The most groups one credential or Access identity may be in: a bound on what each request carries and checks. */
export const MAX_GROUPS = 256;
/** The longest Kubernetes user or group name accepted (an email is at most 320). */
export const MAX_KUBERNETES_NAME_LENGTH = 320;
/** The user of a credential without a configured one. */
export const defaultUser = (name: string) => `edge-informer:${name}`;

const kubernetesName = z.string().check(z.minLength(1, "a non-empty string"), z.maxLength(MAX_KUBERNETES_NAME_LENGTH, `at most ${MAX_KUBERNETES_NAME_LENGTH} characters`));
const groupList = z.array(kubernetesName).check(
  z.maxLength(MAX_GROUPS, `at most ${MAX_GROUPS} groups`),
  z.refine((groups) => new Set(groups).size === groups.length, "a group is named twice"),
);
const tokensEntry = z.strictObject({
  name: credentialName,
  role: z.enum(["read", "admin"]),
  clusters: clusterList,
  sha256: z.optional(z.string().check(z.regex(/^[0-9a-fA-F]{64}$/, "the hex SHA-256 of the token (64 hex digits): `printf %s \"$TOKEN\" | sha256sum`"))),
  identity: z.optional(z.string().check(z.minLength(1), z.maxLength(320))),
  user: z.optional(kubernetesName),
  groups: z.optional(groupList),
});
const tokensSchema = z.array(tokensEntry).check(z.maxLength(1000));

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toHex(new Uint8Array(digest));
}

function scopeOf(clusters: readonly string[]): ClusterScope {
  return clusters.includes("*") ? "*" : new Set(clusters);
}

class Misconfigured extends Error {}

async function shorthand(name: "admin" | "read", setting: string, token: string | undefined): Promise<TokenCredential[]> {
  if (!token) return [];
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Misconfigured(`${setting} is shorter than ${MIN_TOKEN_LENGTH} characters: ${HOW_TO_MAKE_ONE}`);
  }
  return [{ name, role: name, clusters: "*", user: defaultUser(name), groups: [], sha256: await sha256Hex(token) }];
}

function parseTokens(text: string | undefined): { tokens: TokenCredential[]; identities: IdentityCredential[] } {
  if (text === undefined || text.trim() === "") return { tokens: [], identities: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Misconfigured("TOKENS is not JSON: it is an array of {name, sha256 | identity, role, clusters}");
  }
  const parsed = tokensSchema.safeParse(json);
  if (!parsed.success) throw new Misconfigured(`TOKENS is invalid: ${describeIssues({ issues: parsed.error.issues.map((issue) => namingTheEntry(json, issue)) })}`);
  const tokens: TokenCredential[] = [];
  const identities: IdentityCredential[] = [];
  for (const [i, entry] of parsed.data.entries()) {
    const base: Credential = {
      name: entry.name,
      role: entry.role,
      clusters: scopeOf(entry.clusters),
      user: entry.user ?? defaultUser(entry.name),
      groups: entry.groups ?? [],
      userConfigured: entry.user !== undefined,
    };
    if ((entry.sha256 === undefined) === (entry.identity === undefined)) {
      throw new Misconfigured(`TOKENS is invalid: ${i}: give exactly one of sha256 (a bearer token's hash) and identity (a Cloudflare Access identity)`);
    }
    if (entry.sha256 !== undefined) tokens.push({ ...base, sha256: entry.sha256.toLowerCase() });
    else identities.push({ ...base, identity: entry.identity!.toLowerCase() });
  }
  return { tokens, identities };
}

/** An issue whose path starts at an entry, with the entry's name beside its index: `1 ('jane').groups: …`. */
function namingTheEntry<Issue extends { path: readonly PropertyKey[]; message: string }>(json: unknown, issue: Issue): Issue {
  const [index, ...rest] = issue.path;
  const entry: unknown = typeof index === "number" && Array.isArray(json) ? json[index] : undefined;
  const name = entry && typeof entry === "object" && "name" in entry && typeof entry.name === "string" ? entry.name.slice(0, 100) : undefined;
  return name === undefined ? issue : { ...issue, path: [`${String(index)} ('${name}')`, ...rest] };
}

function accessSettings(env: Env): AccessSettings | undefined {
  const { ACCESS_TEAM_DOMAIN: domain, ACCESS_AUD: audience } = env;
  if (!domain && !audience) return undefined;
  if (!domain || !audience) throw new Misconfigured("Cloudflare Access needs both ACCESS_TEAM_DOMAIN and ACCESS_AUD");
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(domain) ? domain : `https://${domain}`);
  } catch {
    throw new Misconfigured("ACCESS_TEAM_DOMAIN is not a host name such as myteam.cloudflareaccess.com");
  }
  // Plain http only on loopback: where tests serve a key set of their own.
  const insecure = httpsRefusal(url);
  if (insecure) throw new Misconfigured(`ACCESS_TEAM_DOMAIN ${insecure} (e.g. myteam.cloudflareaccess.com)`);
  if (url.pathname !== "/" || url.search || url.hash || url.username) {
    throw new Misconfigured("ACCESS_TEAM_DOMAIN is a host name such as myteam.cloudflareaccess.com, without a path");
  }
  // Fail closed, as every half-set configuration here: guessing the hosts would accept JWTs on
  // `*.workers.dev` or a preview URL, which Access does not guard.
  const hostnames = parseHostList(env.ACCESS_HOSTNAMES);
  if (hostnames.length === 0) {
    throw new Misconfigured(
      "Cloudflare Access needs ACCESS_HOSTNAMES: the comma-separated host names its application protects (e.g. informers.example.com); a JWT is accepted only on a request addressed to one of them",
    );
  }
  return { issuer: url.origin, certsUrl: `${url.origin}/cdn-cgi/access/certs`, audience, hostnames };
}

function refuseDuplicates(credentials: readonly (TokenCredential | IdentityCredential)[]): void {
  const names = new Set<string>();
  const secrets = new Set<string>();
  for (const credential of credentials) {
    if (names.has(credential.name)) throw new Misconfigured(`two credentials are named '${credential.name}' (ADMIN_TOKEN is 'admin', READ_TOKEN is 'read')`);
    names.add(credential.name);
    const secret = "sha256" in credential ? `token:${credential.sha256}` : `identity:${credential.identity}`;
    if (secrets.has(secret)) {
      throw new Misconfigured(`credential '${credential.name}' has the same ${"sha256" in credential ? "token" : "identity"} as another: each credential needs its own`);
    }
    secrets.add(secret);
  }
}

async function readConfig(env: Env): Promise<CredentialConfig> {
  const empty: CredentialConfig = { tokens: [], identities: [], readConfigured: false, adminConfigured: false };
  try {
    const declared = parseTokens(env.TOKENS);
    const tokens = [...(await shorthand("admin", "ADMIN_TOKEN", env.ADMIN_TOKEN)), ...(await shorthand("read", "READ_TOKEN", env.READ_TOKEN)), ...declared.tokens];
    refuseDuplicates([...tokens, ...declared.identities]);
    const access = accessSettings(env);
    if (declared.identities.length > 0 && !access) {
      throw new Misconfigured("TOKENS has identity entries, which need Cloudflare Access: set ACCESS_TEAM_DOMAIN and ACCESS_AUD");
    }
    const all = [...tokens, ...declared.identities];
    return {
      tokens,
      identities: declared.identities,
      ...(access ? { access } : {}),
      readConfigured: !!env.READ_TOKEN || all.length > (env.ADMIN_TOKEN ? 1 : 0) || access !== undefined,
      adminConfigured: all.some((credential) => credential.role === "admin"),
    };
  } catch (error) {
    if (error instanceof Misconfigured) return { ...empty, problem: error.message };
    throw error;
  }
}

let cached: { key: string; config: Promise<CredentialConfig> } | undefined;

/** The deployment's credentials, read once per isolate and value of the settings (a redeploy or secret change re-reads). */
export function credentialConfig(env: Env): Promise<CredentialConfig> {
  const key = JSON.stringify([env.ADMIN_TOKEN, env.READ_TOKEN, env.TOKENS, env.ACCESS_TEAM_DOMAIN, env.ACCESS_AUD, env.ACCESS_HOSTNAMES]);
  if (cached?.key !== key) cached = { key, config: readConfig(env) };
  return cached.config;
}
