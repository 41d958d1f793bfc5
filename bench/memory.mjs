#!/usr/bin/env node
// Memory while catching up (issue 27 item 3; DESIGN invariant 11): the live V8 heap, after a full
// collection, while a /k8s watcher (the hub's path: WatchBatches, EventRange) and a webhook
// subscription (the feed's path: FeedHost.readLog) catch up from 40,000 changes back.
//
// Runs our modules in Node 24 (type stripping), with node:sqlite's DatabaseSync standing in for a
// Durable Object's SQL handle (src/sql.ts SqlStorageLike). Same V8 as workerd, so what a string
// pins is the same; what is not measured here is workerd's own overhead.
//
//   node --expose-gc bench/memory.mjs [--src DIR] [--pods 10000] [--changes 40000] [--bytes 3000]
//                                     [--tx 100] [--reads 1] [--run-order]
//
// The log: `pods` adds (one transaction per `tx`), then `changes` updates of pods picked at random
// (seeded), `tx` per transaction, so each update's old object is a reference into the segment of the
// pod's previous event (log-segment.ts), as processDeltas writes them. Marks every 1,000 events
// (cache-progress.ts MARK_SPACING: watch-only runs merged). Then, from `changes` back:
//   watcher:      WatchBatches.next until the tail, each range's chunks encoded (what a plain watch sends),
//                 the hub holding what it holds (its recent buffer, four ranges);
//   subscription: FeedHost.readLog(after, 1000) until the tail, the last page held (what fill holds).
// After every step: global.gc(), then heapUsed. Reported: the peak over the baseline (log built,
// nothing read), and the time of each path's catch-up without collections (best of `reads`).
// With --run-order: one long run instead (a relist's: `changes` events, RVs far from log order, one mark
// at its end), and only what readInOrder holds while it sorts the run and the time of its first page.
import { DatabaseSync } from "node:sqlite";
import path from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";

if (typeof globalThis.gc !== "function") throw new Error("run with node --expose-gc");
const { values: args } = parseArgs({
  options: {
    src: { type: "string", default: path.join(import.meta.dirname, "..", "src") },
    pods: { type: "string", default: "10000" },
    changes: { type: "string", default: "40000" },
    bytes: { type: "string", default: "3000" },
    tx: { type: "string", default: "100" },
    reads: { type: "string", default: "1" },
    "run-order": { type: "boolean", default: false },
  },
});
const [pods, changes, bodyBytes, perTx, reads] = ["pods", "changes", "bytes", "tx", "reads"].map((k) => Number(args[k]));
const load = (file) => import(pathToFileURL(path.join(path.resolve(args.src), file)).href);
const { Db, migrate } = await load("sql.ts");
const { EventLog, EVENT_LOG_MIGRATIONS } = await load("cache/event-log.ts");
const { WatchBatches } = await load("k8s/watch-batches.ts");
const { FeedHost } = await load("delivery/feed-host.ts");

/** DatabaseSync as the Durable Object's `ctx.storage` (sql.exec cursors read to the end, transactionSync). */
function storage(sqlite) {
  let depth = 0;
  return {
    sql: {
      exec(text, ...bindings) {
        const statement = sqlite.prepare(text);
        const returns = statement.columns().length > 0;
        const rows = returns ? statement.all(...bindings) : [];
        const written = returns ? 0 : Number(statement.run(...bindings).changes);
        return { toArray: () => rows, rowsRead: rows.length, rowsWritten: written };
      },
    },
    transactionSync(fn) {
      const name = `tx${depth++}`;
      sqlite.exec(`SAVEPOINT ${name}`);
      try {
        const result = fn();
        sqlite.exec(`RELEASE ${name}`);
        return result;
      } catch (error) {
        sqlite.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
        throw error;
      } finally {
        depth--;
      }
    },
  };
}

/** A seeded generator (mulberry32): the same log every run. */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const filler = "x".repeat(bodyBytes);
const body = (key, rv) => JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: key, namespace: "default", resourceVersion: String(rv) }, spec: { filler } });

const db = new Db(storage(new DatabaseSync(":memory:")));
migrate(db, "eventLog", EVENT_LOG_MIGRATIONS);
const log = new EventLog(db);
const latest = new Map(); // key -> seq of its newest event
const marks = [];
let rv = 1000;
const next = random(27);

/** One transaction of events, as processDeltas appends them; a mark after every 1,000 events. */
function append(batch) {
  db.transaction(() => {
    let seq = log.nextSeq();
    log.appendInTx(
      batch.map((key) => {
        const before = latest.get(key);
        latest.set(key, seq);
        const v = rv++;
        return { seq: seq++, type: before === undefined ? "add" : "update", key, uid: `uid-${key}`, resourceVersion: String(v), body: body(key, v), oldBody: before === undefined ? null : { seq: before }, initialList: false, finalStateUnknown: false, at: 0 };
      }),
    );
  });
  const { tail } = log.bounds();
  if (marks.length === 0 || tail - marks.at(-1) >= 1000) marks.push(tail);
}

