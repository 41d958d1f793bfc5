// `npm run bench -- --compare <rev> [--rounds N] [bench options]`: the same benchmarks on another
// commit of this repository ("old") and on the working tree as it is ("new"), in one sitting.
//
// The old tree is checked out in a temporary git worktree (its node_modules a symlink to ours; removed
// at the end, on failure and on SIGINT/SIGTERM too). Each run is its own `node bench/run.mjs <options>`
// in its own tree, so each side uses its own bench code and its own Worker bundle; the runs alternate
// old, new, old, new … for N rounds (3), since the machine's speed drifts over minutes. Each run's
// bench/results/latest.json is copied to bench/results/compare/{old,new}-<round>.json (with its
// output in .log). A run that fails (exits non-zero, or writes no latest.json) is reported and its
// round counted as missing for that side; the comparison goes on.
//
// Output: per headline figure (HEADLINES, or every numeric leaf of a benchmark not listed there,
// capped), each side's median and range, new/old, and which way is better where known; on stdout,
// in bench/results/compare.md (a markdown table to paste into BENCHMARKS.md or a commit message) and
// bench/results/compare.json (the same, plus every numeric figure both sides report).
// Exit codes: 0 done, 2 bad arguments (unknown rev, bad --rounds), 1 no round succeeded on a side.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { round } from "./lib.mjs";
import { NODE, RESULTS, ROOT, log, machineInfo } from "./harness.mjs";

// ---------------------------------------------------------------------------------------------
// The pure part: flattening, selection, medians, ratios, verdicts, the markdown table (compare.test.mjs)

/**
 * Numeric leaves of a JSON value as `dotted.path → number`, array elements in brackets. An element
 * that is an object with a string `id` or `name` (cost rows, scale queries) is keyed by it
 * (`cost.costs[update.batch1].read`), so its figure keeps its path when rows are added or reordered
 * between the two commits; other elements by their index (`machine.loadAverageAtStart[0]`).
 */
export function flatten(value, prefix = "", out = {}) {
  if (typeof value === "number" && Number.isFinite(value)) out[prefix] = value;
  else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const key = typeof item?.id === "string" ? item.id : typeof item?.name === "string" ? item.name : String(i);
      flatten(item, `${prefix}[${key}]`, out);
    });
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) flatten(item, prefix ? `${prefix}.${key}` : key, out);
  }
  return out;
}

