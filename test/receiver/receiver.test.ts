// The fake webhook receiver, driven from workerd over HTTP as webhook delivery will use it: scripted
// statuses, headers, delays, hangs, broken connections, a port that goes down and up, and the record
// of every request.
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { ReceiverEndpoint, ReceiverError } from "./client.ts";

const BASE = env.RECEIVER_URL;

async function statuses(url: string, count: number): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(url, { method: "POST", body: `#${i}` });
    await response.arrayBuffer();
    result.push(response.status);
  }
  return result;
}

describe("fake webhook receiver", () => {
  it("answers the script's statuses in order, then the default (204 unless set)", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ status: 500 }, { status: 503 }, { status: 200 }], default: { status: 202 } });
    expect(hook.url).toBe(`${BASE}/hooks/${hook.id}`);
    expect(await statuses(hook.url, 5)).toEqual([500, 503, 200, 202, 202]);
    expect((await hook.requests()).map((r) => r.outcome)).toEqual([500, 503, 200, 202, 202]);

    const plain = await ReceiverEndpoint.create(BASE);
    expect(await statuses(plain.url, 2)).toEqual([204, 204]);
  });

  it("replaces script and default with setBehaviour, starting the script over", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ status: 500 }, { status: 500 }] });
    expect(await statuses(hook.url, 1)).toEqual([500]);
    const info = await hook.setBehaviour({ script: [{ status: 410 }], default: { status: 200 } });
    expect(info).toMatchObject({ id: hook.id, scriptRemaining: 1, total: 1 });
    expect(await statuses(hook.url, 3)).toEqual([410, 200, 200]);
    await hook.setBehaviour({});
    expect(await statuses(hook.url, 1)).toEqual([204]);
  });

  it("returns the step's headers and body, e.g. Retry-After", async () => {
    const hook = await ReceiverEndpoint.create(BASE, {
      script: [{ status: 429, headers: { "retry-after": "3", "x-extra": "yes" }, body: "slow down" }],
    });
    const response = await fetch(hook.url, { method: "POST", body: "{}" });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(response.headers.get("x-extra")).toBe("yes");
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await response.text()).toBe("slow down");
  });

  it("waits delayMs before answering", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ status: 200, delayMs: 200 }] });
    const started = Date.now();
    const response = await fetch(hook.url, { method: "POST", body: "x" });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("records a request on arrival, before its delay", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ status: 200, delayMs: 60_000 }] });
    const abort = new AbortController();
    let answered = false;
    const pending = fetch(hook.url, { method: "POST", body: "x", signal: abort.signal }).then(
      () => (answered = true),
      () => undefined,
    );
    const requests = await hook.waitForRequests(1, { timeoutMs: 10_000 });
    expect(requests.map((r) => r.body)).toEqual(["x"]);
    expect(answered, "the answer is still held").toBe(false);
    abort.abort();
    await pending;
  });

  it("hangs: never answers, so the client's timeout aborts the request; the next request gets the default", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ hang: true }] });
    const started = Date.now();
    const error = await fetch(hook.url, { method: "POST", body: "x", signal: AbortSignal.timeout(300) }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.name).toMatch(/TimeoutError|AbortError/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await hook.requests()).map((r) => r.outcome)).toEqual(["hang"]);
    // The abort closed the connection, and the receiver let go of the request.
    await vi.waitFor(async () => expect((await hook.info()).hanging).toBe(0), { timeout: 1000, interval: 20 });
    expect(await statuses(hook.url, 1)).toEqual([204]);
  });

  it("drops hanging requests when the endpoint is removed", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { default: { hang: true } });
    // Settled into a value at once, so the rejection is never unhandled while the test awaits other calls.
    const pending = fetch(hook.url, { method: "POST", body: "x" }).then(
      (response) => `answered ${response.status}`,
      (error: unknown) => error,
    );
    await hook.waitForRequests(1, { timeoutMs: 1000 });
    expect((await hook.info()).hanging).toBe(1);
    await hook.remove();
    expect(await pending).toBeInstanceOf(Error);
  });

  it("destroys the socket without answering: fetch rejects", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ destroy: true }, { destroy: true, delayMs: 50 }] });
    await expect(fetch(hook.url, { method: "POST", body: "a" })).rejects.toThrow();
    await expect(fetch(hook.url, { method: "POST", body: "b" })).rejects.toThrow();
    expect(await statuses(hook.url, 1)).toEqual([204]);
    const requests = await hook.requests();
    expect(requests.map((r) => [r.body, r.outcome])).toEqual([
      ["a", "destroy"],
      ["b", "destroy"],
      ["#0", 204],
    ]);
  });

  it("takes a dedicated port down (connection refused) and up again on the same URL", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { dedicatedPort: true });
    expect(new URL(hook.url).port).not.toBe(new URL(BASE).port);
    expect(new URL(hook.url).pathname).toBe(`/hooks/${hook.id}`);
    expect(await statuses(hook.url, 1)).toEqual([204]);

    expect(await hook.down()).toMatchObject({ up: false, url: hook.url });
    await expect(fetch(hook.url, { method: "POST", body: "down" })).rejects.toThrow();
    expect(await hook.up()).toMatchObject({ up: true, url: hook.url });
    expect(await statuses(hook.url, 2)).toEqual([204, 204]);
    // The refused request never reached the receiver.
    expect((await hook.requests()).map((r) => r.body)).toEqual(["#0", "#0", "#1"]);

    // Only the endpoint's own path is served on its port.
    const other = await fetch(`${new URL(hook.url).origin}/hooks/someone-else`);
    expect(other.status).toBe(404);
    await other.arrayBuffer();

    await hook.remove();
    await expect(fetch(hook.url, { method: "POST", body: "gone" })).rejects.toThrow();
  });

  it("answers 409 for down/up on an endpoint without a dedicated port", async () => {
    const hook = await ReceiverEndpoint.create(BASE);
    await expect(hook.down()).rejects.toThrow(/failed with 409: .*dedicated/);
  });

  it("records every request: method, path with query, lower-cased headers, body text, arrival time, outcome", async () => {
    const hook = await ReceiverEndpoint.create(BASE, { script: [{ status: 500 }] });
    const before = Date.now();
    const payload = JSON.stringify({ type: "ADDED", object: { metadata: { name: "p1" } } });
    const first = await fetch(`${hook.url}?attempt=1`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Webhook-Id": "msg_1", "X-Custom": "A" },
      body: payload,
    });
    await first.arrayBuffer();
    const second = await fetch(`${hook.url}/sub/path`, { method: "PUT", body: "ünïcode" });
    await second.arrayBuffer();

    const requests = await hook.waitForRequests(2, { timeoutMs: 1000 });
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({
      index: 0,
      method: "POST",
      path: `/hooks/${hook.id}?attempt=1`,
      headers: { "content-type": "application/json", "webhook-id": "msg_1", "x-custom": "A" },
      body: payload,
      outcome: 500,
    });
    expect(requests[0]!.receivedAt).toBeGreaterThanOrEqual(before - 5);
    expect(requests[0]!.receivedAt).toBeLessThanOrEqual(Date.now() + 5);
    expect(requests[1]).toMatchObject({ index: 1, method: "PUT", path: `/hooks/${hook.id}/sub/path`, body: "ünïcode", outcome: 204 });

    expect(await hook.requestsResult(1)).toEqual({ requests: [requests[1]], total: 2 });
    expect(await hook.requests(2)).toEqual([]);
  });

  it("waitForRequests rejects with how many arrived", async () => {
    const hook = await ReceiverEndpoint.create(BASE);
    await statuses(hook.url, 1);
    await expect(hook.waitForRequests(3, { timeoutMs: 100 })).rejects.toThrow(/at least 3 request\(s\).*within 100 ms, but 1 arrived/);
  });

  it("answers 404 JSON for an unknown or removed endpoint, on /hooks and the control API", async () => {
    const unknown = await fetch(`${BASE}/hooks/no-such-endpoint`, { method: "POST", body: "x" });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get("content-type")).toBe("application/json");
    expect(await unknown.json()).toEqual({ error: "NotFound", message: 'no endpoint "no-such-endpoint"' });

    const ghost = new ReceiverEndpoint(BASE, { id: "no-such-endpoint", url: `${BASE}/hooks/no-such-endpoint` });
    const error = await ghost.requests().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReceiverError);
    expect((error as ReceiverError).status).toBe(404);
    expect((error as ReceiverError).message).toBe('receiver: requests of no-such-endpoint failed with 404: no endpoint "no-such-endpoint"');

    const hook = await ReceiverEndpoint.create(BASE);
    await hook.remove();
    const removed = await fetch(hook.url, { method: "POST", body: "x" });
    expect(removed.status).toBe(404);
    await removed.arrayBuffer();
    await expect(hook.remove()).rejects.toThrow(/failed with 404/);
  });

  it("rejects an invalid script with 400 and says what is wrong", async () => {
    await expect(ReceiverEndpoint.create(BASE, { script: [{ status: 204 }, { status: 42 }] })).rejects.toThrow(
      /creating an endpoint failed with 400: script\[1\]\.status must be an integer from 200 to 599/,
    );
    await expect(ReceiverEndpoint.create(BASE, { default: { status: 200, headers: { "retry-after": 3 as unknown as string } } })).rejects.toThrow(
      /400: default\.headers\["retry-after"\] must be a string/,
    );
  });
});
