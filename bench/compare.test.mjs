// The pure parts of `npm run bench -- --compare` (bench/compare.mjs): flattening latest.json, the
// headline selection, medians, new/old and the verdicts, the markdown. Run: node --test bench/
import assert from "node:assert/strict";
import { test } from "node:test";
import { UNKNOWN_CAP, compareRuns, flatten, forwardedArgs, markdown, median, ratioOf, selectHeadlines, verdict } from "./compare.mjs";

test("flatten keeps numeric leaves, keys array rows by their id or name, others by index", () => {
  const flat = flatten({
    machine: { loadAverageAtStart: [0.5, 1] },
    cost: { costs: [{ id: "update.batch1", read: 25, statements: [{ name: "eventLog.append", written: 1 }] }] },
    ingest: { ours: { eventsPerSecond: 9000, ok: true, label: "x", missing: null, bad: Number.NaN } },
  });
  assert.deepEqual(flat, {
    "machine.loadAverageAtStart[0]": 0.5,
    "machine.loadAverageAtStart[1]": 1,
    "cost.costs[update.batch1].read": 25,
    "cost.costs[update.batch1].statements[eventLog.append].written": 1,
    "ingest.ours.eventsPerSecond": 9000,
  });
});

test("median ignores missing rounds and averages the middle two of an even count", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, null, 2, 3]), 2.5);
  assert.equal(median([null, undefined]), null);
  assert.equal(median([]), null);
});

test("ratioOf is new/old, 1 for equal sides (zeros too), null when undefined", () => {
  assert.equal(ratioOf(200, 100), 0.5);
  assert.equal(ratioOf(3, 4), 1.333);
  assert.equal(ratioOf(0, 0), 1);
  assert.equal(ratioOf(0, 5), null);
  assert.equal(ratioOf(null, 5), null);
});

test("verdict: better or worse only when the rounds' ranges do not overlap, sure only from 3 rounds or exact counts", () => {
  const s = (...values) => ({ values, median: median(values), min: Math.min(...values), max: Math.max(...values) });
  assert.equal(verdict(s(90, 100, 110), s(120, 130, 140), "higher"), "better");
  assert.equal(verdict(s(90, 100, 110), s(120, 130, 140), "lower"), "worse");
  assert.equal(verdict(s(90, 110), s(120, 140), "higher"), "better?");
  assert.equal(verdict(s(90, 100, 110), s(95, 105, 115), "higher"), "overlap");
  assert.equal(verdict(s(26, 26), s(25, 25), "lower"), "better");
  assert.equal(verdict(s(26), s(25), "lower"), "better");
  assert.equal(verdict(s(7, 7), s(7, 7), "lower"), "same");
  assert.equal(verdict(s(100), s(130), "ref"), "ref");
  assert.equal(verdict(s(100), s(130), null), null);
  assert.equal(verdict({ values: [null], median: null, min: null, max: null }, s(130), "higher"), null);
});

test("selectHeadlines: a known benchmark's figures in HEADLINES order, run facts never", () => {
  const selected = selectHeadlines([
    "machine.nproc",
    "totalSeconds",
    "ingestUpdates.ours.runtimeRss.peakMB",
    "ingestUpdates.ours.eventsPerSecond",
    "ingestUpdates.ours.polls.count",
    "ingestUpdates.ratio",
    "k8s.watch.ours.steady.workerdCpuMicrosPerDelivery",
    "k8s.watch.fake.steady.latencyMs.p99",
  ]);
  assert.deepEqual(selected, [
    { path: "ingestUpdates.ours.eventsPerSecond", better: "higher" },
    { path: "ingestUpdates.ratio", better: "higher" },
    { path: "ingestUpdates.ours.runtimeRss.peakMB", better: "lower" },
    { path: "k8s.watch.ours.steady.workerdCpuMicrosPerDelivery", better: "lower" },
    { path: "k8s.watch.fake.steady.latencyMs.p99", better: "ref" },
  ]);
});