/** The median of the numbers among `values` (nulls are missing rounds); null if none. */
export function median(values) {
  const xs = values.filter((x) => typeof x === "number" && Number.isFinite(x)).sort((a, b) => a - b);
  if (!xs.length) return null;
  const mid = Math.floor(xs.length / 2);
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/** new / old, rounded to 3 digits; 1 when both are equal (also both 0); null when undefined. */
export function ratioOf(oldValue, newValue) {
  if (oldValue === null || newValue === null) return null;
  if (oldValue === newValue) return 1;
  if (oldValue === 0) return null;
  return round(newValue / oldValue, 3);
}

/**
 * The headline figures of each benchmark (regular expressions over flatten()'s paths) and which way is
 * better: "higher", "lower", or "ref" for the reference side (client-node, the fake API server, the
 * stream server), whose change between the runs shows the machine's drift, not ours.
 */
const ingestHeadlines = (key) => [
  [new RegExp(`^${key}\\.ours\\.eventsPerSecond$`), "higher"],
  [new RegExp(`^${key}\\.clientNode\\.eventsPerSecond$`), "ref"],
  [new RegExp(`^${key}\\.ratio$`), "higher"],
  [new RegExp(`^${key}\\.ours\\.runtimeCpuSeconds\\.total$`), "lower"],
  [new RegExp(`^${key}\\.ours\\.runtimeRss\\.peakMB$`), "lower"],
];
export const HEADLINES = {
  ingest: [...ingestHeadlines("ingest"), [/^ingest\.serverCeiling\.eventsPerSecond$/, "ref"]],
  ingestUpdates: ingestHeadlines("ingestUpdates"),
  ingestClusters: [[/^ingestClusters\.runs\[\d+\]\.aggregate\.(eventsPerSecond|perClusterEventsPerSecond\.median)$/, "higher"]],
  relist: [
    [/^relist\.ours\.seconds$/, "lower"],
    [/^relist\.clientNode\.seconds$/, "ref"],
    [/^relist\.timeRatio$/, "lower"],
    [/^relist\.ours\.memory\.(growthMB|isolateHeap\.peakUsedMB|isolateHeap\.growthMB)$/, "lower"],
    [/^relist\.clientNode\.memory\.growthMB$/, "ref"],
    [/^relist\.memoryRatio$/, "lower"],
  ],
  fanout: [
    [/^fanout\.ours\.deliveriesPerSecond$/, "higher"],
    [/^fanout\.ours\.lagMs\.(p50|p99)$/, "lower"],
    [/^fanout\.ours\.runtimeCpuSeconds\.total$/, "lower"],
    [/^fanout\.ours\.runtimeCpuMicrosPerDelivery$/, "lower"],
    [/^fanout\.clientNode\.deliveriesPerSecond$/, "ref"],
    [/^fanout\.ratios\.deliveriesPerSecond$/, "higher"],
    [/^fanout\.ratios\.lagP99$/, "lower"],
  ],
  k8s: [
    [/^k8s\.watch\.ours\.(steady|burst)\.workerdCpuMicrosPerDelivery$/, "lower"],
    [/^k8s\.watch\.ours\.(steady|burst)\.latencyMs\.(p50|p99)$/, "lower"],
    [/^k8s\.watch\.ours\.(steady|burst)\.deliveredPerSecond$/, "higher"],
    [/^k8s\.watch\.ours\.(steady|burst)\.missing$/, "lower"],
    [/^k8s\.watch\.fake\.steady\.latencyMs\.p99$/, "ref"],
    [/^k8s\.watch\.ours\.processRss\.workerd\.growthMB$/, "lower"],
    [/^k8s\.watch\.ours\.ingest\.lagMs\.p99$/, "lower"],
    [/^k8s\.list\.ours\.(full|paged)\.ms\.median$/, "lower"],
    [/^k8s\.list\.ratios\.(fullListTime|pagedListTime)$/, "lower"],
    [/^k8s\.ingestBaseline\.workerdCpuMicrosPerChange$/, "lower"],
  ],
  cost: [
    [/^cost\.costs\[[^\]]+\]\.(written|read)$/, "lower"],
    [/^cost\.summary\..+$/, "lower"],
  ],
  scale: [
    [/^scale\.initialList\.(seconds|memory\.growthMB|memory\.isolateHeap\.peakUsedMB|storage\.afterMB)$/, "lower"],
    [/^scale\.stagedRelist\.(seconds|memory\.growthMB)$/, "lower"],
    [/^scale\.queries\[[^\]]+\]\.ms\.(p50|p99)$/, "lower"],
  ],
  search: [
    [/^search\.(firstPage|continuedPage)\.(all|one)\.(p50|p99)$/, "lower"],
    [/^search\.ratios\..+$/, "lower"],
    [/^search\.annotation\.(parseMicros|spliceMicros)$/, "lower"],
  ],
  isolation: [
    [/^isolation\.ratios\..+$/, "lower"],
    [/^isolation\..*latencyMs\.(p50|p99)$/, "lower"],
  ],
  rbac: [
    [/^rbac\.rebuild\.(source|parse|build)\.cpuMs\.median$/, "lower"],
    [/^rbac\.calls\[[^\]]+\]\.cpuMicros\.median$/, "lower"],
  ],
};
/** The benchmark a figure belongs to: its path's first part. */
const topOf = (p) => p.split(/[.[]/)[0];
/** Parts of latest.json that describe the run, not a benchmark. */
const NOT_BENCHMARKS = new Set(["machine", "bundle", "parameters", "targets", "totalSeconds", "loadAverageAtEnd"]);
/** A benchmark HEADLINES does not know shows at most this many of its figures in the table. */
export const UNKNOWN_CAP = 40;

/** Figures computed from others where latest.json has none (added to each run's flattened figures). */
export function derived(flat) {
  const out = {};
  const cpu = flat["fanout.ours.runtimeCpuSeconds.total"];
  const deliveries = flat["fanout.ours.deliveries"];
  if (cpu !== undefined && deliveries) out["fanout.ours.runtimeCpuMicrosPerDelivery"] = round((cpu * 1e6) / deliveries, 1);
  return out;
}

/** Which way a figure of a benchmark HEADLINES does not know is better, guessed from its name. */
export function guessBetter(leaf) {
  if (/PerSecond$/.test(leaf)) return "higher";
  if (/(Ms|ms|Seconds|seconds|MB|Micros|^p50|^p90|^p99)$/.test(leaf)) return "lower";
  return null;
}

/**
 * The table's figures among `paths` (those both sides report), in HEADLINES order within each
 * benchmark: [{path, better}]. A benchmark not in HEADLINES: every numeric leaf that is not under an
 * array element indexed by position (series, samples, timelines), up to UNKNOWN_CAP.
 */
export function selectHeadlines(paths) {
  const byBenchmark = new Map();
  for (const p of paths) {
    const top = topOf(p);
    if (NOT_BENCHMARKS.has(top)) continue;
    if (!byBenchmark.has(top)) byBenchmark.set(top, []);
    byBenchmark.get(top).push(p);
  }
  const selected = [];
  for (const [top, own] of byBenchmark) {
    if (HEADLINES[top]) {
      for (const [re, better] of HEADLINES[top]) for (const p of own) if (re.test(p)) selected.push({ path: p, better });
    } else {
      const plain = own.filter((p) => !/\[\d+\]/.test(p));
      for (const p of plain.slice(0, UNKNOWN_CAP)) selected.push({ path: p, better: guessBetter(p.split(/[.[\]]/).filter(Boolean).pop()) });
      if (plain.length > UNKNOWN_CAP) selected.push({ path: `${top}.…`, better: null, omitted: plain.length - UNKNOWN_CAP });
    }
  }
  return selected;
}

/**
 * The verdict on one figure: "better" / "worse" when the two sides' ranges (min–max over the rounds)
 * do not overlap, "same" when the medians are equal, "overlap" when they differ within the ranges
 * (noise at this number of rounds), "ref" for a reference figure, null when the direction is unknown.
 * Ranges apart with fewer than 3 rounds on a side give "better?" / "worse?" unless every round of both
 * sides gave one value each (a row count): 2 rounds of the same noise are apart one time in three
 * (3 rounds: one in ten).
 */
export function verdict(oldSide, newSide, better) {
  if (better === "ref") return "ref";
  if (oldSide.median === null || newSide.median === null) return null;
  if (oldSide.median === newSide.median) return "same";
  if (!better) return null;
  if (newSide.min <= oldSide.max && oldSide.min <= newSide.max) return "overlap";
  const word = (newSide.median > oldSide.median) === (better === "higher") ? "better" : "worse";
  const rounds = (s) => (s.values ?? []).filter((x) => x !== null).length;
  const exact = oldSide.min === oldSide.max && newSide.min === newSide.max;
  return exact || Math.min(rounds(oldSide), rounds(newSide)) >= 3 ? word : `${word}?`;
}

/** One side's figures over its rounds: {values, median, min, max}; a missing round is null. */
function side(runs, p) {
  const values = runs.map((flat) => (flat && p in flat ? flat[p] : null));
  const xs = values.filter((x) => x !== null);
  return { values, median: median(xs), min: xs.length ? Math.min(...xs) : null, max: xs.length ? Math.max(...xs) : null };
}

/**
 * Compares the flattened latest.json of each round (null for a failed run) of both sides: the headline
 * rows and every numeric figure both sides report.
 */
export function compareRuns(oldRuns, newRuns) {
  const withDerived = (runs) => runs.map((flat) => (flat ? { ...flat, ...derived(flat) } : null));
  const olds = withDerived(oldRuns);
  const news = withDerived(newRuns);
  const pathsOf = (runs) => new Set(runs.flatMap((flat) => (flat ? Object.keys(flat) : [])));
  const newPaths = pathsOf(news);
  const common = [...pathsOf(olds)].filter((p) => newPaths.has(p));
  const row = (p, better) => {
    const o = side(olds, p);
    const n = side(news, p);
    return { path: p, better, old: o, new: n, ratio: ratioOf(o.median, n.median), verdict: verdict(o, n, better) };
  };
  const headlines = selectHeadlines(common).map((h) => (h.omitted ? h : row(h.path, h.better)));
  const all = common.filter((p) => !NOT_BENCHMARKS.has(topOf(p))).map((p) => row(p, null));
  return { headlines, all };
}

const fmt = (x) => (x === null || x === undefined ? "–" : Math.abs(x) >= 1000 ? Math.round(x).toLocaleString("en-US") : String(round(x, Math.abs(x) < 10 ? 3 : 1)));
const range = (s) => (s.median === null ? "–" : s.min === s.max ? fmt(s.median) : `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`);

/** A figure that was the same in every round of both sides (row counts, usually): one line for them all. */
const isIdentical = (h) => !h.omitted && h.old.median !== null && [h.old.min, h.old.max, h.new.min, h.new.max].every((x) => x === h.old.median);

/** The markdown report: a heading, the two commits and the conditions, then the table. */
export function markdown(c) {
  const lines = [
    `### Before and after: \`${c.old.commit}\` → \`${c.new.commit}\`${c.new.dirty.length ? " + uncommitted changes" : ""} (${c.date.slice(0, 16).replace("T", " ")} UTC)`,
    "",
    `\`npm run bench -- --compare ${c.rev} --rounds ${c.rounds}${c.options.length ? ` ${c.options.join(" ")}` : ""}\`: ${c.rounds} round${c.rounds === 1 ? "" : "s"}, old and new alternating, each a \`node bench/run.mjs\` of its own tree; medians, (min–max) over the rounds.`,
    "",
    `- old: \`${c.old.commit}\` ${c.old.subject} (bundle sha256 ${c.old.bundles.join(", ") || "–"}); runs ok ${c.old.ok}/${c.rounds}`,
    `- new: \`${c.new.commit}\` ${c.new.subject}${c.new.dirty.length ? `, **plus the uncommitted changes of the working tree** (${c.new.dirty.length} files: ${c.new.dirty.slice(0, 5).join(", ")}${c.new.dirty.length > 5 ? ", …" : ""})` : ""} (bundle sha256 ${c.new.bundles.join(", ") || "–"}); runs ok ${c.new.ok}/${c.rounds}`,
    `- machine: ${c.machine.nproc} cores (${c.machine.cpu}), node ${c.machine.node}; load average (1 min) ${c.load.min}–${c.load.max} over the runs`,
    ...c.failures.map((f) => `- **failed**: ${f.side} round ${f.round}: ${f.error}`),
    ...(c.problems ?? []).map((p) => `- **problems reported** (figures kept): ${p.side} round ${p.round}: ${p.problems}`),
    "",
    "| figure | better | old | new | new/old | verdict |",
    "|---|---|---|---|---|---|",
  ];
  const identical = c.headlines.filter(isIdentical);
  if (!c.headlines.length) lines.push("| (no figure reported by both sides) | | | | | |");
  for (const h of c.headlines) {
    if (isIdentical(h)) continue;
    if (h.omitted) lines.push(`| ${h.path} (${h.omitted} more in compare.json) | | | | | |`);
    else lines.push(`| ${h.path} | ${h.better ?? "?"} | ${range(h.old)} | ${range(h.new)} | ${h.ratio ?? "–"} | ${h.verdict ?? ""} |`);
  }
  if (identical.length) lines.push(`| ${identical.length} more figures, the same in every round on both sides (compare.json) | | | | 1 | same |`);
  lines.push(
    "",
    "verdict: better/worse when the ranges of the rounds do not overlap (with a ? when a side has fewer than 3 rounds: 2 rounds of pure noise are apart one time in three); overlap: within the noise of these rounds; ref: a reference side (client-node, fake API server), its change is the machine's drift.",
  );
  return `${lines.join("\n")}\n`;
}

/** The bench options to forward to each run: argv without --compare and --rounds (and their values). */
export function forwardedArgs(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--compare" || a === "--rounds") i++;
    else if (!a.startsWith("--compare=") && !a.startsWith("--rounds=")) out.push(a);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The runs

const git = (args, cwd = ROOT) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

class UsageError extends Error {}

const shorten = (text, n) => (text.length <= n ? text : `${text.slice(0, n - 1)}…`);

/** The old tree: a detached worktree of `sha` under the temp dir; remove() is idempotent and synchronous. */
function checkoutOld(sha) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "edge-informer-compare-"));
  const dir = path.join(parent, "tree");
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    try {
      git(["worktree", "remove", "--force", dir]);
    } catch {
      // not created, or already gone: prune below forgets it
    }
    fs.rmSync(parent, { recursive: true, force: true });
    try {
      git(["worktree", "prune"]);
    } catch {
      // nothing to prune
    }
  };
  process.on("exit", remove); // harness.mjs turns SIGINT/SIGTERM into exit(130)
  git(["worktree", "add", "--detach", dir, sha]);
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  return { dir, remove };
}

