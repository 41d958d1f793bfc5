/**
 * The informer's side of its subscriptions: which subscription objects follow its event log, so
 * it can nudge them when events arrive, count them in its status, and delete them with it.
 */
import { type Db, migrate, stmt } from "../sql.ts";

const MIGRATIONS = [`CREATE TABLE subscribers (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL) WITHOUT ROWID`] as const;

const ADD = stmt("subscribers.add", "INSERT OR IGNORE INTO subscribers (id, created_at) VALUES (?, ?)");
const REMOVE = stmt("subscribers.remove", "DELETE FROM subscribers WHERE id = ?");
const LIST = stmt("subscribers.list", "SELECT id FROM subscribers ORDER BY created_at, id");
const PAGE = stmt(
  "subscribers.page",
  "SELECT id, created_at FROM subscribers WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?",
);
const COUNT = stmt("subscribers.count", "SELECT count(*) AS n FROM subscribers");

/** A subscription in the list's order (creation time, then id): where a page ends. */
export interface SubscriberCursor {
  createdAt: number;
  id: string;
}

export class SubscriberList {
  readonly #db: Db;
  /** The ids in list order, until this list changes (it is the only writer; every nudge round reads them). */
  #ids: string[] | undefined;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "subscribers", MIGRATIONS);
  }

  add(id: string, now: number): void {
    this.#ids = undefined;
    this.#db.run(ADD, id, now);
  }

  remove(id: string): boolean {
    this.#ids = undefined;
    return this.#db.run(REMOVE, id) > 0;
  }

  ids(): string[] {
    this.#ids ??= this.#db.all<{ id: string }>(LIST).map((row) => row.id);
    return [...this.#ids];
  }

  /** Up to `limit` subscriptions after `after`, in creation order; `more` when others follow. */
  page(after: SubscriberCursor | null, limit: number): { items: SubscriberCursor[]; more: boolean } {
    const rows = this.#db.all<{ id: string; created_at: number }>(PAGE, after?.createdAt ?? -1, after?.id ?? "", limit + 1);
    return { items: rows.slice(0, limit).map((row) => ({ createdAt: row.created_at, id: row.id })), more: rows.length > limit };
  }

  count(): number {
    return this.#db.first<{ n: number }>(COUNT)!.n;
  }
}
