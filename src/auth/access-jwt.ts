/**
 * Cloudflare Access in front of the Worker: the JWT Access adds to each request it let through
 * (`Cf-Access-Jwt-Assertion`) is verified here, with `jose`, before its identity is believed —
 * signature against the team's published keys, `aud` the application's tag, `iss` the team, `exp`
 * and `nbf` against the clock (a minute of skew allowed, as Access's own examples do). The identity
 * is the user's `email`, or a service token's `common_name`; its groups, those the identity provider
 * sent as the custom OIDC claim or SAML attribute `groups`, which Access puts in the JWT's `custom`
 * object when the application is set to pass it (no request to `get-identity` on the request path).
 *
 * The key set is fetched once per isolate and team, then refreshed by jose when a token names a key
 * it does not hold (Access rotates its keys every six weeks), at most every 30 s.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import { type AccessSettings, MAX_GROUPS, MAX_KUBERNETES_NAME_LENGTH } from "./credentials.ts";

export type AccessVerdict =
  /** `groups`: undefined when the JWT carries none. */
  | { ok: true; identity: string; groups?: readonly string[] }
  /** The token is not one Access issued for this application, or not any more. */
  | { ok: false; reason: string; unavailable?: false }
  /** The team's keys could not be read: nothing can be verified now. */
  | { ok: false; reason: string; unavailable: true };

/** The header Cloudflare Access adds to every request it authenticated. */
export const ACCESS_JWT_HEADER = "cf-access-jwt-assertion";

const keySets = new Map<string, JWTVerifyGetKey>();

function keySet(certsUrl: string): JWTVerifyGetKey {
  let keys = keySets.get(certsUrl);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(certsUrl), { timeoutDuration: 5_000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
    keySets.set(certsUrl, keys);
  }
  return keys;
}

function identityOf(payload: Record<string, unknown>): string | undefined {
  for (const claim of ["email", "common_name"]) {
    const value = payload[claim];
    if (typeof value === "string" && value !== "") return value.toLowerCase();
  }
  return undefined;
}

/**
 * The groups in `custom.groups` (a list, or one name), each a non-empty string of a bounded length,
 * without repeats; undefined when the claim is absent; `tooMany` past MAX_GROUPS, which is refused
 * rather than cut (a cut list would grant by chance of order).
 */
function groupsOf(payload: Record<string, unknown>): readonly string[] | undefined | "tooMany" {
  const custom = payload.custom;
  const claim = custom && typeof custom === "object" ? (custom as Record<string, unknown>).groups : undefined;
  if (claim === undefined || claim === null) return undefined;
  const listed: unknown[] = Array.isArray(claim) ? claim : [claim];
  const groups = [...new Set(listed.filter((group): group is string => typeof group === "string" && group !== "" && group.length <= MAX_KUBERNETES_NAME_LENGTH))];
  return groups.length > MAX_GROUPS ? "tooMany" : groups;
}

export async function verifyAccessJwt(token: string, access: AccessSettings): Promise<AccessVerdict> {
  try {
    const { payload } = await jwtVerify(token, keySet(access.certsUrl), {
      issuer: access.issuer,
      audience: access.audience,
      algorithms: ["RS256"],
      clockTolerance: 60,
      requiredClaims: ["exp", "iat"],
    });
    const identity = identityOf(payload);
    if (identity === undefined) return { ok: false, reason: "it names no email or common_name" };
    const groups = groupsOf(payload);
    if (groups === "tooMany") return { ok: false, reason: `its custom.groups claim names more than ${MAX_GROUPS} groups` };
    return groups === undefined ? { ok: true, identity } : { ok: true, identity, groups };
  } catch (error) {
    // jose reports a key set it could not fetch as a timeout, a generic JOSEError (not 200, not a
    // key set) or the fetch's own error.
    if (!(error instanceof errors.JOSEError) || error instanceof errors.JWKSTimeout || error.code === "ERR_JOSE_GENERIC") {
      return { ok: false, reason: `the team's keys could not be read from ${access.certsUrl}`, unavailable: true };
    }
    if (error instanceof errors.JWTExpired) return { ok: false, reason: "it has expired" };
    if (error instanceof errors.JWTClaimValidationFailed) return { ok: false, reason: `its "${error.claim}" claim is not this application's (${error.reason})` };
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWSSignatureVerificationFailed) {
      return { ok: false, reason: "its signature is not the team's" };
    }
    return { ok: false, reason: `it is not a valid token (${error.code})` };
  }
}
