/**
 * Invariant 10's "sent again byte for byte" in the CloudEvents formats (issue 32): a window kept in
 * memory is rebuilt from the log after a crash, later, and must go out as it went the first time,
 * `time` attribute included; a batch stored in the outbox likewise.
 */
import { describe, expect, it } from "vitest";
import { withDb } from "../helpers/db.ts";
import { drain, setup, storedOne, withHistory } from "../helpers/subscription-harness.ts";

describe("CloudEvents deliveries resent after a crash", () => {
  it.each(["cloudevents-structured", "cloudevents-binary"] as const)("resends a window kept in memory byte for byte in %s, time included", async (format) => {
    await withDb(async (db) => {
      const { feed, clock, endpoint, subscription, make } = setup(db, { replayExisting: false, format }, withHistory(20));
      await storedOne(subscription, feed, clock); // an acknowledgement stored: windows stay in memory
      const before = endpoint.received.length;
      for (const name of ["b", "c", "d", "e"]) feed.put(`default/${name}`);
      for (let i = 0; i < 4; i++) await subscription.step(); // the window, then b, c, d acknowledged in memory
      expect(subscription.store.storedOutbox()).toBeUndefined();
      clock.advance(60_000); // the crash, and a restart a minute later
      await drain(make());
      const sent = endpoint.received.slice(before).map((r) => [r.request.body, r.request.headers["ce-time" as never]]);
      expect(sent.slice(3, 6)).toEqual(sent.slice(0, 3)); // b, c, d again, as they were
      expect(endpoint.events.slice(before).map((e) => e.key)).toEqual(["default/b", "default/c", "default/d", "default/b", "default/c", "default/d", "default/e"]);
    });
  });
});
