/**
 * The storage ceiling (src/cache/storage-ceiling.ts): the policy as a function of what is measured,
 * then through a real informer over a real Durable Object's SQLite with a low ceiling injected —
 * retention shrinks, the log's head moves, the database gets smaller, and the status, the metrics
 * and a warn line say so (review B10).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Informer, migrateInformer } from "../../src/cache/informer.ts";
import {
  DEFAULT_STORAGE_CEILING_BYTES,
  holdLimitBytes,
  type LogMeasures,
  MIN_SHRUNK_EVENTS,
  MIN_SHRUNK_SECONDS,
  STORAGE_LIMIT_BYTES,
  storageCeilingOf,
  storageStatus,
  storageVerdict,
} from "../../src/cache/storage-ceiling.ts";
import { wireInformer } from "../../src/objects/informer-loop.ts";
import { LogReaders } from "../../src/cache/log-readers.ts";
import { FeedHost } from "../../src/delivery/feed-host.ts";
import { SubscriberList } from "../../src/delivery/subscriber-list.ts";
import { watchSourceOf } from "../../src/k8s/informer-watch-source.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { renderMetrics } from "../../src/metrics/prometheus.ts";
import { Db } from "../../src/sql.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

const configured = { maxEvents: 100_000, maxAgeSeconds: 3600 };
const MB = 1_000_000;
/** What a compaction measures of the log: no readers and no recent events unless a test says. */
const log = (logBytes: number, retainedEvents: number, more: Partial<LogMeasures> = {}) => (): LogMeasures => ({
  logBytes,
  retainedEvents,
  tail: retainedEvents,
  recentEvents: 0,
  readers: [],
  ...more,
});

