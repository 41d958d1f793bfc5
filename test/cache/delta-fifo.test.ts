import { describe, expect, it } from "vitest";
import { type Delta, DeltaFIFO } from "../../src/cache/delta-fifo.ts";
import { EventLog } from "../../src/cache/event-log.ts";
import { Indexer } from "../../src/cache/indexer.ts";
import { processDeltasInTx } from "../../src/cache/process-deltas.ts";
import { makeTransform } from "../../src/cache/transform.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

/** The resourceVersion every Replace in these tests is listed at. */
const LIST_RV = "100";

/** A FIFO whose known objects are a real indexer, plus helpers to seed the cache and pop. */
function parts(db: Db) {
  const indexer = new Indexer(db);
  const log = new EventLog(db);
  const fifo = new DeltaFIFO(db, indexer, makeTransform());
  const clock = new FakeClock();
  return {
    fifo,
    indexer,
    /** Puts objects straight into the cache, as if processed earlier. */
    known(...objects: KubeObject[]) {
      db.transaction(() => {
        for (const object of objects) {
          const key = `${object.metadata.namespace}/${object.metadata.name}`;
          processDeltasInTx([{ key, deltas: [delta("Added", object)], isInInitialList: false }], { indexer, log, clock });
        }
      });
    },
    /** Pops every key; returns [key, [type, name-or-tombstone, rv]...][] and the initial-list flags. */
    popAll(max = 1000) {
      const popped: [string, string[], boolean][] = [];
      db.transaction(() =>
        fifo.popInTx(max, (batch) => {
          for (const { key, deltas, isInInitialList } of batch) {
            popped.push([key, deltas.map((d) => `${d.type}${d.tombstone ? "(tombstone)" : ""}@${d.resourceVersion}`), isInInitialList]);
          }
        }),
      );
      return popped;
    },
    tx<T>(fn: () => T): T {
      return db.transaction(fn);
    },
    /** A whole Replace with the listed objects (client-go's Replace(list)), listed at LIST_RV. */
    replace(...objects: KubeObject[]) {
      fifo.beginReplaceInTx();
      if (objects.length > 0) fifo.stageInTx(objects);
      fifo.commitReplaceInTx(LIST_RV);
    },
  };
}

function delta(type: Delta["type"], object: KubeObject): Delta {
  return {
    type,
    body: JSON.stringify(object),
    tombstone: false,
    resourceVersion: object.metadata.resourceVersion ?? "",
    uid: object.metadata.uid ?? "",
  };
}

const a = (rv: string) => pod({ name: "a", rv });
const b = (rv: string) => pod({ name: "b", rv });
const c = (rv: string) => pod({ name: "c", rv });

