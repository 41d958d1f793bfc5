/**
 * The log's counts (src/metrics/log-counters.ts) through a real informer: every event counted once
 * whatever retention deletes, the bytes of the bodies still stored kept as they change (one row read
 * by a scrape), and nothing written per applied batch.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { Db } from "../../src/sql.ts";
import { withCountedDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

const storedBytes = (db: Db) =>
  db.first<{ bytes: number }>({
    name: "test.bytes",
    text: "SELECT (SELECT coalesce(sum(octet_length(bodies)), 0) FROM event_segments) + (SELECT coalesce(sum(octet_length(text)), 0) FROM event_segment_parts) AS bytes",
  })!.bytes;

describe("log counters", () => {
  it("count every event once and keep the stored bytes through retention, reading one row for the bytes", () =>
    withCountedDb((db, rowsRead) => {
      const spec = parseInformerSpec({ resource: "pods", retention: { maxEvents: 1_000 } }, "counted");
      const inf = new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5);
      let rv = 0;
      for (let round = 0; round < 30; round++) {
        const events = Array.from({ length: 100 }, (_, i) => ({ type: "MODIFIED" as const, object: pod({ name: `p${i % 40}`, rv: String(++rv), labels: { round: "x".repeat(round) } }) }));
        inf.applyWatch(events, String(rv));
        inf.compactLog();
        if (round % 7 === 0) {
          const metrics = inf.metrics();
          expect(metrics.logBytes, `round ${round}`).toBe(storedBytes(db));
        }
      }
      const metrics = inf.metrics();
      expect(metrics.events.add + metrics.events.update).toBe(3_000);
      expect(inf.log.bounds().head).toBeGreaterThan(1_000); // retention deleted events
      expect(metrics.logBytes).toBe(storedBytes(db));
      const before = rowsRead();
      inf.metrics();
      expect(rowsRead() - before).toBeLessThan(50); // not a pass over the log's ~1,000 rows
    }));
});