describe("storageVerdict", () => {
  it("keeps the configured retention at and under the ceiling (70% of the 10 GB per-object limit by default)", () => {
    expect(DEFAULT_STORAGE_CEILING_BYTES).toBe(0.7 * STORAGE_LIMIT_BYTES);
    for (const bytes of [0, 5 * MB, 7_000 * MB]) {
      expect(storageVerdict(bytes, log(bytes / 2, 50_000), 7_000 * MB, configured)).toEqual({
        bytes,
        ceilingBytes: 7_000 * MB,
        retention: configured,
        shrunk: null,
        cutPast: [],
      });
    }
    // Under the ceiling the log is not measured: a status or a compaction reads no row for it.
    const unmeasured = () => {
      throw new Error("measured under the ceiling");
    };
    expect(storageVerdict(7_000 * MB, unmeasured, 7_000 * MB, configured).shrunk).toBeNull();
  });

  it("over the ceiling keeps the share of the log's events that brings the size back to it", () => {
    // 1,000 MB over, a log of 4,000 MB holding 80,000 events: keep three quarters of them.
    const verdict = storageVerdict(8_000 * MB, log(4_000 * MB, 80_000), 7_000 * MB, configured);
    expect(verdict.retention).toEqual({ maxEvents: 60_000, maxAgeSeconds: 3600 });
    expect(verdict.shrunk).toMatch(/over its ceiling of 7000000000 .*shrunk to 60000 events \(configured 100000\)/);
    expect(storageStatus(verdict)).toEqual({ bytes: 8_000 * MB, ceilingBytes: 7_000 * MB, maxEvents: 60_000, retentionShrunk: verdict.shrunk, retentionCutPast: [] });
  });

  it("never shrinks below MIN_SHRUNK_EVENTS, and says when the cache itself is too large", () => {
    // The log is smaller than the excess: all of it would go, the floor stays.
    const cacheTooLarge = storageVerdict(9_000 * MB, log(100 * MB, 5_000), 7_000 * MB, configured);
    expect(cacheTooLarge.retention.maxEvents).toBe(MIN_SHRUNK_EVENTS);
    expect(storageVerdict(9_000 * MB, log(0, 0), 7_000 * MB, configured).retention.maxEvents).toBe(MIN_SHRUNK_EVENTS);
    // Already at the floor: retention cannot shrink, the verdict still says the database is over.
    const atFloor = storageVerdict(9_000 * MB, log(100 * MB, 900), 7_000 * MB, { maxEvents: 1_000, maxAgeSeconds: 60 });
    expect(atFloor.retention.maxEvents).toBe(1_000);
    expect(atFloor.shrunk).toMatch(/kept at its configured 1000 events; the overage is not the log's: the cache .* is too large for one object/);
  });

  it("never keeps more than configured, however small the excess", () => {
    const verdict = storageVerdict(7_000 * MB + 1, log(4_000 * MB, 500_000), 7_000 * MB, configured);
    expect(verdict.retention.maxEvents).toBe(configured.maxEvents);
    expect(verdict.shrunk).not.toBeNull();
  });
});

describe("storageVerdict when the overage is not the log's (review N5)", () => {
  // 1,000 MB over a 7,000 MB ceiling, with a log of 200 MB holding 50,000 events: the cache is the overage.
  const bytes = 8_000 * MB;
  const reader = (name: string, behind: number) => ({ name, after: 50_000 - behind });

  it("takes at most the overage from the log, then keeps its last 10 minutes and what its oldest reader needs", () => {
    expect(holdLimitBytes(7_000 * MB)).toBe(8_500 * MB); // halfway to the platform's 10 GB
    expect(storageVerdict(bytes, log(200 * MB, 50_000), 7_000 * MB, configured).retention.maxEvents).toBe(MIN_SHRUNK_EVENTS);
    const recent = storageVerdict(bytes, log(200 * MB, 50_000, { recentEvents: 30_000 }), 7_000 * MB, configured);
    expect(recent.retention.maxEvents).toBe(30_000);
    expect(recent.shrunk).toMatch(/shrunk to 30000 events \(configured 100000\), held there for the last 600 s of events; the overage is not the log's/);
    const held = storageVerdict(bytes, log(200 * MB, 50_000, { readers: [reader("subscription s1", 5_000), reader("/k8s watchers", 2_000)] }), 7_000 * MB, configured);
    expect(held.retention.maxEvents).toBe(5_000);
    expect(held.shrunk).toMatch(/held there for subscription s1 \(the oldest reader\)/);
    expect(held.cutPast).toEqual([]);
  });

  it("a reader retention already left behind holds nothing", () => {
    // 60,000 back of a log configured for 50,000: the configured retention left it behind, not a shrink.
    const behind = storageVerdict(bytes, log(200 * MB, 50_000, { readers: [reader("subscription gone", 60_000)] }), 7_000 * MB, { ...configured, maxEvents: 50_000 });
    expect(behind.retention.maxEvents).toBe(MIN_SHRUNK_EVENTS);
    expect(behind.cutPast).toEqual([]);
  });

  it("past the hold line cuts past its readers and names them", () => {
    const measures = log(200 * MB, 50_000, { recentEvents: 30_000, readers: [reader("subscription s1", 5_000), reader("/k8s watchers", 2_000)] });
    const cut = storageVerdict(8_500 * MB, measures, 7_000 * MB, configured);
    expect(cut.retention.maxEvents).toBe(MIN_SHRUNK_EVENTS);
    expect(cut.cutPast).toEqual(["subscription s1", "/k8s watchers"]);
    expect(cut.shrunk).toMatch(/past 8500000000 bytes it cuts past subscription s1, \/k8s watchers, which must start over/);
    expect(storageStatus(cut).retentionCutPast).toEqual(["subscription s1", "/k8s watchers"]);
  });
});

describe("STORAGE_CEILING_MB", () => {
  it("sets the ceiling in whole megabytes from 100 to the platform's 10,000; unset keeps 70% of the limit", () => {
    expect(storageCeilingOf(undefined)).toEqual({ ceilingBytes: DEFAULT_STORAGE_CEILING_BYTES });
    expect(storageCeilingOf(" ")).toEqual({ ceilingBytes: DEFAULT_STORAGE_CEILING_BYTES });
    expect(storageCeilingOf("500")).toEqual({ ceilingBytes: 500_000_000 });
    expect(storageCeilingOf("10000")).toEqual({ ceilingBytes: STORAGE_LIMIT_BYTES });
    for (const bad of ["99", "10001", "2.5", "7GB", "-1"]) {
      expect(storageCeilingOf(bad)).toEqual({ ceilingBytes: DEFAULT_STORAGE_CEILING_BYTES, error: expect.stringContaining(`not '${bad}'`) });
    }
  });

  it("reaches an informer's verdict (and status), and a refused value keeps the default and logs why", () =>
    runInDurableObject(env.INFORMER.getByName(`ceiling-setting-${crypto.randomUUID()}`), async (_instance, state) => {
      const errors: string[] = [];
      vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
      const db = new Db(state.storage);
      migrateInformer(db);
      const spec = parseInformerSpec({ resource: "pods" }, "ceiling-setting");
      const wiring = { clock: new FakeClock(), random: () => 0.5, watched: () => false, listInPages: false, databaseBytes: () => state.storage.sql.databaseSize, grew: () => {} };
      expect(wireInformer(db, spec, { ...wiring, storageCeilingMb: "500" }).storage().ceilingBytes).toBe(500_000_000);
      expect(errors).toEqual([]);
      expect(wireInformer(db, spec, { ...wiring, storageCeilingMb: "lots" }).storage().ceilingBytes).toBe(DEFAULT_STORAGE_CEILING_BYTES);
      expect(errors.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ msg: "storage ceiling setting refused", cause: "config", informer: "ceiling-setting" })]);
    }));
});

