/**
 * WatchQueues (watch-queues.ts): what a queue closed by the byte budget does to its client's stream
 * (issue 27 item 4, review N5) — it ends normally after the chunks its client took, never broken
 * off, and what was queued and not taken is dropped at once, not when a stalled client reads it.
 */
import { describe, expect, it } from "vitest";
import { WatchQueues } from "../../src/k8s/watch-queues.ts";
import { WatchBody } from "../helpers/watch-lines.ts";

const encoder = new TextEncoder();
/** A chunk of `count` whole frames of about `bytes` each, named `name-i`. */
const frames = (name: string, count: number, bytes = 0) =>
  encoder.encode(Array.from({ length: count }, (_, i) => `{"type":"ADDED","object":{"metadata":{"name":"${name}-${i}"},"pad":"${"x".repeat(bytes)}"}}\n`).join(""));
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("WatchQueues", () => {
  it("ends a queue the budget closes normally, after the chunks its client took, and drops the rest at once", async () => {
    const queues = new WatchQueues(3_000);
    let shed = 0;
    const stalled = queues.create(() => shed++);
    const reading = new WatchBody(stalled.readable);
    void stalled.write(frames("taken", 2));
    expect(await reading.until(2)).toBeUndefined(); // the client took the first chunk
    // Then it stalls, and its queue grows past the budget: 4 chunks of about 1,000 bytes.
    const writes = [1, 2, 3, 4].map((i) => stalled.write(frames(`queued${i}`, 1, 1_000)).then(() => "taken", () => "dropped"));
    expect(shed).toBe(1);
    expect(queues.totalBytes).toBe(0); // dropped at once, though nobody read them
    // The client then sees a normal end after what it took: it re-watches from its last resourceVersion.
    expect(await reading.toEnd(1_000)).toBe("done");
    expect(reading.partial).toBe("");
    expect(reading.events.map((e) => e.object.metadata.name)).toEqual(["taken-0", "taken-1"]);
    // The hub's writes of what was dropped fail: its watcher learns it was closed.
    expect(await Promise.all(writes)).toEqual(["dropped", "dropped", "dropped", "dropped"]);
  });

  it("closes the queue holding most, not the one that reads", async () => {
    const queues = new WatchQueues(5_000);
    const closed: string[] = [];
    const reader = queues.create(() => closed.push("reader"));
    const staller = queues.create(() => closed.push("staller"));
    const reading = new WatchBody(reader.readable);
    for (let i = 0; i < 4; i++) {
      void reader.write(frames(`r${i}`, 1, 1_000)).catch(() => {});
      void staller.write(frames(`s${i}`, 1, 1_000)).catch(() => {});
      await reading.until(i + 1);
      await settle();
    }
    expect(closed).toEqual(["staller"]);
    expect(await new WatchBody(staller.readable).toEnd(1_000)).toBe("done");
    expect(reading.ended).toBeUndefined();
    expect(reading.events.map((e) => e.object.metadata.name)).toEqual(["r0-0", "r1-0", "r2-0", "r3-0"]);
  });
});
