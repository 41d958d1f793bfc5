/**
 * The webhook promises (DESIGN invariants 3, 4, 10) under generated schedules: keys changing in and
 * out of a label selector, a late subscriber's replay, resyncs, batches, endpoint answers 2xx, 5xx,
 * 410, timeouts, a send that never answers and a process that dies mid-send, kills between steps;
 * the target a URL or a queue (webhook-queue.ts: accepts, throws, hangs, dies mid-send).
 * The receiver checks what it gets in order (webhook-receiver.ts); after the schedule the
 * subscription catches up and the receiver must hold the cluster's state. A failure prints the seed
 * and path that replay it: `npm run check -- --seed <seed> --path <path>`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withDb } from "../helpers/db.ts";
import { checkParameters } from "./settings.ts";
import { runWebhookSchedule, type WebhookSchedule, webhookSchedule } from "./webhook-schedule.ts";

describe("checker: webhook subscriptions", () => {
  it("every receiver sees each key's changes in order and ends with the cluster's state, under any schedule", async () => {
    await fc.assert(
      fc.asyncProperty(webhookSchedule, (schedule) =>
        withDb(async (_db, _sameStorage, storage) => {
          expect(await runWebhookSchedule(storage, schedule)).toEqual([]);
        }),
      ),
      checkParameters<[WebhookSchedule]>(300),
    );
  }, 600_000);
});
