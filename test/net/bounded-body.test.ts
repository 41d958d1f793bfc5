import { describe, expect, it } from "vitest";
import { readBodyStart } from "../../src/net/bounded-body.ts";

const CHUNK = 16 * 1024;

/** An endless body of CHUNK-byte chunks, made only when pulled; counts them and sees its cancel. */
function endlessBody() {
  const seen = { chunks: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        seen.chunks++;
        controller.enqueue(new Uint8Array(CHUNK).fill(0x61));
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(body), seen };
}

describe("readBodyStart", () => {
  it("reads an endless body up to its bound and cancels the rest unread", async () => {
    const { response, seen } = endlessBody();
    const start = await readBodyStart(response, 4 * 1024);
    expect(start).toEqual({ text: "a".repeat(4 * 1024), exceeded: true, expired: false });
    // The bound fits in the first chunk: no more than one more was ever asked for.
    expect(seen.chunks).toBeLessThanOrEqual(2);
    expect(seen.cancelled).toBe(true);
  });

  it("answers a body under its bound whole, not exceeded", async () => {
    expect(await readBodyStart(new Response("short"), 4 * 1024)).toEqual({ text: "short", exceeded: false, expired: false });
  });

  it("stops at its deadline with what arrived, and cancels the rest unread (review A9a)", async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode("a trick")), // and nothing more, ever
      cancel: () => void (cancelled = true),
    });
    const deadline = new AbortController();
    const reading = readBodyStart(new Response(body), 4 * 1024, deadline.signal);
    await new Promise((resolve) => setTimeout(resolve, 0)); // the start is read; the next read waits
    deadline.abort();
    expect(await reading).toEqual({ text: "a trick", exceeded: false, expired: true });
    expect(cancelled).toBe(true);
  });

  it("reads nothing past a deadline that already passed", async () => {
    const deadline = AbortSignal.abort();
    expect(await readBodyStart(new Response(new ReadableStream({ pull: () => new Promise(() => {}) })), 4 * 1024, deadline)).toEqual({ text: "", exceeded: false, expired: true });
  });
});