test("selectHeadlines: an unknown benchmark shows its leaves (not series), capped, direction guessed", () => {
  const paths = ["newBench.deliveriesPerSecond", "newBench.p99", "newBench.count", "newBench.series[0].t"];
  for (let i = 0; i < UNKNOWN_CAP; i++) paths.push(`newBench.more.x${i}`);
  const selected = selectHeadlines(paths);
  assert.deepEqual(selected.slice(0, 3), [
    { path: "newBench.deliveriesPerSecond", better: "higher" },
    { path: "newBench.p99", better: "lower" },
    { path: "newBench.count", better: null },
  ]);
  assert.equal(selected.length, UNKNOWN_CAP + 1);
  assert.deepEqual(selected.at(-1), { path: "newBench.…", better: null, omitted: 3 });
});

test("compareRuns: a failed round is missing, figures on one side only are left out, fan-out CPU per delivery derived", () => {
  const run = (eps, extra = {}) => flatten({ ingest: { ours: { eventsPerSecond: eps } }, fanout: { ours: { runtimeCpuSeconds: { total: 0.5 }, deliveries: 1000 } }, ...extra });
  const { headlines, all } = compareRuns([run(100), null, run(120)], [run(150, { relist: { ours: { seconds: 3 } } }), run(160), run(170)]);
  const eps = headlines.find((h) => h.path === "ingest.ours.eventsPerSecond");
  assert.deepEqual(eps.old, { values: [100, null, 120], median: 110, min: 100, max: 120 });
  assert.equal(eps.new.median, 160);
  assert.equal(eps.ratio, 1.455);
  assert.equal(eps.verdict, "better?"); // the old side has 2 rounds left
  assert.equal(headlines.find((h) => h.path === "fanout.ours.runtimeCpuMicrosPerDelivery").old.median, 500);
  assert.ok(!headlines.some((h) => h.path.startsWith("relist")));
  assert.ok(all.some((h) => h.path === "fanout.ours.deliveries"));
});

test("forwardedArgs drops --compare and --rounds with their values", () => {
  assert.deepEqual(forwardedArgs(["--compare", "HEAD~1", "--only", "cost", "--rounds", "2", "--no-profile"]), ["--only", "cost", "--no-profile"]);
  assert.deepEqual(forwardedArgs(["--compare=main", "--rounds=5", "--events", "5000"]), ["--events", "5000"]);
});

test("markdown names both commits, the uncommitted changes, failures, and folds identical figures", () => {
  const same = { values: [7, 7], median: 7, min: 7, max: 7 };
  const md = markdown({
    date: "2026-11-28T11:20:00.000Z",
    rev: "HEAD~1",
    rounds: 2,
    options: ["--only", "cost"],
    old: { commit: "b64347c", subject: "old one", bundles: ["aaaa"], ok: 1 },
    new: { commit: "673c783", subject: "new one", dirty: ["bench/run.mjs"], bundles: ["bbbb"], ok: 2 },
    machine: { nproc: 2, cpu: "EPYC", node: "v24" },
    load: { min: 0.5, max: 2 },
    failures: [{ side: "old", round: 2, error: "exited with 1" }],
    headlines: [
      { path: "cost.costs[update.batch1].read", better: "lower", old: { values: [26, 26], median: 26, min: 26, max: 26 }, new: { values: [25, 25], median: 25, min: 25, max: 25 }, ratio: 0.962, verdict: "better" },
      { path: "cost.costs[update.batch1].written", better: "lower", old: same, new: same, ratio: 1, verdict: "same" },
    ],
  });
  assert.match(md, /`b64347c` → `673c783` \+ uncommitted changes/);
  assert.match(md, /plus the uncommitted changes of the working tree\*\* \(1 files: bench\/run\.mjs\)/);
  assert.match(md, /\*\*failed\*\*: old round 2: exited with 1/);
  assert.match(md, /\| cost\.costs\[update\.batch1\]\.read \| lower \| 26 \| 25 \| 0\.962 \| better \|/);
  assert.match(md, /\| 1 more figures, the same in every round on both sides/);
  assert.doesNotMatch(md, /update\.batch1\]\.written/);
});
