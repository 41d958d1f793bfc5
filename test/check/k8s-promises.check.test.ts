/**
 * The `/k8s` promises (DESIGN invariant 9) under generated schedules: ingest, upstream bookmarks,
 * 410 and relists with inferred deletes, kills between any two transactions (mid-relist too),
 * reconfigurations, lists paged and heavy with ingest between their turns, watch-lists, cut
 * streams resumed from their last RV, and time passing (bookmarks, watch deadlines). Each client
 * checks what it reads (watch-client.ts); after the schedule everything catches up and every client
 * and the cache must equal the cluster. A failure prints the seed and path that replay it:
 * `npm run check -- --seed <seed> --path <path>`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withDb } from "../helpers/db.ts";
import { K8sSystem } from "./k8s-system.ts";
import { runSchedule, schedule } from "./k8s-schedule.ts";
import { checkParameters } from "./settings.ts";

describe("checker: /k8s lists and watches", () => {
  it("every watcher and every list agrees with the cluster at every RV it is given, under any schedule", async () => {
    await fc.assert(
      fc.asyncProperty(schedule, (commands) =>
        withDb(async (_db, _sameStorage, storage) => {
          const { violations } = await runSchedule((cluster) => new K8sSystem(storage, cluster), commands);
          expect(violations).toEqual([]);
        }),
      ),
      checkParameters(40),
    );
  }, 600_000);
});
