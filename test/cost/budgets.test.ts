/**
 * Rows per operation as budgets (issue 19): what Durable Object SQLite bills, measured by
 * test/cost/operations.ts with one custom indexer and 2,000 pods. Each ceiling is today's figure
 * (before any cut, BENCHMARKS.md "Cost") with about 10% room, so that a regression fails here;
 * when a change cuts rows, lower the ceiling to the new figure with the same room. Comments give
 * the figure measured and issue 19's target. Counts are deterministic: no timing is involved.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { type Cost, measureCosts } from "./operations.ts";

interface Budget {
  written: number;
  read: number;
}

const BUDGETS: Record<string, Budget> = {
  // 3.01 written, 2.14 read (object row 1 with its body and its key's index entry 1, its byNode entry 1, the log's segments 0.01: a row
  // per 256 events; was 5.02, then 3.01 with the object row keeping its entries and a log row per event). Target ≤ 2.2 not met: a
  // WITHOUT ROWID objects table (no key index: 2.01) made updates ~30% slower to ingest (BENCHMARKS.md "The log as segments")
  "list.object": { written: 3.3, read: 2.4 },
  // 3.0 written, 25 read (object 1, and per transaction the log's segment 1 and the progress row 1: lastSyncRV, the newest mark and
  // the object count in one; was 10.0 before index entries were written only when their values change, the log lost its prev_seq index,
  // and the per-batch rows became one). The floor of a one-event transaction: the object, and the transaction's two rows (update.batch100)
  "update.batch1": { written: 3.3, read: 27.5 },
  // 3.05 written, 25.7 read: the same update through the informer's loop (tick), whose per-step checks (an empty
  // queue, retention, the log's counts) wrote a row or two each before they wrote only what changed
  "update.loop": { written: 3.35, read: 28.3 },
  // 1.02 written, 6.8 read (the object 1; the log's segment and the progress row shared by 100; was 6.04, then 2.01 with a log row
  // per event); target ≤ 1.2, goal 1.05
  "update.batch100": { written: 1.12, read: 7.5 },
  // 0.14 written, 0.97 read (whole segments deleted: here one event a segment, so the head's step of 10 events is a
  // segment each and the step's UPDATE of the head; was 1.36, 17.6, then 1.0, 12.5 with a row per event); no target
  "retention.event": { written: 0.16, read: 1.1 },
  // 0.072 written, 0.26 read (per window of 32 acknowledgements: the position's UPDATE with their keys and attempts 1, and per 64 attempts a delivery-log row and its trim 2, the counters 0.3 per 100; was 8.01: delivery log 2 with its trim 1, a delivered key and its index entry 2, outbox put and delete 2, position 1); target ≤ 0.3, goal 0.1
  "delivery.steady": { written: 0.08, read: 0.29 },
  // 0 written, 8 read (a read that finds the event, and the idle step's read that finds nothing: the log's bounds, then its segments)
  "delivery.steady.feed": { written: 0, read: 8.8 },
  // 0.072 written, 0.23 read (the same per window of 32; was 4.21: a delivered key and its index entry 2, delivery log 1, its trim 1); target ≤ 0.3, goal 0.1
  "delivery.burst": { written: 0.08, read: 0.26 },
  // 0 written, 2.02 read
  "delivery.burst.feed": { written: 0, read: 2.3 },
  // 0 written, 0 read (the record is in memory)
  "poll.subscription": { written: 0, read: 1 },
  // 0 written, 4 read
  "poll.subscription.feed": { written: 0, read: 4.4 },
  // 0.24 written, 0.56 read (events one a second: the position's UPDATE per ~5 acknowledgements, WINDOW_MS apart, 0.2; the log's rows as above)
  "delivery.paced": { written: 0.27, read: 0.62 },
  // 0 written, 8 read
  "delivery.paced.feed": { written: 0, read: 8.8 },
  // 0.075 written, 0.23 read (each key not among the last 1,000 delivered: the window's 0.072, and a fold of 1,000 keys into the few segments of 2,000 that they fall in; 2.1 with a row a key, 1.1 with a row a key written in bulk)
  "delivery.distinct": { written: 0.083, read: 0.26 },
  // 0 written, 2.01 read
  "delivery.distinct.feed": { written: 0, read: 2.3 },
  // 1.6 written, 21.5 read a minute (the progress row per bookmark; was 2.93, 594); target ≤ 10 rows a minute
  "idle.informer.watch": { written: 1.8, read: 24 },
  // 0 written, 9 read (the object count is kept in the progress row; was 2,007: COUNT(*)); target: no O(objects) rows
  "status.informer": { written: 0, read: 10 },
  // 0 written, 14 read (was 2,012); target: no O(objects) rows
  "metrics.informer": { written: 0, read: 16 },
  // 1 written, 37 read: it counts the events appended since the last count (here the setup's 4,000, in 23 segments; a
  // scrape reads what arrived since the one before) from the segments' entries, once, where a count ran with every watch
  // step and wrote a row per batch; the log's bytes are kept as they change (was 2,000 read per scrape, then ~4,010 with
  // a log row per event); target: no O(objects) rows
  "metrics.informer.minute": { written: 1, read: 41 },
  // 0 written, 2 read
  "cron.informer": { written: 0, read: 3 },
  // 0 written, 1,007 read for 500 objects (a page reads its limit and one more at once; was 2,004: a batch of 500, then another to prove more follow)
  "k8s.listFirstPage": { written: 0, read: 1_110 },
  // 0 written, 1,006 read for 500 objects (was 1,671)
  "k8s.listNextPage": { written: 0, read: 1_110 },
  // 0 written, 11 read
  "k8s.watchStart": { written: 0, read: 12 },
  // 0 written, 0 read of its own (the informer's status call it makes is status.informer)
  "status.subscription": { written: 0, read: 1 },
  // 0 written, 3.2 read (the counters' row, the log's attempts since the last count, its newest row to number the ones in the subscription row; was 2)
  "metrics.subscription": { written: 0, read: 3.6 },
  // 0 written, 1 read
  "cron.subscription": { written: 0, read: 2 },
  // 1.6 written, 24.5 read a minute (was 2.93, 596); target ≤ 10 rows a minute
  "idle.informer": { written: 1.8, read: 27 },
  // 0 written, 1 read a minute (and 2 of the informer's, for its poll); target ≤ 10 rows a minute
  "idle.subscription": { written: 0, read: 2 },
};

describe("rows per operation (issue 19 budgets)", () => {
  let costs: Map<string, Cost>;
  beforeAll(async () => {
    costs = new Map((await measureCosts()).map((cost) => [cost.id, cost]));
  }, 120_000);

  it("has a budget for every operation measured", () => {
    expect(Object.keys(BUDGETS).sort()).toEqual([...costs.keys()].sort());
  });

  it.each(Object.entries(BUDGETS))("%s stays within its budget", (id, budget) => {
    const { written, read, statements } = costs.get(id)!;
    // The statements come with a failure: they say where the rows went.
    const where = statements.slice(0, 6).map((s) => `${s.name} ${round(s.written)}w ${round(s.read)}r`).join(", ");
    expect(written, `${id}: rows written (${where})`).toBeLessThanOrEqual(budget.written);
    expect(read, `${id}: rows read (${where})`).toBeLessThanOrEqual(budget.read);
  });
});

const round = (n: number) => Math.round(n * 100) / 100;
