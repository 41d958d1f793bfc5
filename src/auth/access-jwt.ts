/**
 * Cloudflare Access in front of the Worker: the JWT Access adds to each request it let through
 * (`Cf-Access-Jwt-Assertion`) is verified here, with `jose`, before its identity is believed —
 * signature against the team's published keys, `aud` the application's tag, `iss` the team, `exp`
 * and `nbf` against the clock (a minute of skew allowed, as Access's own examples do). The identity
 * is the user's `email`, or a service token's `common_name`.
 *
 * The key set is fetched once per isolate and team, then refreshed by jose when a token names a key
 * it does not hold (Access rotates its keys every six weeks), at most every 30 s.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { AccessSettings } from "./credentials.ts";

export type AccessVerdict =
  | { ok: true; identity: string }
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
    return identity === undefined ? { ok: false, reason: "it names no email or common_name" } : { ok: true, identity };
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
