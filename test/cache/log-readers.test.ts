/**
 * Who a storage ceiling's shrink holds the log for (src/cache/log-readers.ts): the oldest
 * subscription as its list stores it, and the oldest /k8s watch read of the last 10 minutes.
 */
import { describe, expect, it } from "vitest";
import { LogReaders, WATCH_READ_WINDOW_MS, WATCHERS_READER } from "../../src/cache/log-readers.ts";

describe("LogReaders", () => {
  it("holds for the oldest watch read of the last 10 minutes, and forgets older ones", () => {
    let subscription: { name: string; after: number } | undefined;
    const readers = new LogReaders(() => subscription);
    const t0 = Date.UTC(2026, 0, 1);
    expect(readers.readers(t0)).toEqual([]);
    readers.noteWatchRead(500, t0);
    readers.noteWatchRead(900, t0 + 1_000);
    readers.noteWatchRead(700, t0 + 5 * 60_000);
    subscription = { name: "subscription s1", after: 300 };
    expect(readers.readers(t0 + 5 * 60_000)).toEqual([subscription, { name: WATCHERS_READER, after: 500 }]);
    // The read at 500 leaves the window; the one at 700 is the oldest left.
    expect(readers.readers(t0 + WATCH_READ_WINDOW_MS + 2 * 60_000)).toEqual([subscription, { name: WATCHERS_READER, after: 700 }]);
    expect(readers.readers(t0 + 2 * WATCH_READ_WINDOW_MS)).toEqual([subscription]);
  });
});
