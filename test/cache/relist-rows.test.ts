/**
 * Rows per listed object of the two relist shapes (issue 28: relist), as budgets: the initial list,
 * applied page by page, and a later relist, staged and committed as one Replace. The pages come in
 * batches of 100 items, as KubeClient hands them over. Counts are deterministic (test/cost/meter.ts).
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { ListerWatcher } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { Meter, type Rows } from "../cost/meter.ts";

const PODS = 1_000;
const BATCH = 100;

const podsAt = (rv: (i: number) => number): KubeObject[] =>
  Array.from({ length: PODS }, (_, i) => pod({ name: `p-${String(i).padStart(4, "0")}`, namespace: `ns-${i % 10}`, rv: String(rv(i)) }));

/** One list answer in batches of BATCH; its watch never sends anything. */
function listing(items: KubeObject[], resourceVersion: string): ListerWatcher {
  return {
    async listPage(_request, onItems) {
      for (let i = 0; i < items.length; i += BATCH) onItems(items.slice(i, i + BATCH));
      return { resourceVersion, items: items.length };
    },
    async watch() {
      return { next: () => new Promise<never>(() => {}), cancel() {} };
    },
  };
}

const statements = (rows: Rows) => rows.statements.reduce((sum, s) => sum + s.runs, 0);

describe("rows per listed object (issue 28: relist)", () => {
  it("stay within their budgets for the initial list and for staged relists, changed or not", async () => {
    await withDb(async (db) => {
      const clock = new FakeClock();
      const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods" }, "relist")), clock, () => 0.5, () => {});
      const list = async (items: KubeObject[], rv: string): Promise<Rows> => {
        const meter = new Meter(db.rows);
        await meter.during(async () => {
          // The list's tick, then the loop's ticks that pop a staged Replace.
          for (let tick = 0; tick < 10; tick++) {
            await informer.tick(listing(items, rv), clock.now() + 50);
            const progress = informer.progress();
            if (progress.synced && progress.queueDepth === 0 && progress.cacheResourceVersion === rv) break;
          }
        });
        expect(informer.progress()).toMatchObject({ synced: true, objects: PODS, queueDepth: 0, cacheResourceVersion: rv });
        return meter.per(PODS);
      };

      // The initial list, applied directly: the object row (2 with its key), the entry of pods'
      // default `spec.nodeName` index (1; issue 30: every pod here is scheduled) and per batch of
      // 100 the log's segment and the progress row; 0.366 statements an object (~30 a batch of 100,
      // with the tick, and ~4 more for the index: the entries the keys had, and their inserts).
      const initial = await list(podsAt((i) => 100 + i), "5000");
      expect(initial.written).toBeLessThanOrEqual(3.1);
      expect(statements(initial)).toBeLessThanOrEqual(0.38);

      // A staged relist where every object changed: staging 2, delta and queue rows 4, the object
      // 1, their deletes 3 (10.0 written, 24.2 read; 26.2 with the index entries each key had, read
      // to compare: none is written, the nodes being the same).
      informer.restart();
      const changed = await list(podsAt((i) => 20_000 + i), "30000");
      expect(changed.written).toBeLessThanOrEqual(10.5);
      expect(changed.read).toBeLessThanOrEqual(26.5);

      // A staged relist where nothing changed: the staging rows and their delete, no delta, no
      // queue, no pop (3.0 written, 5.1 read; 9.0 and 24.1 when every listed object was queued).
      informer.restart();
      const unchanged = await list(podsAt((i) => 20_000 + i), "30000");
      expect(unchanged.written).toBeLessThanOrEqual(3.2);
      expect(unchanged.read).toBeLessThanOrEqual(5.5);
    });
  }, 60_000);
});
