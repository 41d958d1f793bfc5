/**
 * A subscription's delivery counters: attempts by outcome, retries, events delivered, dead letters,
 * and a histogram of attempt durations. Counted lazily from the delivery log
 * (delivery/delivery-log.ts keeps its newest attempts), so a delivery pays no statement for them.
 *
 * Guarantees:
 * - Every attempt is counted exactly once: `counted_n` (the last attempt counted) advances in the
 *   transaction that adds its counts, and counting runs before the delivery log is trimmed
 *   (`DeliveryLog`'s `beforeTrim`, once per TRIM_STEP attempts) and whenever metrics are read.
 * - Durable, only growing: Prometheus counters across evictions; deleting the subscription resets them.
 * - Outcomes are a closed set (DELIVERY_OUTCOMES); no label comes from a URL, a body or an error text.
 *
 * Cost: one read of the attempts since the last count and one UPDATE, per trim (every 100 attempts)
 * and per scrape; one UPDATE per dead-lettered batch (rare by definition).
 */
import { type Db, stmt } from "../sql.ts";
import type { NumberedAttempt } from "./delivery-log.ts";

export const DELIVERY_OUTCOMES = ["2xx", "3xx", "4xx", "5xx", "network", "timeout"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** Upper bounds of the latency histogram's buckets, in seconds (a 15 s attempt timeout is the most). */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15] as const;

export interface DeliveryCounts {
  attempts: Record<DeliveryOutcome, number>;
  /** Attempts after the first for their batch (redeliveries of dead letters included). */
  retries: number;
  /** Events acknowledged (a batch of n events acknowledged counts n). */
  eventsDelivered: number;
  /** Events dead-lettered. */
  deadLettered: number;
  /** Attempts per bucket of LATENCY_BUCKETS_SECONDS (not cumulative), the last for longer ones. */
  latencyBuckets: number[];
  latencySumSeconds: number;
}

export const emptyCounts = (): DeliveryCounts => ({
  attempts: { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, network: 0, timeout: 0 },
  retries: 0,
  eventsDelivered: 0,
  deadLettered: 0,
  latencyBuckets: new Array(LATENCY_BUCKETS_SECONDS.length + 1).fill(0),
  latencySumSeconds: 0,
});

export const DELIVERY_COUNTER_MIGRATIONS = [
  `CREATE TABLE delivery_metrics (id INTEGER PRIMARY KEY CHECK (id = 1), counted_n INTEGER NOT NULL, counts TEXT NOT NULL);
   INSERT INTO delivery_metrics (id, counted_n, counts) VALUES (1, 0, '${JSON.stringify(emptyCounts())}')`,
] as const;

const GET = stmt("deliveryCounters.get", "SELECT counted_n, counts FROM delivery_metrics WHERE id = 1");
const SET = stmt("deliveryCounters.set", "UPDATE delivery_metrics SET counted_n = ?, counts = ? WHERE id = 1");

/** What an attempt's status and error say about it (sender.ts writes "no answer within …" on a timeout). */
export function outcomeOf(status: number | null, error: string | null): DeliveryOutcome {
  if (status === null) return error?.startsWith("no answer within") ? "timeout" : "network";
  if (status >= 200 && status < 300) return "2xx";
  if (status >= 500) return "5xx";
  if (status >= 400) return "4xx";
  return "3xx";
}

function read(db: Db): { countedN: number; counts: DeliveryCounts } {
  const row = db.first<{ counted_n: number; counts: string }>(GET)!;
  return { countedN: row.counted_n, counts: { ...emptyCounts(), ...(JSON.parse(row.counts) as Partial<DeliveryCounts>) } };
}

/** Counts the attempts `log` recorded since the last count; inside a transaction. */
export function countDeliveriesInTx(db: Db, log: { after(n: number): NumberedAttempt[] }): DeliveryCounts {
  const { countedN, counts } = read(db);
  const attempts = log.after(countedN);
  if (attempts.length === 0) return counts;
  for (const { record } of attempts) {
    const outcome = outcomeOf(record.status, record.error);
    counts.attempts[outcome] += 1;
    if (record.attempt > 1) counts.retries += 1;
    if (outcome === "2xx") counts.eventsDelivered += record.eventIds.length;
    const seconds = record.durationMs / 1000;
    const bucket = LATENCY_BUCKETS_SECONDS.findIndex((le) => seconds <= le);
    counts.latencyBuckets[bucket === -1 ? LATENCY_BUCKETS_SECONDS.length : bucket]! += 1;
    counts.latencySumSeconds += seconds;
  }
  db.run(SET, attempts.at(-1)!.n, JSON.stringify(counts));
  return counts;
}

/** `events` events were dead-lettered; inside the transaction that moved them. */
export function countDeadLettersInTx(db: Db, events: number): void {
  const { countedN, counts } = read(db);
  counts.deadLettered += events;
  db.run(SET, countedN, JSON.stringify(counts));
}
