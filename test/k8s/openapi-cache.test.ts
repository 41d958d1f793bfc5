/**
 * An isolate's OpenAPI documents (src/k8s/openapi-cache.ts, review N6): one read per key for
 * concurrent misses, failures answered to that read's waiters only, documents and 404s kept for
 * their time on a simulated clock, and the bytes held (kept and being read) within the bound.
 */
import { describe, expect, it } from "vitest";
import { DOCUMENT_TTL_MS, FLIGHT_DEADLINE_MS, NOT_FOUND_TTL_MS, OpenApiCache, type OpenApiSource } from "../../src/k8s/openapi-cache.ts";

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/** A loader answering a document of `bytes` bytes, counting its calls. */
function documents(bytes = 10) {
  const loader = {
    calls: 0,
    load: async (): Promise<OpenApiSource> => {
      loader.calls++;
      return { ok: true, contentType: "application/json", body: new Response(new Uint8Array(bytes).fill(loader.calls)).body! };
    },
  };
  return loader;
}

/** A body whose end the test decides: `send` bytes, then `end` or `fail`. */
function controlledBody() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    body,
    send: (bytes: number) => controller.enqueue(new Uint8Array(bytes)),
    end: () => controller.close(),
    fail: () => controller.error(new Error("connection reset")),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("OpenApiCache", () => {
  it("reads a key once for concurrent misses, and keeps it for DOCUMENT_TTL_MS", async () => {
    const time = clock();
    const cache = new OpenApiCache({ now: time.now });
    const loader = documents();
    const answers = await Promise.all(Array.from({ length: 20 }, () => cache.get("k", loader.load)));
    expect(loader.calls).toBe(1);
    for (const answer of answers) expect(answer).toMatchObject({ ok: true, body: new Uint8Array(10).fill(1) });
    time.advance(DOCUMENT_TTL_MS - 1);
    await cache.get("k", loader.load);
    expect(loader.calls).toBe(1);
    time.advance(1);
    expect(await cache.get("k", loader.load)).toMatchObject({ ok: true, body: new Uint8Array(10).fill(2) });
    expect(loader.calls).toBe(2);
  });

  it("keeps a 404 for NOT_FOUND_TTL_MS", async () => {
    const time = clock();
    const cache = new OpenApiCache({ now: time.now });
    let calls = 0;
    const missing = async (): Promise<OpenApiSource> => (calls++, { ok: false, status: 404, message: "GET /openapi/v3/apis/x/v1 answered 404" });
    for (let i = 0; i < 5; i++) expect(await cache.get("k", missing)).toMatchObject({ ok: false, status: 404 });
    expect(calls).toBe(1);
    time.advance(NOT_FOUND_TTL_MS);
    await cache.get("k", missing);
    expect(calls).toBe(2);
  });

  it("answers any other failure to the read's own waiters only: the next miss reads again", async () => {
    const cache = new OpenApiCache({ now: clock().now });
    let calls = 0;
    const failing = async (): Promise<OpenApiSource> => (calls++, { ok: false, status: 502, message: "connection refused" });
    const answers = await Promise.all([cache.get("k", failing), cache.get("k", failing), cache.get("k", failing)]);
    expect(answers.map((a) => a.ok)).toEqual([false, false, false]);
    expect(calls).toBe(1);
    const loader = documents();
    expect(await cache.get("k", loader.load)).toMatchObject({ ok: true });
    expect(loader.calls).toBe(1);
  });

  it("fails a read whose body breaks off, never keeping a truncated document", async () => {
    const cache = new OpenApiCache({ now: clock().now });
    const body = controlledBody();
    const answer = cache.get("k", async () => ({ ok: true, contentType: "application/json", body: body.body }));
    body.send(100);
    await settle();
    body.fail();
    expect(await answer).toMatchObject({ ok: false, status: 503, message: expect.stringMatching(/broke off: .*connection reset/) });
    expect(cache.bytes).toBe(0);
    const loader = documents();
    expect(await cache.get("k", loader.load)).toMatchObject({ ok: true });
  });

  it("holds at most its bytes, evicting the least recently used document", async () => {
    const time = clock();
    const cache = new OpenApiCache({ now: time.now, isolateBytes: 1_000 });
    const loaders = { a: documents(400), b: documents(400), c: documents(400) };
    await cache.get("a", loaders.a.load);
    await cache.get("b", loaders.b.load);
    await cache.get("a", loaders.a.load); // a is now the more recently used
    await cache.get("c", loaders.c.load);
    expect(cache.bytes).toBe(800);
    await cache.get("a", loaders.a.load);
    await cache.get("b", loaders.b.load);
    expect([loaders.a.calls, loaders.b.calls, loaders.c.calls]).toEqual([1, 2, 1]);
    expect(cache.bytes).toBeLessThanOrEqual(1_000);
  });

  it("counts documents being read: when reads in flight hold the room, another read fails rather than grow", async () => {
    const cache = new OpenApiCache({ now: clock().now, isolateBytes: 1_000 });
    const body = controlledBody();
    const first = cache.get("big", async () => ({ ok: true, contentType: "application/json", body: body.body }));
    body.send(700);
    await settle();
    expect(cache.bytes).toBe(700);
    expect(await cache.get("other", documents(400).load)).toMatchObject({ ok: false, status: 503, message: expect.stringMatching(/being read/) });
    body.end();
    expect(await first).toMatchObject({ ok: true });
    expect(cache.bytes).toBe(700);
    // Now kept, not in flight: it makes way for a new read.
    expect(await cache.get("other", documents(400).load)).toMatchObject({ ok: true });
    expect(cache.bytes).toBe(400);
  });

  it("abandons a read that has not ended within FLIGHT_DEADLINE_MS: the next miss reads again", async () => {
    const time = clock();
    const cache = new OpenApiCache({ now: time.now });
    let calls = 0;
    void cache.get("k", () => (calls++, new Promise<OpenApiSource>(() => {}))); // its request cancelled, say
    time.advance(FLIGHT_DEADLINE_MS - 1);
    const waiting = cache.get("k", documents().load);
    expect(calls).toBe(1);
    time.advance(1);
    const loader = documents();
    expect(await cache.get("k", loader.load)).toMatchObject({ ok: true });
    expect(loader.calls).toBe(1);
    // The request that waited on the abandoned read gives up at once.
    expect(await waiting).toMatchObject({ ok: false, status: 503 });
  });
});