let current = null; // the run in progress, stopped if we exit
process.on("exit", () => current?.kill("SIGTERM")); // its own handler stops its wrangler children

/** One `node bench/run.mjs` in `tree`: {flat, file} from its latest.json, or {error}. */
async function runOnce(tree, args, label, outDir) {
  const latest = path.join(tree, "bench", "results", "latest.json");
  fs.rmSync(latest, { force: true }); // a failed run must not leave the previous run's figures
  const logFile = path.join(outDir, `${label}.log`);
  const logStream = fs.createWriteStream(logFile);
  const child = spawn(NODE, [path.join(tree, "bench", "run.mjs"), ...args], { cwd: tree, stdio: ["ignore", "pipe", "pipe"] });
  current = child;
  let tail = "";
  const onData = (d) => {
    logStream.write(d);
    tail = (tail + d).slice(-2000);
    for (const line of String(d).split("\n")) if (line.startsWith("[bench ")) process.stdout.write(`  ${label}: ${line}\n`);
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const code = await new Promise((resolve) => {
    child.on("error", (e) => resolve(e.message));
    child.on("exit", (c, signal) => resolve(c ?? signal));
  });
  current = null;
  logStream.end();
  const why = `exited with ${code} (log: ${path.relative(ROOT, logFile)}): ${tail.trim().split("\n").slice(-3).join(" / ")}`;
  if (!fs.existsSync(latest)) return { error: code !== 0 ? why : `wrote no bench/results/latest.json (log: ${path.relative(ROOT, logFile)})` };
  const file = path.join(outDir, `${label}.json`);
  fs.copyFileSync(latest, file);
  // A run that measured and then reported problems (e.g. watchers that lost events) exits 1 with
  // its figures written: they are that tree's result, kept, and the problems said.
  return { json: JSON.parse(fs.readFileSync(file, "utf8")), ...(code !== 0 ? { problems: why } : {}) };
}

/** `--compare`: returns the exit code. */
export async function runCompare(argv, opts) {
  try {
    return await compare(argv, opts);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`--compare: ${error.message}\n`);
    return 2;
  }
}

