/**
 * An OpenAPI document read from a cluster's API server (src/clusters/upstream-openapi.ts, review
 * N6): the factory that makes the request passes the body on as it comes instead of holding it
 * whole, and the body stays bounded in size, erroring (never ending early) past MAX_OPENAPI_BYTES.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { fetchOpenApi, MAX_OPENAPI_BYTES, OPENAPI_TIMEOUT_MS } from "../../src/clusters/upstream-openapi.ts";

const connection = { server: "https://api.example.com" };
/** A deployment's settings: its clusters' hosts allowed (net/egress.ts). */
const deployment = { CLUSTER_ALLOWED_HOSTS: "api.example.com" };

function answering(body: ReadableStream<Uint8Array> | string, headers: Record<string, string> = {}): typeof fetch {
  return async () => new Response(body, { headers: { "content-type": "application/json", ...headers } });
}

async function readAll(body: ReadableStream<Uint8Array>): Promise<number> {
  const reader = body.getReader();
  let length = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) length += read.value.byteLength;
  return length;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("fetchOpenApi", () => {
  it("answers with the body still arriving: nothing is buffered where the request is made", async () => {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const upstream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    controller.enqueue(new TextEncoder().encode('{"swagger":'));
    const answer = await fetchOpenApi("c", connection, deployment, "/openapi/v2", "application/json", answering(upstream));
    expect(answer).toMatchObject({ ok: true, contentType: "application/json" });
    if (!answer.ok) return;
    controller.enqueue(new TextEncoder().encode('"2.0"}'));
    controller.close();
    expect(await new Response(answer.body).json()).toEqual({ swagger: "2.0" });
  });

  it("errors a body past MAX_OPENAPI_BYTES rather than end it there", async () => {
    const mebibyte = new Uint8Array(1024 * 1024);
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull: (c) => {
        sent++;
        c.enqueue(mebibyte);
      },
    });
    const answer = await fetchOpenApi("c", connection, deployment, "/openapi/v2", "application/json", answering(endless));
    if (!answer.ok) throw new Error(answer.message);
    await expect(readAll(answer.body)).rejects.toThrow(/more than 24 MiB/);
    expect(sent * mebibyte.byteLength).toBeLessThan(MAX_OPENAPI_BYTES + 4 * mebibyte.byteLength);
  });

  it("errors a body that stalls OPENAPI_TIMEOUT_MS after its head, rather than hold the request", async () => {
    vi.useFakeTimers();
    const stalled = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new Uint8Array(10)) });
    const answer = await fetchOpenApi("c", connection, deployment, "/openapi/v2", "application/json", answering(stalled));
    if (!answer.ok) throw new Error(answer.message);
    const read = readAll(answer.body);
    vi.advanceTimersByTime(OPENAPI_TIMEOUT_MS);
    await expect(read).rejects.toThrow(/did not end within 20 s/);
  });

  it("refuses a Content-Length past MAX_OPENAPI_BYTES before reading any of it", async () => {
    const answer = await fetchOpenApi("c", connection, deployment, "/openapi/v2", "application/json", async () => {
      return new Response("{}", { headers: { "content-length": String(MAX_OPENAPI_BYTES + 1) } });
    });
    expect(answer).toMatchObject({ ok: false, status: 502, message: expect.stringMatching(/more than 24 MiB/) });
  });

  it("passes an upstream 404 on as 404, with its message", async () => {
    const answer = await fetchOpenApi("c", connection, deployment, "/openapi/v3/apis/x.example/v1", "application/json", async () =>
      Response.json({ kind: "Status", message: "not found" }, { status: 404 }),
    );
    expect(answer).toEqual({ ok: false, status: 404, message: "GET /openapi/v3/apis/x.example/v1 answered 404: not found" });
  });
});
