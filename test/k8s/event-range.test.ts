/**
 * EventRange (src/k8s/event-range.ts): what it keeps for the watchers that share it is bounded by
 * HELD_BYTES; past it, states are parsed and frames encoded again for each use, never dropped.
 */
import { describe, expect, it } from "vitest";
import type { LogEvent } from "../../src/cache/event-log.ts";
import { EventRange, HELD_BYTES } from "../../src/k8s/event-range.ts";
import { jsonFrame } from "../../src/k8s/watch-events.ts";

const event = (i: number, padding: number): LogEvent => {
  const object = JSON.stringify({ kind: "Pod", apiVersion: "v1", metadata: { name: `p${i}`, resourceVersion: String(100 + i) }, data: "x".repeat(padding) });
  return { seq: i + 1, type: "add", key: `ns/p${i}`, uid: `u${i}`, resourceVersion: String(100 + i), object, oldObject: null, initialList: false, finalStateUnknown: false, at: 0 };
};
const json = { key: "json", encode: (type: "ADDED" | "MODIFIED" | "DELETED", object: string) => jsonFrame(type, object) };

describe("EventRange", () => {
  it("keeps parsed states and frames up to HELD_BYTES, and does the work again past it", () => {
    const MIB = 1024 * 1024;
    const counters = { parsed: 0, framed: 0 };
    const range = new EventRange(Array.from({ length: 6 }, (_, i) => event(i, MIB)), counters);
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < 6; i++) expect(range.parsed(i).object().metadata.name).toBe(`p${i}`);
    }
    // Each parsed state counts twice its ~1 MiB text: those that fit are kept, the others parsed per use.
    const text = range.ordered[0]!.object!.length;
    const kept = Math.floor(HELD_BYTES / (2 * text));
    expect(counters.parsed).toBe(kept + 2 * (6 - kept));
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < 6; i++) expect(range.frame(i, "ADDED", json)).toBe(jsonFrame("ADDED", range.ordered[i]!.object!));
    }
    // Frames fill what the states left; the rest are encoded per use.
    const framesKept = Math.floor((HELD_BYTES - kept * 2 * text) / jsonFrame("ADDED", range.ordered[0]!.object!).length);
    expect(framesKept).toBeLessThan(6);
    expect(counters.framed).toBe(framesKept + 2 * (6 - framesKept));
  });

  it("keeps everything for events that fit: one parse and one frame each", () => {
    const counters = { parsed: 0, framed: 0 };
    const range = new EventRange(Array.from({ length: 50 }, (_, i) => event(i, 1_000)), counters);
    for (let pass = 0; pass < 3; pass++) for (let i = 0; i < 50; i++) range.frame(i, "ADDED", { key: "meta", encode: (_t, _o, parsed) => JSON.stringify(parsed().metadata) });
    expect(counters).toEqual({ parsed: 50, framed: 50 });
  });
});