const keys = Array.from({ length: pods }, (_, i) => `default/pod-${String(i).padStart(6, "0")}`);
const buildStart = performance.now();
for (let i = 0; i < pods; i += perTx) append(keys.slice(i, i + perTx));
const start = log.bounds().tail;
if (args["run-order"]) {
  // A relist's run: every pod (and more, round after round) in key order, RVs not in log order.
  const order = Array.from({ length: changes }, (_, i) => keys[(i * 7919) % pods]);
  const rvs = Array.from({ length: changes }, (_, i) => start + 1000 + ((i * 104729) % changes));
  db.transaction(() => {
    let seq = log.nextSeq();
    for (let i = 0; i < changes; i += perTx) {
      log.appendInTx(
        order.slice(i, i + perTx).map((key, j) => {
          const before = latest.get(key);
          latest.set(key, seq);
          const v = rvs[i + j];
          return { seq: seq++, type: "update", key, uid: `uid-${key}`, resourceVersion: String(v), body: body(key, v), oldBody: { seq: before }, initialList: false, finalStateUnknown: false, at: 0 };
        }),
      );
    }
  });
  marks.push(log.bounds().tail);
} else {
  for (let done = 0; done < changes; done += perTx) append(Array.from({ length: Math.min(perTx, changes - done) }, () => keys[Math.floor(next() * pods)]));
}
const buildMs = performance.now() - buildStart;
const { tail } = log.bounds();
if (marks.at(-1) !== tail) marks.push(tail); // the cache is complete at the tail: watchers reach it

/** The last mark within `span` after `after`, else the first after it (Informer.boundaryAfter). */
function boundaryAfter(after, span) {
  let found;
  for (const mark of marks) {
    if (mark <= after) continue;
    if (mark <= after + span) found = mark;
    else return found ?? mark;
  }
  return found;
}

/** The log being read: a fresh EventLog over the same rows for each pass (nothing decoded yet). */
let reading = log;
const source = {
  incarnation: log.incarnation(),
  read: (after, limit, maxBytes) => reading.read(after, limit, maxBytes),
  bounds: () => reading.bounds(),
  boundaryAfter,
  readInOrder: (after, end, skip, limit) => reading.readInOrder(after, end, skip, limit),
};

const live = () => {
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};

/** A watcher from `start` to the tail through a hub of its own; `measure` after each batch. */
async function watcher(measure) {
  const batches = new WatchBatches(() => source, { parsed: 0, framed: 0 });
  let cursor = { after: start, skip: 0 };
  let events = 0;
  for (;;) {
    const got = await batches.next(cursor, false);
    if (got === undefined || got === "expired") break;
    got.range.chunks();
    events += got.range.ordered.length;
    cursor = got.next;
    measure();
  }
  return { events, held: batches };
}

/** A subscription from `start` to the tail: feed reads of 1,000, the last page held. */
function subscription(measure) {
  const feed = new FeedHost({ subscribers: () => undefined, send: async () => {}, budget: () => ({ take: () => true, end: () => {} }), who: () => undefined, clock: { now: () => 0 } });
  let after = start;
  let page;
  let events = 0;
  while (after < tail) {
    page = undefined; // the previous page is released before the next read, as fill does
    page = feed.readLog(reading, after, 1000);
    events += page.events.length;
    after = page.events.at(-1).seq;
    measure();
  }
  return { events, held: page };
}

const MB = (bytes) => (bytes / 1e6).toFixed(1);
const report = {};
if (args["run-order"]) {
  // What sorting the run holds: the live heap when readInOrder sorts it (every decoded entry, or
  // only what is kept of each, is reachable then), sampled by the sort itself; and the time of
  // the first page, the sort included.
  reading = new EventLog(db);
  const baseline = live();
  let atSort = 0;
  const TypedArray = Object.getPrototypeOf(Uint32Array.prototype);
  const sorts = [Array.prototype, TypedArray].map((proto) => [proto, proto.sort]);
  for (const [proto, sort] of sorts) {
    proto.sort = function (...rest) {
      if (this.length > 1000) atSort = Math.max(atSort, live() - baseline);
      return sort.apply(this, rest);
    };
  }
  reading.readInOrder(start, tail, 0, 16);
  for (const [proto, sort] of sorts) proto.sort = sort;
  reading = new EventLog(db);
  const t0 = performance.now();
  reading.readInOrder(start, tail, 0, 16);
  report.sort = { run: tail - start, liveAtSortMB: Number(MB(atSort)), firstPageMs: Math.round(performance.now() - t0) };
}
// With --run-order only the sort is measured: the walks are the default run's.
for (const [name, walk] of args["run-order"] ? [] : [
  ["watcher", watcher],
  ["subscription", subscription],
]) {
  reading = new EventLog(db);
  const baseline = live();
  let peak = 0;
  let steps = 0;
  const result = await walk(() => {
    steps++;
    peak = Math.max(peak, live() - baseline);
  });
  // Timed without collections, on a fresh log each time.
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reads; i++) {
    reading = new EventLog(db);
    const t0 = performance.now();
    await walk(() => {});
    best = Math.min(best, performance.now() - t0);
  }
  report[name] = { events: result.events, steps, peakLiveMB: Number(MB(peak)), catchUpMs: Math.round(best) };
}
console.log(
  JSON.stringify({ src: path.relative(process.cwd(), path.resolve(args.src)) || ".", pods, changes, bodyBytes, perTx, runOrder: args["run-order"], segments: db.first({ name: "n", text: "SELECT count(*) AS n FROM event_segments" }).n, buildMs: Math.round(buildMs), ...report }, null, 1),
);
