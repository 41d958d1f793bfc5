/**
 * The keys a receiver holds (held-keys.ts) against a Map that applies the same changes: random
 * adds, updates, deletes and touches over a few thousand keys, so that changes stay in the
 * subscription row, go to segments in bulk, split them and empty them; every read compared with the
 * Map's answer. Then the first layout's rows, cut into segments by the migration.
 */
import { describe, expect, it } from "vitest";
import { type DeliveredKey, HELD_CHANGES_MAX, type HeldEvent, HeldKeys, SEGMENT_KEYS } from "../../src/delivery/held-keys.ts";
import { SubscriptionStore } from "../../src/delivery/subscription-store.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { Prng } from "../fake-apiserver/prng.ts";
import { withDb } from "../helpers/db.ts";
import { storedSubscription } from "../helpers/stored-subscription.ts";

const SEGMENTS = stmt("test.segments", "SELECT lo, keys FROM held_keys ORDER BY lo");

/** Keys as they come: namespaced, cluster-scoped, and names that look like numbers (a JS object would reorder those). */
const keyOf = (i: number) => (i % 7 === 0 ? String(i) : `ns-${i % 5}/pod-${String(i).padStart(5, "0")}`);
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What the held keys should say, applied the same way. */
class Model {
  readonly keys = new Map<string, { uid: string; rv: string; gen: number }>();
  apply(events: readonly HeldEvent[], gen: number): void {
    for (const e of events) {
      if (e.type === "delete") this.keys.delete(e.key);
      else this.keys.set(e.key, { uid: e.uid, rv: e.resourceVersion, gen });
    }
  }
  touch(keys: readonly string[], gen: number): void {
    for (const key of keys) {
      const held = this.keys.get(key);
      if (held) held.gen = gen;
    }
  }
  stale(gen: number): DeliveredKey[] {
    return [...this.keys]
      .filter(([, held]) => held.gen < gen)
      .sort(([a], [b]) => byKey(a, b))
      .map(([key, held]) => ({ key, uid: held.uid, resourceVersion: held.rv }));
  }
}

/** Every stale key, page by page as a sweep reads them. */
function sweep(held: HeldKeys, gen: number, limit: number): DeliveredKey[] {
  const all: DeliveredKey[] = [];
  for (let after: string | null = null; ; ) {
    const page = held.stale(gen, after, limit);
    expect(page.length).toBeLessThanOrEqual(limit);
    all.push(...page);
    if (page.length < limit) return all;
    after = page.at(-1)!.key;
  }
}

/** The segments' invariants: the first from '', each sorted, within its range, not too large. */
function expectSegments(db: Db): void {
  const segments = db.all<{ lo: string; keys: string }>(SEGMENTS).map((row) => ({ lo: row.lo, keys: (JSON.parse(row.keys) as [string][]).map(([key]) => key) }));
  if (segments.length === 0) return;
  expect(segments[0]!.lo).toBe("");
  segments.forEach(({ lo, keys }, i) => {
    expect(keys.length).toBeLessThanOrEqual(SEGMENT_KEYS);
    if (i > 0) expect(keys.length).toBeGreaterThan(0);
    expect(keys).toEqual([...keys].sort(byKey));
    const next = segments[i + 1]?.lo;
    expect(keys.every((key) => key >= lo && (next === undefined || key < next)), `segment ${JSON.stringify(lo)}`).toBe(true);
  });
}

