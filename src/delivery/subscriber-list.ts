/**
 * The informer's side of its subscriptions: which subscription objects follow its event log, so
 * it can nudge them when events arrive, count them in its status, and delete them with it.
 */
import { type Db, migrate, stmt } from "../sql.ts";

const MIGRATIONS = [`CREATE TABLE subscribers (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL) WITHOUT ROWID`] as const;

const ADD = stmt("subscribers.add", "INSERT OR IGNORE INTO subscribers (id, created_at) VALUES (?, ?)");
const REMOVE = stmt("subscribers.remove", "DELETE FROM subscribers WHERE id = ?");
const LIST = stmt("subscribers.list", "SELECT id FROM subscribers ORDER BY created_at, id");
const COUNT = stmt("subscribers.count", "SELECT count(*) AS n FROM subscribers");

export class SubscriberList {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "subscribers", MIGRATIONS);
  }

  add(id: string, now: number): void {
    this.#db.run(ADD, id, now);
  }

  remove(id: string): boolean {
    return this.#db.run(REMOVE, id) > 0;
  }

  ids(): string[] {
    return this.#db.all<{ id: string }>(LIST).map((row) => row.id);
  }

  count(): number {
    return this.#db.first<{ n: number }>(COUNT)!.n;
  }
}
