/**
 * Failed credentials, rate limited per client (review A2(c), issue 29 item 5): each request whose
 * bearer token or Access JWT is refused (401) is counted by the Workers Rate Limiting binding
 * `FAILED_CREDENTIALS` (wrangler.toml `[[ratelimits]]`), keyed by the client's address
 * (`CF-Connecting-IP`, which Cloudflare sets on every request; an IPv6 address by its /64, which one
 * subscriber usually holds whole; a request without one did not come through the edge). Past
 * the binding's limit the client is answered 429 with Retry-After, and for the rest of the period
 * its requests are refused before any credential is checked, so a right guess answers no
 * differently from a wrong one: a guesser learns nothing more than once per period.
 *
 * Guarantees and limits:
 * - Only refusals count: a client whose credentials are accepted is never counted or slowed.
 * - The binding counts per Cloudflare location, approximately (its own documentation). It has no
 *   way to ask without counting, so "refused before checking" is remembered in this isolate, at
 *   most BLOCKED_CLIENTS_REMEMBERED clients (the oldest forgotten first): another isolate checks
 *   one credential more before its own count says over, at most one a period per isolate.
 * - Without the binding nothing is limited here; docs/security.md describes the WAF rule that does
 *   the same at the edge.
 */
import type { Clock } from "../clock.ts";

/** `[ratelimits.simple] period` of wrangler.toml (the Worker cannot read it): what Retry-After says. */
export const FAILED_CREDENTIALS_PERIOD_SECONDS = 60;
/** Clients this isolate remembers as over the limit. */
export const BLOCKED_CLIENTS_REMEMBERED = 10_000;

/** The key a client is counted by: its IPv4 address, or its IPv6 address's /64. */
export function clientKey(address: string): string {
  const ip = address.trim().toLowerCase();
  if (!ip.includes(":")) return ip;
  const [head = "", tail] = ip.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}

export class FailedCredentials {
  readonly #clock: Clock;
  /** Client key → when its refusal ends (ms); in insertion order, so the first is the oldest. */
  readonly #blocked = new Map<string, number>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Seconds the client must wait before its credential is checked, or undefined when it may present one now. */
  retryAfter(key: string): number | undefined {
    const until = this.#blocked.get(key);
    if (until === undefined) return undefined;
    const left = until - this.#clock.now();
    if (left > 0) return Math.ceil(left / 1000);
    this.#blocked.delete(key);
    return undefined;
  }

  /**
   * Counts a refused credential; answers the seconds to wait when the client is now over the
   * limit (the refusal becomes a 429), or undefined when it stays a 401.
   */
  async failed(limiter: RateLimit, key: string): Promise<number | undefined> {
    const { success } = await limiter.limit({ key });
    if (success) return undefined;
    this.#blocked.delete(key);
    if (this.#blocked.size >= BLOCKED_CLIENTS_REMEMBERED) this.#blocked.delete(this.#blocked.keys().next().value!);
    this.#blocked.set(key, this.#clock.now() + FAILED_CREDENTIALS_PERIOD_SECONDS * 1000);
    return FAILED_CREDENTIALS_PERIOD_SECONDS;
  }
}