describe("HeldKeys", () => {
  it("answers as a Map of the same changes would, through changes held, written in bulk, split and emptied segments", async () => {
    await withDb((db) => {
      storedSubscription(db);
      const held = new HeldKeys(db);
      const model = new Model();
      const rng = new Prng(19);
      let rv = 0;
      let gen = 1;
      const segments: number[] = [];
      for (let round = 0; round < 40; round++) {
        // A window's worth to a few thousand events; deletes take many keys out later on.
        const deleting = round > 25 ? 0.6 : 0.15;
        const events: HeldEvent[] = Array.from({ length: rng.pick([1, 32, 400, 1_500]) }, () => {
          const key = keyOf(rng.int(4_000));
          return { type: rng.next() < deleting ? "delete" : "update", key, uid: `uid-${key}`, resourceVersion: String(++rv) };
        });
        db.transaction(() => held.recordInTx(events, gen));
        model.apply(events, gen);
        if (rng.next() < 0.3) {
          gen++; // a replay: it touches some keys, then sweeps the rest
          const touched = Array.from({ length: rng.int(300) }, () => keyOf(rng.int(4_000)));
          db.transaction(() => held.touch(touched, gen));
          model.touch(touched, gen);
        }
        const since = 1 + rng.int(gen);
        // A page of objects: distinct keys, some in the state last sent, some not.
        const asked = [...new Set(Array.from({ length: 50 }, () => keyOf(rng.int(4_000))))].map((key) => {
          const known = model.keys.get(key);
          return { key, uid: `uid-${key}`, resourceVersion: known && rng.next() < 0.8 ? known.rv : "0" };
        });
        const expected = new Set(asked.filter((o) => (model.keys.get(o.key)?.gen ?? 0) >= since && model.keys.get(o.key)!.rv === o.resourceVersion).map((o) => o.key));
        expect(db.transaction(() => held.heldSince(asked, since)), `round ${round}`).toEqual(expected);
        expect(db.transaction(() => sweep(held, gen + 1, 1 + rng.int(300))), `round ${round}`).toEqual(model.stale(gen + 1));
        expectSegments(db);
        segments.push(db.all(SEGMENTS).length);
      }
      // Segments were split as keys came, more than the changes could hold.
      expect(Math.max(...segments)).toBeGreaterThan(HELD_CHANGES_MAX / SEGMENT_KEYS);
      // Deleting the first half of the keys removes the segments it empties.
      const half = [...model.keys.keys()].sort(byKey).slice(0, model.keys.size / 2);
      const deletes = half.map((key): HeldEvent => ({ type: "delete", key, uid: `uid-${key}`, resourceVersion: String(++rv) }));
      db.transaction(() => held.recordInTx(deletes, gen));
      model.apply(deletes, gen);
      expect(db.transaction(() => sweep(held, gen + 1, 100))).toEqual(model.stale(gen + 1));
      expectSegments(db);
      expect(db.all(SEGMENTS).length).toBeLessThan(segments.at(-1)! - 2);
    });
  });

  it("cuts the first layout's rows, one a key, into segments", async () => {
    await withDb((db) => {
      storedSubscription(db);
      for (const sql of [
        "DROP TABLE held_keys",
        "ALTER TABLE subscription DROP COLUMN held_changes",
        "DELETE FROM schema_migrations WHERE module = 'held_keys'",
        "CREATE TABLE delivered_keys (key TEXT PRIMARY KEY, uid TEXT NOT NULL, rv TEXT NOT NULL, gen INTEGER NOT NULL) WITHOUT ROWID",
      ]) {
        db.run(stmt("test.legacy", sql));
      }
      const keys = Array.from({ length: 2 * SEGMENT_KEYS + 7 }, (_, i) => keyOf(i));
      for (const [i, key] of keys.entries()) db.run(stmt("test.legacy", "INSERT INTO delivered_keys VALUES (?, ?, ?, ?)"), key, `uid-${key}`, String(i), i % 3);
      const store = new SubscriptionStore(db); // as the object wakes: runs the migration
      const segments = db.all<{ lo: string; keys: string }>(SEGMENTS);
      expect(segments.map((s) => (JSON.parse(s.keys) as unknown[]).length)).toEqual([SEGMENT_KEYS, SEGMENT_KEYS, 7]);
      expectSegments(db);
      const sorted = [...keys].sort(byKey);
      expect(store.staleKeys(2, null, keys.length).map((k) => k.key)).toEqual(sorted.filter((key) => keys.indexOf(key) % 3 < 2));
      expect(db.first(stmt("test.legacy", "SELECT count(*) AS n FROM sqlite_master WHERE name = 'delivered_keys'"))).toEqual({ n: 0 });
    });
  });
});
