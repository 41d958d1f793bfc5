/**
 * Continue tokens in the apiserver's format: unpadded base64url of
 * `{"v":"meta.k8s.io/v1","rv":<snapshot revision>,"start":"<next key>"}`. rv -1 marks the
 * "inconsistent" token an Expired answer may carry (continue at the latest revision). The rv is
 * read as a bigint so revisions beyond 2^53 survive the round trip.
 */
import { badRequest, StatusError } from "./status.ts";

export interface ContinueToken {
  /** Snapshot revision, or -1n for "latest". */
  rv: bigint;
  /** First key of the next page. */
  start: string;
}

export function encodeContinue(token: ContinueToken): string {
  const json = `{"v":"meta.k8s.io/v1","rv":${token.rv},"start":${JSON.stringify(token.start)}}`;
  return Buffer.from(json, "utf8").toString("base64url");
}

/** Throws StatusError 400 for a token this server did not make. */
export function decodeContinue(text: string): ContinueToken {
  const invalid = (why: string): never => {
    throw new StatusError(badRequest(`invalid continue token: continue key is not valid: ${why}`));
  };
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(text)) invalid("not base64");
  const json = Buffer.from(text, "base64url").toString("utf8");
  let parsed: { v?: unknown; start?: unknown };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch {
    return invalid("not JSON");
  }
  if (parsed.v !== "meta.k8s.io/v1") invalid("server does not recognize this encoded key");
  const rv = /"rv":(-?[0-9]+)/.exec(json)?.[1];
  if (rv === undefined || typeof parsed.start !== "string") invalid("incomplete token");
  return { rv: BigInt(rv!), start: parsed.start as string };
}
