/**
 * Db.rows: every statement's rows as its cursor reports them (what the platform bills, index
 * entries included), in totals always and by statement name once asked for.
 */
import { describe, expect, it } from "vitest";
import { stmt } from "../src/sql.ts";
import { withDb } from "./helpers/db.ts";

const CREATE = stmt("t.create", "CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
const INDEX = stmt("t.index", "CREATE INDEX t_v ON t (v)");
const PUT = stmt("t.put", "INSERT INTO t (k, v) VALUES (?, ?)");
const ALL = stmt("t.all", "SELECT k FROM t");
const BROKEN = stmt("t.broken", "SELECT nothing FROM nowhere");

describe("Db.rows", () => {
  it("adds up each statement's rows read and written, each index entry counting as a row written", () =>
    withDb((db) => {
      db.run(CREATE);
      db.run(INDEX);
      const before = db.rows.totals();
      db.run(PUT, "a", "1");
      db.run(PUT, "b", "2");
      // Two rows, each with two index entries: the TEXT primary key's own index (a rowid table) and t_v.
      expect(db.rows.written - before.written).toBe(6);
      const read = db.rows.read;
      expect(db.all(ALL)).toHaveLength(2);
      expect(db.rows.read - read).toBe(2);
      expect(() => db.all(BROKEN)).toThrow(/t\.broken/);
      expect(db.rows.read - read).toBe(2); // a failed statement is not counted
    }));

  it("keeps a breakdown by statement name only once asked for", () =>
    withDb((db) => {
      db.run(CREATE);
      expect(db.rows.statements().size).toBe(0);
      db.rows.keepStatements();
      db.run(PUT, "a", "1");
      db.run(PUT, "b", "2");
      db.all(ALL);
      expect(Object.fromEntries(db.rows.statements())).toEqual({
        "t.put": { runs: 2, read: 0, written: 4 },
        "t.all": { runs: 1, read: 2, written: 0 },
      });
    }));
});
