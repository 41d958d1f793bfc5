/**
 * endingCleanly (watch-body.ts): a watch body ends normally, at a line boundary, whatever its source
 * does (issue 27 item 4, review N5); it passes whole-frame chunks as they are, reads its source only
 * as its client reads, and a client that goes away cancels the source.
 */
import { describe, expect, it } from "vitest";
import { endingCleanly } from "../../src/k8s/watch-body.ts";
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
    // The source breaks off after whole frames (what the hub writes): a normal end after them.
    ["whole frames", [line("a") + line("b")], ["a", "b"], ""],
    // A chunk cut mid-frame (not seen from the hub, which writes whole frames): passed as cut, then
    // a normal end; client-go takes the cut line as io.ErrUnexpectedEOF, a normal end too.
    ["the middle of a frame", [line("a") + line("b").slice(0, 10)], ["a"], line("b").slice(0, 10)],
    ["a frame in pieces", [line("a").slice(0, 5), line("a").slice(5, 20), line("a").slice(20) + line("b").slice(0, 7)], ["a"], line("b").slice(0, 7)],
  ])("ends normally when its source breaks off after %s", async (_, chunks, names, cut) => {
    const { stream } = scriptedSource(chunks.map(bytes), "error");
    let broke: unknown;
    const body = new WatchBody(endingCleanly(stream, (error) => (broke = error)));
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.events.map((e) => e.object.metadata.name)).toEqual(names);
    expect(body.partial).toBe(cut);
    expect(String(broke)).toContain("disconnected prematurely");
  });

  it("passes the source's bytes and its normal end as they are, reading a chunk or so ahead of its client", async () => {
    const chunks = Array.from({ length: 12 }, (_, i) => bytes(line(`f${i}`)));
    const { stream, seen } = scriptedSource(chunks, "end");
    const reader = endingCleanly(stream).getReader();
    expect((await reader.read()).value).toEqual(chunks[0]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Not the whole source: the client's pace still reaches the hub's queue (watch-queues.ts).
    expect(seen.pulls).toBeLessThan(chunks.length);
    const body = new WatchBody(new ReadableStream({ pull: async (controller) => { const r = await reader.read(); if (r.done) controller.close(); else controller.enqueue(r.value); } }));
    expect(await body.toEnd(1_000)).toBe("done");
    expect(body.events.map((e) => e.object.metadata.name)).toEqual(chunks.slice(1).map((_, i) => `f${i + 1}`));
  });

  it("cancels its source when its client goes away, at the source's next chunk", async () => {
    // As an RPC stream tells its sender of a cancel no sooner than its next write: the watcher of a
    // client that left ends at its next frame (a change or a bookmark), or at its deadline.
    let send!: (chunk: Uint8Array) => void;
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      start: (controller) => void (send = (chunk) => controller.enqueue(chunk)),
      cancel: () => void (cancelled = true),
    });
    const body = new WatchBody(endingCleanly(source));
    send(bytes(line("a")));
    expect(await body.until(1)).toBeUndefined();
    await body.cancel();
    send(bytes(line("b")));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cancelled).toBe(true);
  });
});
