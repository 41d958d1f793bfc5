/**
 * k8s/consistent-reads.ts without an informer: what a read with no resourceVersion waits for and
 * answers — the cache at or past the upstream's RV at once, a wait bounded by whether the watch was
 * live, 504 only when the cache stays behind with no live watch, the cache as it is when the
 * upstream cannot say, and a sleeping informer woken first. Waits are faked: no time passes.
 */
import { describe, expect, it } from "vitest";
import { awaitConsistency, type ConsistencyDeps, LIVE_WATCH_GRACE_MS, UpstreamRevision } from "../../src/k8s/consistent-reads.ts";
import { FRESHNESS_WAIT_MS } from "../../src/k8s/watch-hub.ts";

function informer(o: { cache: string; upstream: string | undefined; live: boolean; reachedAfterWait?: string; liveAfterWait?: boolean; synced?: boolean }) {
  let cache = o.cache;
  let live = o.live;
  const calls: string[] = [];
  const deps: ConsistencyDeps = {
    synced: () => o.synced ?? true,
    cacheResourceVersion: () => cache,
    watchLive: () => live,
    wakeIfSleeping: async () => {
      calls.push("wake");
    },
    upstream: new UpstreamRevision(async () => {
      calls.push("upstream");
      return o.upstream;
    }),
    reaches: async (rv, waitMs) => {
      calls.push(`reach ${rv} within ${waitMs}`);
      if (o.reachedAfterWait !== undefined) cache = o.reachedAfterWait;
      if (o.liveAfterWait !== undefined) live = o.liveAfterWait;
    },
  };
  return { deps, calls };
}

describe("awaitConsistency", () => {
  it("answers at once when the cache is at or past the upstream's RV", async () => {
    const { deps, calls } = informer({ cache: "12", upstream: "12", live: true });
    expect(await awaitConsistency(deps)).toEqual({ current: "12" });
    expect(calls).toEqual(["wake", "upstream"]);
  });

  it("waits the watch cache's 3 s for an informer that was not watching (asleep, relisting), then answers the cache reached", async () => {
    const { deps, calls } = informer({ cache: "10", upstream: "15", live: false, reachedAfterWait: "15" });
    expect(await awaitConsistency(deps)).toEqual({ current: "15" });
    expect(calls).toEqual(["wake", "upstream", `reach 15 within ${FRESHNESS_WAIT_MS}`]);
  });

  it("gives a live watch only its grace, then answers the cache: a quiet resource's RV moves only at bookmarks", async () => {
    const { deps, calls } = informer({ cache: "10", upstream: "15", live: true });
    expect(await awaitConsistency(deps)).toEqual({ current: "10" });
    expect(calls).toEqual(["wake", "upstream", `reach 15 within ${LIVE_WATCH_GRACE_MS}`]);
  });

  it("is behind (the route's 504) when the cache did not reach it and no watch is live", async () => {
    const { deps } = informer({ cache: "10", upstream: "15", live: false, reachedAfterWait: "12" });
    expect(await awaitConsistency(deps)).toEqual({ behind: { target: "15", current: "12" } });
  });

  it("answers the cache as it is when the upstream cannot say its RV", async () => {
    const { deps, calls } = informer({ cache: "10", upstream: undefined, live: false });
    expect(await awaitConsistency(deps)).toEqual({ current: "10" });
    expect(calls).toEqual(["wake", "upstream"]);
  });

  it("asks nothing of an unsynced cache (its read answers 429)", async () => {
    const { deps, calls } = informer({ cache: "10", upstream: "15", live: false, synced: false });
    expect(await awaitConsistency(deps)).toEqual({ current: "10" });
    expect(calls).toEqual([]);
  });
});

describe("UpstreamRevision", () => {
  it("shares upstream reads: callers during a read join the next one, which starts after it", async () => {
    const started: Array<(rv: string) => void> = [];
    const upstream = new UpstreamRevision(() => new Promise<string>((resolve) => started.push(resolve)));
    const first = upstream.current();
    const during = [upstream.current(), upstream.current(), upstream.current()];
    expect(started).toHaveLength(1);
    started[0]!("10");
    expect(await first).toBe("10");
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toHaveLength(2);
    started[1]!("11");
    expect(await Promise.all(during)).toEqual(["11", "11", "11"]);
  });

  it("answers undefined when the upstream read fails, and reads again next time", async () => {
    let calls = 0;
    const upstream = new UpstreamRevision(async () => {
      calls++;
      if (calls === 1) throw new Error("unreachable");
      return "5";
    });
    expect(await upstream.current()).toBeUndefined();
    expect(await upstream.current()).toBe("5");
  });
});
