/**
 * Who is asking, and what they may do (API.md "Access"). `authenticate` turns a request's
 * credentials into a Principal; `permission` says whether that principal may read or change one
 * cluster, and if not, the answer to give (401: present a credential; 403: this one may not).
 *
 * Guarantees:
 * - Fail closed: nothing is granted to a request without an accepted credential, unless the
 *   deployment is local development (`ALLOW_UNAUTHENTICATED = "true"`), the request's Host is
 *   loopback, and no credential of the role it needs is configured.
 * - A bearer token is matched by its SHA-256 against every configured hash, each compared in
 *   constant time and all of them compared, so timing tells nothing about which matched.
 * - A Cloudflare Access JWT counts only on a request addressed to one of `ACCESS_HOSTNAMES`
 *   (review N9); bearer tokens count on any host.
 * - An admin credential may also read. A credential scoped to clusters may do nothing elsewhere.
 * - A client whose credentials were refused too often is answered 429 before its next one is
 *   checked (failed-credentials.ts, with the FAILED_CREDENTIALS binding).
 * - Refusals name what to set or which credential was refused, never a token's value.
 * - Every principal is a Kubernetes user in groups, as kube-apiserver's authenticators make them: a
 *   credential's `user` (by default `edge-informer:<name>`) and `groups`; an Access identity's email
 *   (or service token's common_name) unless its entry sets `user`, in the groups its JWT carries
 *   (`custom.groups`), else its entry's; every authenticated one is also in `system:authenticated`;
 *   local development's anonymous caller is `system:anonymous` in `system:unauthenticated`.
 */
import type { Env } from "../env.ts";
import { isLoopbackHostname } from "../net/loopback.ts";
import { systemClock } from "../clock.ts";
import { verifyAccessJwt } from "./access-jwt.ts";
import { clientKey, FailedCredentials } from "./failed-credentials.ts";
import { type ClusterScope, type Credential, type CredentialConfig, type Role, sha256Hex } from "./credentials.ts";

export interface Principal {
  /** The credential's name (`anonymous` for local development): what audit lines record. */
  name: string;
  /** How it authenticated. */
  via: "token" | "access" | "anonymous";
  read: boolean;
  admin: boolean;
  clusters: ClusterScope;
  /** The Kubernetes user it is (SelfSubjectReview's `username`). */
  user: string;
  /** The Kubernetes groups it is in, `system:authenticated` (or `system:unauthenticated`) among them. */
  groups: readonly string[];
}

/** kube-apiserver's groups of every authenticated user, and of the anonymous one (KK pkg/apis/user). */
export const AUTHENTICATED_GROUP = "system:authenticated";
export const ANONYMOUS_USER = "system:anonymous";
export const UNAUTHENTICATED_GROUP = "system:unauthenticated";

/** What a request presents: its headers, and the host it was addressed to. */
export interface Presented {
  /** `Authorization`: a bearer token, or HTTP Basic whose password is the token (the status page). */
  authorization: string | undefined;
  /** Cloudflare Access's `Cf-Access-Jwt-Assertion`. */
  accessJwt: string | undefined;
  /** The URL's hostname (`[::1]` style for IPv6). */
  hostname: string;
  /** `CF-Connecting-IP`: the client's address, as Cloudflare saw it (absent locally). */
  clientAddress?: string | undefined;
}

export type Refusal = { status: 401 | 403 | 429 | 500 | 503; message: string; retryAfterSeconds?: number };
export type Authentication = { ok: true; principal: Principal } | ({ ok: false } & Refusal);

export const HOW_TO_CONFIGURE_READS =
  "set READ_TOKEN or TOKENS (wrangler secret put), or Cloudflare Access (ACCESS_TEAM_DOMAIN and ACCESS_AUD); ALLOW_UNAUTHENTICATED = \"true\" serves local development only";