describe("DeltaFIFO", () => {
  it("keeps each key's deltas in order and pops keys in order of their first delta", () =>
    withDb((db) => {
      const f = parts(db);
      f.tx(() => {
        f.fifo.addInTx(a("1"));
        f.fifo.addInTx(b("2"));
        f.fifo.updateInTx(a("3")); // a keeps its place ahead of b
      });
      expect(f.popAll()).toEqual([
        ["default/a", ["Added@1", "Updated@3"], false],
        ["default/b", ["Added@2"], false],
      ]);
      expect(f.fifo.length()).toBe(0);
    }));

  it("pops at most the requested number of keys", () =>
    withDb((db) => {
      const f = parts(db);
      f.tx(() => [a("1"), b("2"), c("3")].forEach((o) => f.fifo.addInTx(o)));
      expect(f.popAll(2).map(([key]) => key)).toEqual(["default/a", "default/b"]);
      expect(f.popAll().map(([key]) => key)).toEqual(["default/c"]);
    }));

  it("transforms objects when queued: managedFields are dropped", () =>
    withDb((db) => {
      const f = parts(db);
      f.tx(() => f.fifo.addInTx(a("1")));
      let body = "";
      f.tx(() => f.fifo.popInTx(1, (batch) => (body = batch[0]!.deltas[0]!.body!)));
      expect(JSON.parse(body).metadata.managedFields).toBeUndefined();
    }));

  describe("dedup of consecutive deletions", () => {
    it("keeps the older of two real deletions", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(a("1"));
        f.tx(() => {
          f.fifo.deleteInTx(a("2"));
          f.fifo.deleteInTx(a("3"));
        });
        expect(f.popAll()).toEqual([["default/a", ["Deleted@2"], false]]);
      }));

    it("replaces a tombstone by a following real deletion", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(a("1"));
        f.tx(() => {
          f.replace(); // empty list: a is tombstoned
          f.fifo.deleteInTx(a("5"));
        });
        expect(f.popAll()).toEqual([["default/a", ["Deleted@5"], true]]);
      }));

    it("keeps a real deletion over a following tombstone", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(a("1"));
        f.tx(() => {
          f.fifo.deleteInTx(a("5"));
          f.replace();
        });
        // the Delete came first, so the queue was populated before the Replace: nothing is "initial"
        expect(f.popAll()).toEqual([["default/a", ["Deleted@5"], false]]);
      }));

    it("does not deduplicate anything but deletions", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.fifo.updateInTx(a("1"));
          f.fifo.updateInTx(a("1"));
        });
        expect(f.popAll()[0]![1]).toEqual(["Updated@1", "Updated@1"]);
      }));
  });

  it("ignores the deletion of a key neither known nor queued", () =>
    withDb((db) => {
      const f = parts(db);
      f.tx(() => f.fifo.deleteInTx(a("9")));
      expect(f.fifo.length()).toBe(0);
    }));

  it("queues the deletion of a key that is only queued", () =>
    withDb((db) => {
      const f = parts(db);
      f.tx(() => {
        f.fifo.addInTx(a("1"));
        f.fifo.deleteInTx(a("2"));
      });
      expect(f.popAll()[0]![1]).toEqual(["Added@1", "Deleted@2"]);
    }));

  describe("Replace", () => {
    it("queues Replaced in list order, then tombstones queued and known keys missing from the list", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(c("3"), pod({ name: "d", rv: "4" }));
        f.tx(() => {
          f.fifo.addInTx(pod({ name: "q", rv: "5" })); // queued, not listed
          f.fifo.updateInTx(c("6")); // known and queued, not listed: tombstoned once, with its queued state
        });
        f.tx(() => {
          f.replace(b("7"), a("8"));
        });
        // the Add and Update came before the first Replace, so none of this is an initial list; the
        // tombstones are at the list's RV, not their objects' old ones (review N4)
        expect(f.popAll()).toEqual([
          ["default/q", ["Added@5", `Deleted(tombstone)@${LIST_RV}`], false],
          ["default/c", ["Updated@6", `Deleted(tombstone)@${LIST_RV}`], false],
          ["default/b", ["Replaced@7"], false],
          ["default/a", ["Replaced@8"], false],
          ["default/d", [`Deleted(tombstone)@${LIST_RV}`], false],
        ]);
      }));

    it("gives a tombstone of a known key the cached state", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(a("1"));
        f.tx(() => {
          f.replace();
        });
        let tombstone: Delta | undefined;
        f.tx(() => f.fifo.popInTx(1, (batch) => (tombstone = batch[0]!.deltas[0])));
        expect(tombstone?.tombstone).toBe(true);
        expect(JSON.parse(tombstone!.body!).metadata.resourceVersion).toBe("1");
      }));

    it("stages idempotently: a page staged twice (after an eviction) counts once", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.fifo.beginReplaceInTx();
          f.fifo.stageInTx([a("1"), b("1")]);
          f.fifo.stageInTx([b("2")]);
          f.fifo.commitReplaceInTx(LIST_RV);
        });
        expect(f.popAll().map(([key, deltas]) => [key, deltas])).toEqual([
          ["default/a", ["Replaced@1"]],
          ["default/b", ["Replaced@2"]],
        ]);
      }));

    it("forgets what an unfinished list staged", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.fifo.beginReplaceInTx();
          f.fifo.stageInTx([a("1")]);
          f.replace(b("2"));
        });
        expect(f.popAll().map(([key]) => key)).toEqual(["default/b"]);
      }));

    it("keeps the bodies of a committed Replace's pending deltas when a new list starts", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.replace(a("1"));
          f.fifo.beginReplaceInTx(); // staging reused while a's Replaced is still queued
          f.fifo.stageInTx([a("2")]);
          f.fifo.commitReplaceInTx(LIST_RV);
        });
        const bodies: string[] = [];
        f.tx(() =>
          f.fifo.popInTx(10, (batch) =>
            batch[0]!.deltas.forEach((d) => bodies.push(JSON.parse(d.body!).metadata.resourceVersion)),
          ),
        );
        expect(bodies).toEqual(["1", "2"]);
      }));
  });

  describe("staging release", () => {
    const staged = (db: Db) => db.first<{ n: number }>(stmt("test.staged", "SELECT COUNT(*) AS n FROM fifo_staging"))!.n;

    it("frees a committed Replace's staged bodies once all its keys are popped", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.replace(a("1"), b("1"));
        });
        f.popAll(1);
        f.tx(() => f.fifo.releaseStagingInTx());
        expect(staged(db)).toBe(2); // b's Replaced delta still reads its body from staging
        expect(f.popAll().map(([key]) => key)).toEqual(["default/b"]);
        f.tx(() => f.fifo.releaseStagingInTx());
        expect(staged(db)).toBe(0);
      }));

    it("keeps the staging of a list that is still being filled", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.fifo.beginReplaceInTx();
          f.fifo.stageInTx([a("1")]);
          f.fifo.releaseStagingInTx();
        });
        expect(staged(db)).toBe(1);
      }));
  });

  describe("HasSynced", () => {
    it("turns true after exactly the initial list's keys and deletions are popped", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(pod({ name: "gone", rv: "1" }));
        expect(f.fifo.hasSynced()).toBe(false);
        f.tx(() => {
          f.replace(a("2"), b("2"));
        });
        const flags: boolean[] = [];
        for (let i = 0; i < 3; i++) {
          expect(f.fifo.hasSynced()).toBe(false);
          flags.push(...f.popAll(1).map(([, , initial]) => initial));
        }
        expect(flags).toEqual([true, true, true]);
        expect(f.fifo.hasSynced()).toBe(true);
      }));

    it("is true at once when the first operation is not a Replace", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => f.fifo.addInTx(a("1")));
        expect(f.fifo.hasSynced()).toBe(true);
        expect(f.popAll()[0]![2]).toBe(false);
      }));

    it("is not reset by a later Replace", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => {
          f.replace();
        });
        expect(f.fifo.hasSynced()).toBe(true);
        f.tx(() => {
          f.replace(a("1"));
        });
        expect(f.fifo.hasSynced()).toBe(true);
        expect(f.popAll()[0]![2]).toBe(false);
      }));
  });

  it("Resync queues Sync with the cached state only for known keys with nothing queued", () =>
    withDb((db) => {
      const f = parts(db);
      f.known(a("1"), b("1"));
      f.tx(() => {
        f.fifo.updateInTx(b("2"));
        f.fifo.resyncInTx();
      });
      expect(f.popAll().map(([key, deltas]) => [key, deltas])).toEqual([
        ["default/b", ["Updated@2"]],
        ["default/a", ["Sync@1"]],
      ]);
    }));

  describe("bufferedInTx", () => {
    const storedDeltas = (db: Db) => db.first<{ n: number }>(stmt("test.count", "SELECT COUNT(*) AS n FROM fifo_deltas"))!.n;

    it("never stores the deltas it pops within the same call", () =>
      withDb((db) => {
        const f = parts(db);
        const popped = f.tx(() =>
          f.fifo.bufferedInTx(() => {
            f.fifo.addInTx(a("1"));
            f.fifo.updateInTx(a("2"));
            expect(storedDeltas(db)).toBe(0);
            return f.popAll();
          }),
        );
        expect(popped).toEqual([["default/a", ["Added@1", "Updated@2"], false]]);
        expect(storedDeltas(db)).toBe(0);
      }));

    it("writes out what it did not pop, in queue order, as if stored all along", () =>
      withDb((db) => {
        const f = parts(db);
        f.known(c("1"));
        f.tx(() =>
          f.fifo.bufferedInTx(() => {
            f.fifo.addInTx(a("2"));
            f.fifo.addInTx(b("3"));
            f.fifo.updateInTx(a("4"));
            f.fifo.deleteInTx(c("5"));
            f.fifo.deleteInTx(c("6")); // dedup: the older deletion stays
            f.fifo.deleteInTx(pod({ name: "unknown", rv: "7" })); // neither known nor queued: ignored
            expect(f.popAll(1).map(([key]) => key)).toEqual(["default/a"]);
          }),
        );
        expect(f.fifo.length()).toBe(2);
        expect(f.popAll()).toEqual([
          ["default/b", ["Added@3"], false],
          ["default/c", ["Deleted@5"], false],
        ]);
      }));

    it("writes through when something is already queued in storage, so the order holds", () =>
      withDb((db) => {
        const f = parts(db);
        f.tx(() => f.fifo.addInTx(a("1")));
        f.tx(() =>
          f.fifo.bufferedInTx(() => {
            f.fifo.addInTx(b("2"));
            f.fifo.updateInTx(a("3"));
          }),
        );
        expect(f.popAll().map(([key, deltas]) => [key, deltas])).toEqual([
          ["default/a", ["Added@1", "Updated@3"]],
          ["default/b", ["Added@2"]],
        ]);
      }));

    it("drops the buffer with a failed transaction", () =>
      withDb((db) => {
        const f = parts(db);
        expect(() =>
          f.tx(() =>
            f.fifo.bufferedInTx(() => {
              f.fifo.addInTx(a("1"));
              throw new Error("boom");
            }),
          ),
        ).toThrow("boom");
        expect(f.fifo.length()).toBe(0);
        expect(f.fifo.hasSynced()).toBe(false); // "populated" rolled back too
        f.tx(() => f.fifo.addInTx(b("2")));
        expect(f.popAll().map(([key]) => key)).toEqual(["default/b"]);
      }));
  });
});
