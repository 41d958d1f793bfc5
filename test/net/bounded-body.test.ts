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
    expect(start).toEqual({ text: "a".repeat(4 * 1024), exceeded: true });
    // The bound fits in the first chunk: no more than one more was ever asked for.
    expect(seen.chunks).toBeLessThanOrEqual(2);
    expect(seen.cancelled).toBe(true);
  });

  it("answers a body under its bound whole, not exceeded", async () => {
    expect(await readBodyStart(new Response("short"), 4 * 1024)).toEqual({ text: "short", exceeded: false });
  });
});
