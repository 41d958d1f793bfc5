/**
 * endingCleanly (watch-body.ts): a watch body ends normally, at a line boundary, whatever its source
 * does (issue 27 item 4, review N5); it passes whole-frame chunks as they are, reads its source only
 * as its client reads, and a client that goes away cancels the source.
 */
import { describe, expect, it } from "vitest";
import { endingCleanly, READ_AHEAD_BYTES } from "../../src/k8s/watch-body.ts";
import { WatchBody } from "../helpers/watch-lines.ts";

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);
const line = (name: string) => `{"type":"ADDED","object":{"metadata":{"name":"${name}"}}}\n`;

/** A source that sends `chunks` as its client pulls them, then errors or ends as `then` says; it records pulls and a cancel. */
function scriptedSource(chunks: Uint8Array[], then: "error" | "end" | "wait") {
  const seen = { pulls: 0, cancelled: false };
  let next = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        seen.pulls++;
        if (next < chunks.length) return controller.enqueue(chunks[next++]!);
        if (then === "error") controller.error(new Error("ReadableStream received over RPC disconnected prematurely."));
        if (then === "end") controller.close();
        return new Promise<void>(() => {}); // "wait": nothing more, ever
      },
      cancel() {
        seen.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, seen };
}

describe("endingCleanly", () => {
  it.each([
    // The source breaks off after whole frames: a normal end after them.
    ["whole frames", [line("a") + line("b")], ["a", "b"]],
    // Mid-frame: the unfinished frame is dropped, the whole ones before it arrive.
    ["the middle of a frame", [line("a") + line("b").slice(0, 10)], ["a"]],
    // A frame in pieces arrives whole once its newline comes; one never finished is dropped.
    ["a frame in pieces", [line("a").slice(0, 5), line("a").slice(5, 20), line("a").slice(20) + line("b").slice(0, 7)], ["a"]],
    ["the first frame", [line("a").slice(0, 12)], []],
  ])("ends normally at a line boundary when its source breaks off after %s", async (_, chunks, names) => {
    const { stream } = scriptedSource(chunks.map(bytes), "error");
    let broke: unknown;
    const body = new WatchBody(endingCleanly(stream, (error) => (broke = error)));
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.partial).toBe("");
    expect(body.events.map((e) => e.object.metadata.name)).toEqual(names);
    expect(String(broke)).toContain("disconnected prematurely");
  });

  it("sends only whole lines at a normal end too", async () => {
    const { stream } = scriptedSource([bytes(line("a") + line("b").slice(0, 3))], "end");
    const body = new WatchBody(endingCleanly(stream));
    expect(await body.toEnd(1_000)).toBe("done");
    expect([body.lines.length, body.partial]).toEqual([1, ""]);
  });

  it("passes a chunk of whole frames as it is, reading at most READ_AHEAD_BYTES ahead of its client", async () => {
    // Frames of a quarter of the read-ahead each: the body may hold four before its client reads.
    const frame = (i: number) => bytes(line(`f${i}`.padEnd(READ_AHEAD_BYTES / 4 - 40, "x")));
    const chunks = Array.from({ length: 12 }, (_, i) => frame(i));
    const { stream, seen } = scriptedSource(chunks, "wait");
    const reader = endingCleanly(stream).getReader();
    expect((await reader.read()).value).toBe(chunks[0]); // the same bytes, not a copy
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Read ahead, but bounded: the client's pace still reaches the hub's queue (watch-queues.ts).
    expect(seen.pulls).toBeGreaterThan(1);
    expect(seen.pulls).toBeLessThanOrEqual(1 + 5);
    expect((await reader.read()).value).toBe(chunks[1]);
  });

  it("cancels its source when its client goes away", async () => {
    const { stream, seen } = scriptedSource([bytes(line("a"))], "wait");
    const body = new WatchBody(endingCleanly(stream));
    expect(await body.until(1)).toBeUndefined();
    void body.until(2); // a read waiting for the next frame
    await body.cancel();
    expect(seen.cancelled).toBe(true);
  });
});