/** The token of `Authorization: Bearer <token>`, or the password of HTTP Basic credentials (any user name). */
export function presentedToken(header: string | undefined): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!basic) return undefined;
  try {
    const decoded = new TextDecoder().decode(Uint8Array.from(atob(basic[1]!), (ch) => ch.charCodeAt(0)));
    const colon = decoded.indexOf(":");
    return colon === -1 ? undefined : decoded.slice(colon + 1) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether two hex digests of one length are equal, in time that depends on their length only: every
 * character is compared, whatever differs first. (They are hashes already, so no hashing again.)
 */
function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function granted(credential: Credential, via: Principal["via"], identity?: { user: string; groups: readonly string[] | undefined }): Principal {
  const user = identity && !credential.userConfigured ? identity.user : credential.user;
  // The identity provider's word on groups is the current one; the entry's are for those that send none.
  const groups = identity?.groups ?? credential.groups;
  return {
    name: credential.name,
    via,
    read: true,
    admin: credential.role === "admin",
    clusters: credential.clusters,
    user,
    groups: groups.includes(AUTHENTICATED_GROUP) ? groups : [...groups, AUTHENTICATED_GROUP],
  };
}

const failedCredentials = new FailedCredentials(systemClock);

/**
 * Who presented these credentials. A refused credential (401) is counted against its client
 * (failed-credentials.ts); past the limit the answer is 429, and stays so, unchecked, for the period.
 */
export async function authenticate(env: Env, config: CredentialConfig, presented: Presented): Promise<Authentication> {
  const limiter = env.FAILED_CREDENTIALS;
  // No address: not through Cloudflare's edge (local development, tests), which sets it on every request.
  const address = presented.clientAddress;
  if (!limiter || !address || (presented.authorization === undefined && presented.accessJwt === undefined)) return checkCredentials(env, config, presented);
  const client = clientKey(address);
  const waiting = failedCredentials.retryAfter(client);
  if (waiting !== undefined) return tooManyFailures(waiting);
  const outcome = await checkCredentials(env, config, presented);
  if (outcome.ok || outcome.status !== 401) return outcome;
  const wait = await failedCredentials.failed(limiter, client);
  return wait === undefined ? outcome : tooManyFailures(wait);
}

function tooManyFailures(retryAfterSeconds: number): Authentication {
  return {
    ok: false,
    status: 429,
    retryAfterSeconds,
    message: `too many refused credentials from this address: try again in ${retryAfterSeconds} s (no credential is checked until then)`,
  };
}

async function checkCredentials(env: Env, config: CredentialConfig, presented: Presented): Promise<Authentication> {
  if (config.problem) return { ok: false, status: 500, message: `this deployment's credentials are misconfigured: ${config.problem}` };
  const local = env.ALLOW_UNAUTHENTICATED === "true";
  if (local && !isLoopbackHostname(presented.hostname)) {
    return {
      ok: false,
      status: 403,
      message: `ALLOW_UNAUTHENTICATED serves only requests addressed to localhost, 127.0.0.1 or [::1], not '${presented.hostname}' (a page elsewhere could otherwise reach it by DNS rebinding)`,
    };
  }
  const token = presentedToken(presented.authorization);
  if (token !== undefined) {
    const hash = await sha256Hex(token);
    let match: Principal | undefined;
    for (const credential of config.tokens) {
      if (sameDigest(hash, credential.sha256) && !match) match = granted(credential, "token");
    }
    if (match) return { ok: true, principal: match };
    return {
      ok: false,
      status: 401,
      message: config.tokens.length > 0 ? "the bearer token is not accepted" : "the bearer token is not accepted: this deployment configures none (ADMIN_TOKEN, READ_TOKEN or TOKENS)",
    };
  }
  if (presented.accessJwt !== undefined && config.access) {
    const host = presented.hostname.toLowerCase().replace(/\.+$/, "");
    if (!config.access.hostnames.includes(host)) {
      return {
        ok: false,
        status: 403,
        message: `Cloudflare Access tokens are accepted only on ACCESS_HOSTNAMES (${config.access.hostnames.join(", ")}), not on '${host}': Access does not guard this host name`,
      };
    }
    const verdict = await verifyAccessJwt(presented.accessJwt, config.access);
    if (!verdict.ok) return { ok: false, status: verdict.unavailable ? 503 : 401, message: `the Cloudflare Access token is refused: ${verdict.reason}` };
    const credential = config.identities.find((entry) => entry.identity === verdict.identity);
    if (!credential) return { ok: false, status: 403, message: `the Cloudflare Access identity '${verdict.identity}' has no entry in TOKENS` };
    return { ok: true, principal: granted(credential, "access", { user: verdict.identity, groups: verdict.groups }) };
  }
  return {
    ok: true,
    principal: {
      name: "anonymous",
      via: "anonymous",
      read: local && !config.readConfigured,
      admin: local && !config.adminConfigured,
      clusters: "*",
      user: ANONYMOUS_USER,
      groups: [UNAUTHENTICATED_GROUP],
    },
  };
}

export function mayAccess(principal: Principal, cluster: string): boolean {
  return principal.clusters === "*" || principal.clusters.has(cluster);
}

/** Why `principal` may not `role` on `cluster`, or undefined when it may. */
export function permission(principal: Principal, role: Role, cluster: string, config: CredentialConfig, env: Env): Refusal | undefined {
  if (principal.via === "anonymous") {
    if (role === "read" && !principal.read) {
      return {
        status: 401,
        message: config.readConfigured
          ? "this endpoint needs a credential: 'Authorization: Bearer <token>' (READ_TOKEN, ADMIN_TOKEN or a TOKENS entry), or Cloudflare Access"
          : `reads need a credential, and this deployment configures none: ${HOW_TO_CONFIGURE_READS}`,
      };
    }
    if (role === "admin" && !principal.admin) {
      return config.adminConfigured || env.ALLOW_UNAUTHENTICATED === "true"
        ? { status: 401, message: "this endpoint needs an admin credential: 'Authorization: Bearer <ADMIN_TOKEN>' or an admin entry of TOKENS" }
        : { status: 403, message: "mutating endpoints are disabled: set the ADMIN_TOKEN secret or an admin entry in TOKENS (or ALLOW_UNAUTHENTICATED=true for local development)" };
    }
    return undefined;
  }
  if (role === "admin" && !principal.admin) return { status: 403, message: `credential '${principal.name}' may read but not change anything` };
  if (!mayAccess(principal, cluster)) return { status: 403, message: `credential '${principal.name}' may not ${role === "admin" ? "change" : "read"} cluster '${cluster}'` };
  return undefined;
}
