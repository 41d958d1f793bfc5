// h. Cost (`npm run bench -- --only cost`; BENCHMARKS.md "Cost", issue 19): the SQLite rows each
// operation writes and reads, which is what Cloudflare bills a Durable Object's storage by, and
// their price. The rows are measured by test/cost/operations.ts (the same figures
// test/cost/budgets.test.ts holds as budgets) in a vitest run inside workerd
// (bench/cost/vitest.config.ts), which prints them as one COST_REPORT line; this prices them.
import path from "node:path";
import { round, run } from "./lib.mjs";
import { NODE, ROOT, log } from "./harness.mjs";

/**
 * Workers Paid, SQLite-backed Durable Objects (developers.cloudflare.com/durable-objects/platform/
 * pricing, issue 19): dollars per million rows beyond the monthly allowance (50 M rows written,
 * 25 G rows read, per account).
 */
export const PRICE_PER_MILLION_ROWS = { written: 1.0, read: 0.001 };
const MINUTES_PER_MONTH = 30 * 24 * 60;

export function costDeadlineMs() {
  return 10 * 60_000;
}

/** Dollars per million units of an operation of `rows` per unit. */
const perMillion = (rows) => rows.written * PRICE_PER_MILLION_ROWS.written + rows.read * PRICE_PER_MILLION_ROWS.read;

const add = (...parts) => ({ written: parts.reduce((a, p) => a + p.written, 0), read: parts.reduce((a, p) => a + p.read, 0) });

export async function runCost() {
  const vitest = path.join(ROOT, "node_modules", "vitest", "vitest.mjs");
  log("cost: measuring rows per operation inside workerd (bench/cost/rows.cost.ts)");
  const out = await run(NODE, [vitest, "run", "--config", "bench/cost/vitest.config.ts"], { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeoutMs: 5 * 60_000 });
  const line = out.split("\n").find((l) => l.startsWith("COST_REPORT "));
  if (!line) throw new Error(`the cost run printed no report:\n${out.slice(-3000)}`);
  const costs = JSON.parse(line.slice("COST_REPORT ".length)).map((cost) => ({ ...cost, dollarsPerMillion: perMillion(cost) }));
  const of = (id) => {
    const cost = costs.find((c) => c.id === id);
    if (!cost) throw new Error(`the cost report has no '${id}'`);
    return cost;
  };
  // At steady state every event appended is one day removed by retention: its removal is part of its price.
  const priced = (rows) => ({ written: round(rows.written, 2), read: round(rows.read, 2), dollars: round(perMillion(rows), 2) });
  const monthly = (rows) => ({ written: Math.round(rows.written * MINUTES_PER_MONTH), read: Math.round(rows.read * MINUTES_PER_MONTH), dollars: round((perMillion(rows) * MINUTES_PER_MONTH) / 1e6, 3) });
  const summary = {
    perMillionEvents: {
      informerQuiet: priced(add(of("update.batch1"), of("retention.event"))),
      informerBusy: priced(add(of("update.batch100"), of("retention.event"))),
      subscriptionSteady: priced(add(of("delivery.steady"), of("delivery.steady.feed"))),
      subscriptionBacklog: priced(add(of("delivery.burst"), of("delivery.burst.feed"))),
      subscriptionPaced: priced(add(of("delivery.paced"), of("delivery.paced.feed"))),
      subscriptionManyKeys: priced(add(of("delivery.distinct"), of("delivery.distinct.feed"))),
    },
    perMillionListedObjects: priced(of("list.object")),
    idlePerMonth: {
      informer: monthly(of("idle.informer")),
      // A subscription's idle minute, with its poll's read of the informer's log.
      subscription: monthly(add(of("idle.subscription"), of("poll.subscription.feed"))),
    },
  };
  const s = summary.perMillionEvents;
  log(`cost: per million events $${s.informerQuiet.dollars} per informer (one event a batch), $${s.subscriptionSteady.dollars} per subscription (events one at a time)`);
  return { ok: true, pricePerMillionRows: PRICE_PER_MILLION_ROWS, costs, summary };
}

/** The table's rows: its own header, one row per operation, then the prices that follow from them. */
export function costRows(result) {
  if (!result.ok) return [["cost", `FAILED: ${result.error}`]];
  const rows = [["rows per operation (test/cost/operations.ts)", "object", "written", "read", "$ per million", "most rows (written / read per unit)"]];
  for (const cost of result.costs) {
    const top = cost.statements
      .slice(0, 3)
      .filter((st) => st.written > 0 || st.read > 0)
      .map((st) => `${st.name} ${round(st.written, 2)}/${round(st.read, 1)}`)
      .join(", ");
    rows.push([cost.operation, cost.object, round(cost.written, 3), round(cost.read, 2), round(cost.dollarsPerMillion, 3), top]);
  }
  const { perMillionEvents: e, perMillionListedObjects: l, idlePerMonth: idle } = result.summary;
  const line = (what, p) => [what, "", p.written, p.read, p.dollars, ""];
  rows.push(
    ["", "", "", "", "", ""],
    ["price (rows and $ per million, retention's removal included)", "", "written", "read", "$", ""],
    line("an informer's event, one a batch", e.informerQuiet),
    line("an informer's event, 100 a batch", e.informerBusy),
    line("a subscription's delivery (maxBatchSize 1), one at a time", e.subscriptionSteady),
    line("a subscription's delivery (maxBatchSize 1), from a backlog", e.subscriptionBacklog),
    line("a subscription's delivery (maxBatchSize 1), one a second", e.subscriptionPaced),
    line("a subscription's delivery (maxBatchSize 1), of a key not delivered lately", e.subscriptionManyKeys),
    line("an object of the initial list", l),
    ["an idle informer, a month (rows, $)", "", idle.informer.written, idle.informer.read, idle.informer.dollars, ""],
    ["an idle subscription, a month (rows, $)", "", idle.subscription.written, idle.subscription.read, idle.subscription.dollars, ""],
  );
  return rows;
}
