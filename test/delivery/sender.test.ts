/**
 * One delivery attempt over real HTTP (workerd's fetch to the fake receiver): statuses, Retry-After,
 * redirects not followed, timeouts, broken and refused connections, and the error text the
 * delivery log keeps.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/clock.ts";
import { httpSender, USER_AGENT } from "../../src/delivery/sender.ts";
import { signDelivery } from "../../src/delivery/sign.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { SubrequestBudget, SubrequestLimitError } from "../../src/net/subrequest-budget.ts";
import { egressRule } from "../../src/net/egress.ts";

/** Local development's receivers' rule: any host name (the tests' receivers are loopback anyway). */
const anyHost = egressRule({ ALLOW_UNAUTHENTICATED: "true" }, "WEBHOOK_ALLOWED_HOSTS");
const send = httpSender(systemClock, fetch, anyHost);
const secret = `whsec_${btoa("sender test secret of 24")}`;
const body = '{"id":"evt_1"}';
const request = (url: string, timeoutMs = 2_000) => ({ url, headers: signDelivery(secret, "evt_1", 1_700_000_000, body), body, timeoutMs });

describe("httpSender", () => {
  it("POSTs the signed body and reports a 2xx", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 202 } });
    const result = await send(request(hook.url));
    expect(result).toMatchObject({ status: 202 });
    expect(result).not.toHaveProperty("error");
    const [received] = await hook.requests();
    expect(received).toMatchObject({ method: "POST", body, headers: { "webhook-id": "evt_1", "user-agent": USER_AGENT, "content-type": "application/json" } });
  });

  it("reports an error status, the start of its body apart from the error, and the Retry-After", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, {
      default: { status: 429, headers: { "retry-after": "7" }, body: `slow down ${"x".repeat(500)}` },
    });
    const result = await send(request(hook.url));
    expect(result).toMatchObject({ status: 429, retryAfterMs: 7_000 });
    expect(result.error).toBe("HTTP 429");
    expect(result.response).toMatch(/^slow down x+$/);
    expect(result.response!.length).toBeLessThanOrEqual(200);
  });

  it("does not follow redirects", async () => {
    const target = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 307, headers: { location: target.url } } });
    expect(await send(request(hook.url))).toMatchObject({ status: 307, error: "HTTP 307" });
    expect(await target.requests()).toEqual([]);
  });

  it("gives up after the timeout, and reports broken and refused connections", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { script: [{ hang: true }, { destroy: true }], dedicatedPort: true });
    expect(await send(request(hook.url, 300))).toMatchObject({ error: "no answer within 0.3 s" });
    const broken = await send(request(hook.url));
    expect(broken.status).toBeUndefined();
    // workerd reports both as "Network connection lost."; the log says which it was.
    expect(broken.error).toMatch(/^request failed: the connection to 127\.0\.0\.1:\d+ was lost before an answer/);
    await hook.down();
    const refused = await send(request(hook.url));
    expect(refused.status).toBeUndefined();
    expect(refused.error).toMatch(/^request failed: connection refused: nothing accepts connections at 127\.0\.0\.1:\d+/);
  });
  it("reads at most a few hundred bytes of an error answer's body, and cancels the rest (#7.13)", async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode(`${pulled === 1 ? "overloaded " : ""}${"y".repeat(64 * 1024)}`));
        if (pulled === 200) controller.error(new Error("a body of 12 MB was read in full"));
      },
      cancel() {
        cancelled = true;
      },
    });
    const fetchImpl = (async () => new Response(endless, { status: 503 })) as unknown as typeof fetch;
    const result = await httpSender(systemClock, fetchImpl, anyHost)(request("https://hooks.example/x"));
    expect(result.status).toBe(503);
    expect(result.error).toBe("HTTP 503");
    expect(result.response).toMatch(/^overloaded y+$/);
    expect(result.response!.length).toBeLessThanOrEqual(200);
    expect(pulled).toBeLessThan(4);
    expect(cancelled).toBe(true);
  });

  it("names a failed TLS handshake instead of workerd's opaque internal error (issue 17)", async () => {
    // The receiver presents a self-signed certificate: workerd's fetch throws only
    // "internal error; reference = …" and logs "TLS handshake failed: invalid peer certificate".
    const result = await send(request(`${env.TLS_RECEIVER_URL}/hooks/x`));
    expect(result.status).toBeUndefined();
    expect(result.error).toMatch(
      new RegExp(`^request failed: TLS handshake with ${new URL(env.TLS_RECEIVER_URL).host.replace(/\./g, "\\.")} failed \\(untrusted or invalid certificate\\?\\); workerd reports only "internal error; reference = \\w+"$`),
    );
  });

  it("does not contact a receiver WEBHOOK_ALLOWED_HOSTS no longer admits, and says why (issue 17)", async () => {
    const fetchImpl = vi.fn<typeof fetch>();
    const guarded = httpSender(systemClock, fetchImpl, egressRule({ WEBHOOK_ALLOWED_HOSTS: "example.com" }, "WEBHOOK_ALLOWED_HOSTS"));
    expect(await guarded(request("https://hooks.elsewhere.test/x"))).toEqual({
      durationMs: 0,
      error: "not sent: hooks.elsewhere.test is not allowed by WEBHOOK_ALLOWED_HOSTS (example.com)",
    });
    expect(await guarded(request("https://10.0.0.7/x"))).toMatchObject({ error: expect.stringMatching(/^not sent: 10\.0\.0\.7 is an IP address/) });
    expect(fetchImpl).not.toHaveBeenCalled();
    // A loopback receiver is sent as ever: local development keeps the same rules.
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    expect(await httpSender(systemClock, fetch, egressRule({ WEBHOOK_ALLOWED_HOSTS: "example.com" }, "WEBHOOK_ALLOWED_HOSTS"))(request(hook.url))).toMatchObject({ status: 204 });
    // An unset allow-list in a deployment sends nowhere but loopback (review N8), a stored URL included.
    expect(await httpSender(systemClock, fetchImpl, egressRule({}, "WEBHOOK_ALLOWED_HOSTS"))(request("https://hooks.example.com/x"))).toMatchObject({
      error: expect.stringMatching(/^not sent: hooks\.example\.com is refused: WEBHOOK_ALLOWED_HOSTS is unset/),
    });
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it("explains Cloudflare's TLS statuses 525 and 526", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 526 } });
    expect((await send(request(hook.url))).error).toBe("HTTP 526 (Cloudflare: the receiver's TLS certificate is invalid)");
  });
});

describe("httpSender at the platform's subrequest limit (review B1)", () => {
  it("throws the runtime's 'Too many subrequests' as a SubrequestLimitError, not as the receiver's failure", async () => {
    const refused = (async () => {
      throw new Error("Too many subrequests.");
    }) as typeof fetch;
    await expect(httpSender(systemClock, refused, anyHost)(request("https://hooks.example/a"))).rejects.toBeInstanceOf(SubrequestLimitError);
  });

  it("sends nothing once the invocation's budget ended", async () => {
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const budget = new SubrequestBudget(2); // ends at 1 (80 %)
    const budgeted = httpSender(systemClock, budget.fetch(fetch), anyHost);
    expect(await budgeted(request(hook.url))).toMatchObject({ status: 204 });
    await expect(budgeted(request(hook.url))).rejects.toBeInstanceOf(SubrequestLimitError);
    expect(await hook.requests()).toHaveLength(1);
    expect(budget.ended).toBe(true);
  });
});
