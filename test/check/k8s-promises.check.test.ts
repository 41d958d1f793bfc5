/**
 * The `/k8s` promises (DESIGN invariant 9) under generated schedules: ingest, upstream bookmarks,
 * 410 and relists with inferred deletes, kills between any two transactions (mid-relist too),
 * reconfigurations, lists paged and heavy with ingest between their turns, watch-lists, watchers
 * on the informer's hub or through a watch relay, relay restarts, cut streams resumed from their
 * last RV or rewound to any RV they showed, and time passing (bookmarks, watch deadlines). Each client
 * checks what it reads (watch-client.ts); after the schedule everything catches up and every client
 * and the cache must equal the cluster. A failure prints the seed and path that replay it:
 * `npm run check -- --seed <seed> --path <path>`.
 */
import fc from "fast-check";
import { SCAN_PER_TURN } from "../../src/cache/versioned-list.ts";
import { describe, expect, it } from "vitest";
import { withDb } from "../helpers/db.ts";
import { K8sSystem } from "./k8s-system.ts";
import { runSchedule, type Schedule, schedule } from "./k8s-schedule.ts";
import { checkParameters } from "./settings.ts";

/**
 * Schedules every run starts with: what the checker found once (test/check/FINDINGS.md), kept so that
 * a regression shows at once, whatever the seed.
 */
const FOUND: Schedule[] = [
  // C1: a list between a relist's last pop and its mark (the relist a kill cut is done again).
  {
    filler: 0,
    commands: [
      { kind: "change", key: 0, to: "web" },
      { kind: "relist", pages: 1, killAt: "staged" },
      { kind: "watcher", selector: "all", start: "list", via: "informer", timeoutSeconds: 30, ingestAfterTurns: 0 },
    ],
  },
  // Review N1: a heavy list (a selector over the filler) with changes applied between its turns.
  {
    filler: SCAN_PER_TURN + 100,
    commands: [
      { kind: "change", key: 1, to: "db" },
      { kind: "change", key: 2, to: "db" },
      { kind: "change", key: 1, to: "web" },
      { kind: "change", key: 2, to: "web" },
      { kind: "list", selector: "web", ingestAfterTurns: 6 },
    ],
  },
];

describe("checker: /k8s lists and watches", () => {
  it("every watcher and every list agrees with the cluster at every RV it is given, under any schedule", async () => {
    await fc.assert(
      fc.asyncProperty(schedule, (generated) =>
        withDb(async (_db, _sameStorage, storage) => {
          const { violations } = await runSchedule((cluster) => new K8sSystem(storage, cluster), generated);
          expect(violations).toEqual([]);
        }),
      ),
      { ...checkParameters<[Schedule]>(150), examples: FOUND.map((found): [Schedule] => [found]) },
    );
  }, 600_000);
});
