/**
 * A relist's staged copy against the platform's storage limit (src/cache/stage-room.ts, review N5 /
 * B10b): workerd enforces no 10 GB, so the database's size and the limit are injected. A relist
 * over a cache that would not fit twice is refused before it stages anything, a staging that grows
 * to the line stops, and the status and a warn line say so; the cache stays as it was, and the
 * relist goes on once there is room.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { STAGE_RESERVE_FRACTION } from "../../src/cache/stage-room.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { ListerWatcher } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

const MB = 1_000_000;
const LIMIT = 1_000 * MB;

const pods = (rv: number): KubeObject[] => Array.from({ length: 20 }, (_, i) => pod({ name: `p${i}`, rv: String(rv + i) }));

/** One list answer in two pages of ten (`onPage` runs between them); its watch never sends anything. */
function listing(items: KubeObject[], resourceVersion: string, onPage: () => void = () => {}): ListerWatcher {
  return {
    async listPage(_request, onItems) {
      onItems(items.slice(0, 10));
      onPage();
      onItems(items.slice(10));
      return { resourceVersion, items: items.length };
    },
    async watch() {
      return { next: () => new Promise<never>(() => {}), cancel() {} };
    },
  };
}

describe("a relist's staged copy against the storage limit", () => {
  afterEach(() => vi.restoreAllMocks());

  it("is refused when the database and an estimate of the copy would pass the limit, said in the status and a warn line", async () => {
    expect(STAGE_RESERVE_FRACTION).toBe(0.05);
    await withDb(async (db) => {
      const warnings: string[] = [];
      vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warnings.push(String(line)));
      vi.spyOn(console, "error").mockImplementation(() => {});
      const clock = new FakeClock();
      let bytes = 10 * MB;
      const settings = { ...informerSettings(parseInformerSpec({ resource: "pods" }, "stage")), storage: { bytes: () => bytes, ceilingBytes: 700 * MB, limitBytes: LIMIT } };
      const informer = new Informer(db, settings, clock, () => 0.5, () => {}, { cluster: "default", informer: "stage" });
      // The initial list is applied page by page (nothing staged): no check.
      await informer.tick(listing(pods(100), "200"), clock.now() + 50);
      expect(informer.progress()).toMatchObject({ synced: true, objects: 20, cacheResourceVersion: "200" });

      // A relist over a cache of about 500 MB: with 500 MB more staged it would pass 950 MB (the limit less 5%).
      bytes = 500 * MB;
      informer.restart();
      await expect(informer.tick(listing(pods(1_000), "2000"), clock.now() + 50)).rejects.toThrow(/relist refused/);
      const refused = informer.progress();
      expect(refused.lastError).toMatch(/^relist refused: staging a copy of the cache \(about \d+ bytes\) on a database of 500000000 bytes would pass 950000000 bytes/);
      expect(refused.objects).toBe(20); // the cache is as it was
      expect(informer.lastFailure()).toMatchObject({ reason: "Storage" });
      expect(db.first<{ n: number }>(stmt("test.staged", "SELECT count(*) AS n FROM fifo_staging"))!.n).toBe(0);
      expect(warnings.map((line) => JSON.parse(line))).toContainEqual(expect.objectContaining({ msg: "relist refused: no room to stage it", informer: "stage" }));

      // Room again (compaction, a smaller cache): the relist goes on after its backoff.
      bytes = 100 * MB;
      clock.advance(60_000);
      for (let tick = 0; tick < 5 && informer.progress().cacheResourceVersion !== "2000"; tick++) {
        await informer.tick(listing(pods(1_000), "2000"), clock.now() + 50);
        clock.advance(60_000);
      }
      expect(informer.progress()).toMatchObject({ synced: true, cacheResourceVersion: "2000", lastError: null });
    });
  });

  it("stops a staging that grows to the line between pages", async () => {
    await withDb(async (db) => {
      vi.spyOn(console, "warn").mockImplementation(() => {});
      vi.spyOn(console, "error").mockImplementation(() => {});
      const clock = new FakeClock();
      let bytes = 10 * MB;
      const settings = { ...informerSettings(parseInformerSpec({ resource: "pods" }, "stage-pages")), storage: { bytes: () => bytes, ceilingBytes: 700 * MB, limitBytes: LIMIT } };
      const informer = new Informer(db, settings, clock, () => 0.5, () => {});
      await informer.tick(listing(pods(100), "200"), clock.now() + 50);
      informer.restart();
      // The first page staged, the database then at the line: the second page is refused.
      await expect(informer.tick(listing(pods(1_000), "2000", () => void (bytes = 960 * MB)), clock.now() + 50)).rejects.toThrow(/relist refused/);
      expect(informer.progress().lastError).toMatch(/^relist refused: the database's 960000000 bytes passed 950000000 bytes while staging/);
      expect(informer.progress().objects).toBe(20);
    });
  });
});
