/**
 * Refused credentials are rate limited per client address (review A2(c), issue 29 item 5): with
 * the FAILED_CREDENTIALS binding (wrangler.toml `[[ratelimits]]`, run by workerd's own limiter here),
 * a client past the limit is answered 429 with Retry-After, and its next credential, right or
 * wrong, is not checked until the period ends; other clients and accepted credentials are untouched.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { clientKey, FAILED_CREDENTIALS_PERIOD_SECONDS, FailedCredentials } from "../../src/auth/failed-credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { ADMIN } from "../helpers/clusters.ts";

const app = createApp();
/** A deployment: no local development, the tests' admin token, the binding of wrangler.toml. */
const deployment = { ...env, ALLOW_UNAUTHENTICATED: "false" } as typeof env;
/** The wrangler.toml limit: refusals within a period before the 429s start. */
const LIMIT = 30;

const randomAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
const from = (address: string, headers: Record<string, string>, path = "/informers") =>
  app.request(`https://informers.example.com${path}`, { headers: { ...headers, "cf-connecting-ip": address } }, deployment);
const wrongToken = { authorization: `Bearer wrong-${"x".repeat(40)}` };

describe("refused credentials, rate limited per client (review A2(c))", () => {
  it("answers 429 with Retry-After past the limit, and then checks no credential, right or wrong, from that address", async () => {
    const address = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}::7`;
    const statuses: number[] = [];
    // The limiter's minute is the wall clock's: one roll-over at most while this loop runs.
    for (let i = 0; i < 2 * LIMIT + 2 && statuses.at(-1) !== 429; i++) statuses.push((await from(address, wrongToken)).status);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true);
    expect(statuses.length).toBeGreaterThan(LIMIT);

    const right = await from(address, ADMIN);
    expect(right.status).toBe(429);
    expect(right.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(Number(right.headers.get("retry-after"))).toBeLessThanOrEqual(FAILED_CREDENTIALS_PERIOD_SECONDS);
    expect(((await right.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "TooManyRequests",
      message: expect.stringMatching(/too many refused credentials from this address/),
    });
    // /k8s answers a Kubernetes Status with the same Retry-After; the same /64 is the same client.
    const k8s = await from(`${address.replace(/::7$/, "")}::1:2`, ADMIN, "/k8s/api/v1/pods");
    expect([k8s.status, ((await k8s.json()) as { reason: string }).reason, k8s.headers.get("retry-after")]).toEqual([429, "TooManyRequests", expect.stringMatching(/^\d+$/)]);

    // Another client, and the same token from it, are served.
    expect((await from(randomAddress(), ADMIN)).status).toBe(200);
  });

  it("never counts accepted credentials", async () => {
    const address = randomAddress().replace("198.51.100", "203.0.113");
    for (let i = 0; i < LIMIT + 5; i++) expect((await from(address, ADMIN)).status).toBe(200);
  });
});

describe("FailedCredentials", () => {
  it("remembers a client over the limit for the period, on its clock", async () => {
    let now = 1_000_000;
    const failures = new FailedCredentials({ now: () => now });
    let counted = 0;
    const limiter: RateLimit = { limit: async () => ({ success: ++counted <= 2 }) };
    expect(await failures.failed(limiter, "a")).toBeUndefined();
    expect(await failures.failed(limiter, "a")).toBeUndefined();
    expect(failures.retryAfter("a")).toBeUndefined();
    expect(await failures.failed(limiter, "a")).toBe(FAILED_CREDENTIALS_PERIOD_SECONDS);
    expect(failures.retryAfter("a")).toBe(FAILED_CREDENTIALS_PERIOD_SECONDS);
    expect(failures.retryAfter("b")).toBeUndefined();
    now += 59_500;
    expect(failures.retryAfter("a")).toBe(1);
    now += 500;
    expect(failures.retryAfter("a")).toBeUndefined();
  });

  it("keys IPv4 by address and IPv6 by its /64", () => {
    expect(clientKey("203.0.113.9")).toBe("203.0.113.9");
    expect(clientKey("2001:DB8:0:1::5")).toBe("2001:db8:0:1::/64");
    expect(clientKey("2001:db8:0000:0001:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:0:1::/64");
    expect(clientKey("2001:db8::")).toBe("2001:db8:0:0::/64");
    expect(clientKey("::1")).toBe("0:0:0:0::/64");
  });
});
