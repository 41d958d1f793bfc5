/**
 * /metrics and the status page serve a snapshot at most METRICS_SNAPSHOT_SECONDS old, per scope
 * (src/metrics/snapshot-cache.ts; issue 20): a scrape inside the window asks no object, a scoped
 * reader never gets a wider reader's snapshot, and 0 collects every time.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { SnapshotCache, snapshotMaxAgeMs } from "../../src/metrics/snapshot-cache.ts";
import { ADMIN, createSynced, unique } from "../helpers/clusters.ts";

describe("SnapshotCache", () => {
  it("serves a scope's snapshot while it is younger than the bound, and collects anew after", async () => {
    const cache = new SnapshotCache<number>();
    let collected = 0;
    const collect = async () => ++collected;
    expect(await cache.get("*", 0, 15_000, collect)).toBe(1);
    expect(await cache.get("*", 14_999, 15_000, collect)).toBe(1);
    expect(await cache.get('["a"]', 14_999, 15_000, collect)).toBe(2); // another scope: its own
    expect(await cache.get("*", 15_000, 15_000, collect)).toBe(3);
    expect(await cache.get("*", 15_001, 0, collect)).toBe(4); // 0: always fresh, nothing kept
    expect(await cache.get("*", 15_002, 0, collect)).toBe(5);
  });

  it("keeps at most 32 scopes, dropping the oldest", async () => {
    const cache = new SnapshotCache<string>();
    let collected = 0;
    for (let i = 0; i <= 32; i++) await cache.get(`s${i}`, 0, 1_000, async () => `v${collected++}`);
    expect(await cache.get("s32", 1, 1_000, async () => "again")).toBe("v32");
    expect(await cache.get("s0", 1, 1_000, async () => "again")).toBe("again");
  });

  it("reads METRICS_SNAPSHOT_SECONDS: 15 s unless set, whole seconds from 0 to 300, else a clear error", () => {
    expect(snapshotMaxAgeMs(undefined)).toBe(15_000);
    expect(snapshotMaxAgeMs("")).toBe(15_000);
    expect(snapshotMaxAgeMs("0")).toBe(0);
    expect(snapshotMaxAgeMs("300")).toBe(300_000);
    for (const bad of ["-1", "301", "1.5", "soon"]) expect(() => snapshotMaxAgeMs(bad)).toThrow(/METRICS_SNAPSHOT_SECONDS must be a whole number/);
  });
});

describe("GET /metrics with a snapshot kept", () => {
  const app = createApp();
  const scrape = async (seconds: string) => {
    const response = await app.request("http://localhost/metrics", { headers: ADMIN }, { ...env, METRICS_SNAPSHOT_SECONDS: seconds });
    expect(response.status).toBe(200);
    return response.text();
  };

  it("serves the same snapshot inside the window, and a new informer shows once it is collected again", async () => {
    const before = await scrape("15");
    const name = unique("snap");
    await createSynced(`/informers/${name}`);
    const cached = await scrape("15");
    expect(cached).toBe(before);
    expect(cached).not.toContain(`informer="${name}"`);
    expect(await scrape("0")).toContain(`informer="${name}"`);
  });

  it("answers a misconfigured window with a clear error", async () => {
    const response = await app.request("http://localhost/metrics", { headers: ADMIN }, { ...env, METRICS_SNAPSHOT_SECONDS: "forever" });
    expect(response.status).toBe(500);
    expect(await response.text()).toContain("METRICS_SNAPSHOT_SECONDS must be a whole number");
  });
});