describe("the storage ceiling through an informer", () => {
  afterEach(() => vi.restoreAllMocks());

  it("shrinks the log's retention past a low injected ceiling, and status, metrics and a warn line say so", () =>
    runInDurableObject(env.INFORMER.getByName(`ceiling-${crypto.randomUUID()}`), async (_instance, state) => {
      const warnings: string[] = [];
      vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warnings.push(String(line)));
      const db = new Db(state.storage);
      migrateInformer(db);
      let ceilingBytes = Number.MAX_SAFE_INTEGER;
      const clock = new FakeClock();
      const spec = parseInformerSpec({ resource: "pods", retention: { maxEvents: 100_000 } }, "ceiling");
      const make = () =>
        new Informer(db, { ...informerSettings(spec), storage: { bytes: () => state.storage.sql.databaseSize, ceilingBytes } }, clock, () => 0.5, undefined, {
          cluster: "default",
          informer: "ceiling",
        });
      // 4,000 updates of 20 pods, each body about 2 KB: the log is most of the database.
      const pad = "x".repeat(2_000);
      const inf = make();
      let rv = 0;
      for (let chunk = 0; chunk < 40; chunk++) {
        const events = Array.from({ length: 100 }, (_, i) => ({ type: "MODIFIED" as const, object: pod({ name: `p${i % 20}`, rv: String(++rv), labels: { pad } }) }));
        inf.applyWatch(events, String(rv));
      }
      inf.compactLog();
      expect(inf.log.bounds()).toEqual({ head: 1, tail: 4_000 }); // the configured retention keeps everything
      expect(inf.storage().shrunk).toBeNull();
      expect(warnings).toEqual([]);

      // The ceiling at half the database, the events older than the shrink's time floor: the log keeps what fits.
      clock.advance(MIN_SHRUNK_SECONDS * 1000 + 1);
      const before = state.storage.sql.databaseSize;
      ceilingBytes = Math.floor(before / 2);
      const low = make();
      const verdict = low.storage();
      expect(verdict.shrunk).toMatch(/event log retention shrunk to \d+ events \(configured 100000\)/);
      expect(verdict.retention.maxEvents).toBeLessThan(4_000);
      expect(verdict.retention.maxEvents).toBeGreaterThanOrEqual(MIN_SHRUNK_EVENTS);
      // The status and what /metrics renders from the informer's metrics, while over the ceiling.
      expect(storageStatus(low.storage())).toEqual({ bytes: before, ceilingBytes, maxEvents: verdict.retention.maxEvents, retentionShrunk: verdict.shrunk, retentionCutPast: [] });
      const metrics = low.metrics();
      expect(metrics.storage).toEqual(verdict);
      const text = renderMetrics({
        at: Date.now(),
        clusters: [],
        errors: 0,
        informers: [
          {
            identity: { cluster: "default", informer: "ceiling" },
            metrics: { ...metrics, name: "ceiling", resource: "pods", subscriptions: [], storageBytes: state.storage.sql.databaseSize, sqlRows: db.rows.totals(), sliceKills: 0 },
            subscriptions: [],
          },
        ],
      });
      const labels = '{cluster="default",informer="ceiling"}';
      expect(text).toContain(`edge_informer_storage_bytes${labels} ${before}`);
      expect(text).toContain(`edge_informer_storage_ceiling_bytes${labels} ${ceilingBytes}`);
      expect(text).toContain(`edge_informer_retention_shrunk${labels} 1`);
      expect(text).toContain(`edge_informer_retention_max_events${labels} ${verdict.retention.maxEvents}`);

      // Compaction applies it: the head moves past what no longer fits, and the database shrinks.
      low.compactLog();
      const { head, tail } = low.log.bounds();
      expect(tail).toBe(4_000);
      expect(tail - head + 1).toBeLessThanOrEqual(verdict.retention.maxEvents);
      expect(state.storage.sql.databaseSize).toBeLessThan(before);
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: "warn", msg: "storage ceiling: event log retention shrunk", informer: "ceiling", ceilingBytes });
      low.compactLog(); // once a slice's informer, not at every compaction
      expect(warnings).toHaveLength(1);

      // Once the ceiling is over the database again, the configured retention applies and is reported.
      ceilingBytes = Number.MAX_SAFE_INTEGER;
      expect(storageStatus(make().storage())).toMatchObject({ ceilingBytes, maxEvents: 100_000, retentionShrunk: null });
    }));

  it("over the ceiling by more than the log holds, keeps what a subscription and a /k8s watcher 5,000 events back need: both resume (review N5, test 3)", () =>
    runInDurableObject(env.INFORMER.getByName(`ceiling-readers-${crypto.randomUUID()}`), async (_instance, state) => {
      const warnings: string[] = [];
      vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warnings.push(String(line)));
      const db = new Db(state.storage);
      migrateInformer(db);
      const clock = new FakeClock();
      const subscribers = new SubscriberList(db);
      const readers = new LogReaders(() => subscribers.oldestReader());
      const feed = new FeedHost({ subscribers: () => subscribers, send: async () => {}, budget: () => ({ take: () => true, end: () => {} }), who: () => undefined, clock });
      const ceilingBytes = 1_000 * MB;
      let bytes = 0;
      const spec = parseInformerSpec({ resource: "pods", retention: { maxEvents: 100_000 } }, "ceiling-readers");
      const inf = new Informer(db, { ...informerSettings(spec), storage: { bytes: () => bytes, ceilingBytes, readers } }, clock, () => 0.5, undefined, {
        cluster: "default",
        informer: "ceiling-readers",
      });
      feed.addSubscriber(inf.log, "s1");
      let rv = 0;
      for (let chunk = 0; chunk < 120; chunk++) {
        const events = Array.from({ length: 100 }, (_, i) => ({ type: "MODIFIED" as const, object: pod({ name: `p${i % 20}`, rv: String(++rv) }) }));
        inf.applyWatch(events, String(rv));
      }
      const tail = inf.log.bounds().tail;
      expect(tail).toBe(12_000);
      // A subscription and a /k8s watcher each read 5,000 events back; then the events age past the time floor.
      const back = tail - 5_000;
      expect(feed.readLog(inf.log, back, 100, "s1").expired).toBe(false);
      expect((await watchSourceOf(inf).read(back, 100)).expired).toBe(false);
      clock.advance(MIN_SHRUNK_SECONDS * 1000 + 1);
      inf.compactLog();

      // The database is over its ceiling by a cache far larger than the log: the log is held for its readers.
      const cacheBytes = 400 * MB;
      bytes = ceilingBytes + cacheBytes;
      inf.compactLog();
      expect(inf.log.bounds().head).toBeLessThanOrEqual(back + 1);
      const resumed = feed.readLog(inf.log, back, 100, "s1");
      expect(resumed.expired).toBe(false);
      expect(resumed.events[0]!.seq).toBe(back + 1);
      expect((await watchSourceOf(inf).read(back, 100)).expired).toBe(false);
      expect(storageStatus(inf.storage())).toMatchObject({ maxEvents: 5_000, retentionCutPast: [] });
      expect(inf.storage().shrunk).toMatch(/held there for subscription s1 \(the oldest reader\)/);
      // The subscription's position is stored: an evicted object (a new list) still holds for it.
      expect(new SubscriberList(db).oldestReader()).toEqual({ name: "subscription s1", after: back });

      // Past the hold line the readers are cut past, and the status, the metrics and a warn line name them.
      bytes = holdLimitBytes(ceilingBytes);
      inf.compactLog();
      expect(inf.log.bounds().head).toBeGreaterThan(back + 1);
      expect(storageStatus(inf.storage()).retentionCutPast).toEqual(["subscription s1", "/k8s watchers"]);
      expect(inf.metrics().storage.cutPast).toEqual(["subscription s1", "/k8s watchers"]);
      const cutLines = warnings.map((line) => JSON.parse(line)).filter((line) => line.msg === "storage ceiling: event log retention cuts past readers");
      expect(cutLines).toEqual([expect.objectContaining({ readers: "subscription s1, /k8s watchers" })]);
    }));

  it("a status over the ceiling only reads: no transaction, no row written (review: status reads write)", () =>
    runInDurableObject(env.INFORMER.getByName(`ceiling-status-${crypto.randomUUID()}`), async (_instance, state) => {
      const db = new Db(state.storage);
      migrateInformer(db);
      const spec = parseInformerSpec({ resource: "pods" }, "ceiling-status");
      const inf = new Informer(db, { ...informerSettings(spec), storage: { bytes: () => 2_000 * MB, ceilingBytes: 1_000 * MB } }, new FakeClock(), () => 0.5);
      inf.applyWatch([{ type: "ADDED", object: pod({ name: "a", rv: "1" }) }], "1"); // appended, not counted yet
      const transaction = vi.spyOn(db, "transaction");
      const written = db.rows.written;
      const verdict = inf.storage();
      expect(verdict.shrunk).not.toBeNull();
      expect(transaction).not.toHaveBeenCalled();
      expect(db.rows.written).toBe(written);
    }));
});