async function compare(argv, opts) {
  const rev = opts.compare;
  const rounds = Number(opts.rounds ?? 3);
  if (!Number.isInteger(rounds) || rounds < 1) throw new UsageError(`--rounds must be a whole number ≥ 1 (got '${opts.rounds}')`);
  if (opts.only === "floor") throw new UsageError("--only floor prints its figures and writes no latest.json: run it on each tree by hand");
  let oldSha;
  try {
    oldSha = git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${rev}^{commit}`]);
  } catch {
    throw new UsageError(`unknown revision '${rev}': not a commit of this repository (git rev-parse). Fetch it, or give a commit, branch or tag.`);
  }
  const options = forwardedArgs(argv);
  const describe = (sha) => ({ commit: git(["rev-parse", "--short", sha]), subject: shorten(git(["log", "-1", "--format=%s", sha]), 90) });
  const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean).map((l) => l.slice(3));
  const machine = await machineInfo();
  const outDir = path.join(RESULTS, "compare");
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });

  const oldInfo = describe(oldSha);
  const newInfo = describe("HEAD");
  log(`compare: old ${oldInfo.commit} (${oldInfo.subject}) against new = the working tree at ${newInfo.commit}${dirty.length ? `, with ${dirty.length} uncommitted changes (${dirty.slice(0, 5).join(", ")}${dirty.length > 5 ? ", …" : ""}): they are part of "new"` : " (clean)"}`);
  log(`compare: ${rounds} rounds, alternating old/new, each: node bench/run.mjs ${options.join(" ")}`);
  const old = checkoutOld(oldSha);
  const runs = { old: [], new: [] };
  const failures = [];
  const problems = [];
  const loads = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const [name, tree] of [["old", old.dir], ["new", ROOT]]) {
        loads.push(os.loadavg()[0]);
        const r = await runOnce(tree, options, `${name}-${round}`, outDir);
        if (r.error) {
          failures.push({ side: name, round, error: r.error });
          log(`compare: ${name} round ${round} FAILED (counted as missing): ${r.error}`);
        } else {
          if (r.problems) problems.push({ side: name, round, problems: r.problems });
          loads.push(r.json.machine?.loadAverageAtStart?.[0], r.json.loadAverageAtEnd?.[0]);
          log(`compare: ${name} round ${round} done in ${r.json.totalSeconds} s`);
        }
        runs[name].push(r.json ?? null);
      }
    }
  } finally {
    old.remove();
  }

  const { headlines, all } = compareRuns(runs.old.map((j) => j && flatten(j)), runs.new.map((j) => j && flatten(j)));
  const bundles = (side) => [...new Set(runs[side].filter(Boolean).map((j) => j.bundle?.sha256).filter(Boolean))];
  const knownLoads = loads.filter((x) => typeof x === "number");
  const comparison = {
    date: machine.date,
    rev,
    rounds,
    options,
    old: { ...oldInfo, sha: oldSha, bundles: bundles("old"), ok: runs.old.filter(Boolean).length },
    new: { ...newInfo, sha: git(["rev-parse", "HEAD"]), dirty, bundles: bundles("new"), ok: runs.new.filter(Boolean).length },
    machine: { nproc: machine.nproc, cpu: machine.cpu, memoryGiB: machine.memoryGiB, node: machine.node, workerd: machine.workerd },
    load: { min: round(Math.min(...knownLoads), 2), max: round(Math.max(...knownLoads), 2), samples: knownLoads },
    failures,
    problems,
    runFiles: "bench/results/compare/{old,new}-<round>.json and .log",
    headlines,
    all,
  };
  const md = markdown(comparison);
  fs.writeFileSync(path.join(RESULTS, "compare.json"), `${JSON.stringify(comparison, null, 2)}\n`);
  fs.writeFileSync(path.join(RESULTS, "compare.md"), md);
  process.stdout.write(`\n${md}\nwritten: bench/results/compare.md, bench/results/compare.json (every figure both sides report), runs in bench/results/compare/\n`);
  return comparison.old.ok && comparison.new.ok ? 0 : 1;
}
