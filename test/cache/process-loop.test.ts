/**
 * ProcessLoop.announce (cache/process-loop.ts): what the informer object is told after a
 * transaction, which wakes its `/k8s` watchers and answers its relays' polls (k8s/watch-relay.ts).
 * A relay learns of the cache's progress only through it, so every advance a watch can see — a new
 * tail, a new mark, and a mark's resourceVersion moved on by an upstream bookmark — is announced.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { type Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { FakeListerWatcher } from "../helpers/fake-lister-watcher.ts";

/** A synced informer at RV "7" whose announcements are counted. */
async function announcing(db: Db): Promise<{ informer: Informer; announced: number[] }> {
  const announced: number[] = [];
  const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5 }, "unit");
  const informer = new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5, (tail) => announced.push(tail));
  const lw = new FakeListerWatcher({ lists: [{ items: [pod({ name: "a", rv: "5" })], resourceVersion: "7" }], watches: [] });
  await informer.tick(lw, Date.now() + 60_000);
  expect(informer.progress()).toMatchObject({ synced: true, cacheResourceVersion: "7" });
  return { informer, announced };
}

describe("ProcessLoop.announce", () => {
  it("announces a watch chunk that grew the log, once", () =>
    withDb(async (db) => {
      const { informer, announced } = await announcing(db);
      const before = announced.length;
      informer.applyWatch([{ type: "MODIFIED", object: pod({ name: "a", rv: "8" }) }], "8");
      expect(announced.length).toBe(before + 1);
      expect(announced.at(-1)).toBe(informer.log.bounds().tail);
    }));

  it("announces an upstream bookmark, which moves the cache's resourceVersion at the same log position (review N6)", () =>
    withDb(async (db) => {
      const { informer, announced } = await announcing(db);
      informer.applyWatch([{ type: "MODIFIED", object: pod({ name: "a", rv: "8" }) }], "8");
      const before = announced.length;
      const tail = informer.log.bounds().tail;
      informer.applyWatch([], "12"); // a BOOKMARK: nothing changed up to 12
      expect(informer.log.bounds().tail).toBe(tail);
      expect(informer.queryView().resourceVersion).toBe("12");
      // A relay's poll answers only when told: unannounced, its watch-list at RV 12 waits 20 s (a 504 after 3 s).
      expect(announced.length).toBe(before + 1);
      // Nothing moved: nothing to announce.
      informer.applyWatch([], "12");
      expect(announced.length).toBe(before + 1);
    }));
});
