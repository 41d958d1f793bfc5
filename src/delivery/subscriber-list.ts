/**
 * The informer's side of its subscriptions: which subscription objects follow its event log, so
 * it can nudge them when events arrive, count them in its status, and delete them with it; and
 * where each last read the log from, so the storage ceiling's shrink holds for the oldest
 * (cache/log-readers.ts, review N5).
 *
 * Guarantees: a subscription's stored position is never ahead of its last read (it starts at the
 * tail it was added at, and is written when a read moves it back, or on by READ_STEP events or
 * more), so a shrink that holds for it never holds too little, and a read costs a row written at
 * most once per READ_STEP events.
 */
import type { LogReader } from "../cache/storage-ceiling.ts";
import { type Db, migrate, stmt } from "../sql.ts";

const MIGRATIONS = [
  `CREATE TABLE subscribers (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL) WITHOUT ROWID`,
  // null: not read since this release (it holds nothing until it reads).
  `ALTER TABLE subscribers ADD COLUMN read_after INTEGER`,
] as const;

/** Events a subscription's reads move on before its stored position is written again. */
export const READ_STEP = 1_024;

const ADD = stmt("subscribers.add", "INSERT OR IGNORE INTO subscribers (id, created_at, read_after) VALUES (?, ?, ?)");
const SET_READ = stmt("subscribers.read", "UPDATE subscribers SET read_after = ? WHERE id = ?");
const GET_READ = stmt("subscribers.getRead", "SELECT read_after FROM subscribers WHERE id = ?");
const OLDEST_READ = stmt("subscribers.oldestRead", "SELECT id, read_after FROM subscribers WHERE read_after IS NOT NULL ORDER BY read_after LIMIT 1");
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
  /** Each subscription's stored read position, as last read or written (saves a read per feed read). */
  readonly #stored = new Map<string, number | null>();

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "subscribers", MIGRATIONS);
  }

  /** `tail`: the log's tail, where the subscription starts reading. */
  add(id: string, now: number, tail: number): void {
    this.#ids = undefined;
    this.#stored.delete(id);
    this.#db.run(ADD, id, now, tail);
  }

  remove(id: string): boolean {
    this.#ids = undefined;
    this.#stored.delete(id);
    return this.#db.run(REMOVE, id) > 0;
  }

  /** Subscription `id` read the log after `after` (see the contract for when it is written). */
  noteRead(id: string, after: number): void {
    if (!this.#stored.has(id)) {
      const row = this.#db.first<{ read_after: number | null }>(GET_READ, id);
      if (row === undefined) return; // not (or no longer) a subscriber
      this.#stored.set(id, row.read_after);
    }
    const stored = this.#stored.get(id)!;
    if (stored !== null && after >= stored && after - stored < READ_STEP) return;
    this.#db.run(SET_READ, after, id);
    this.#stored.set(id, after);
  }

  /** The subscription whose stored read position is the oldest, as a log reader (cache/log-readers.ts). */
  oldestReader(): LogReader | undefined {
    const row = this.#db.first<{ id: string; read_after: number }>(OLDEST_READ);
    return row && { name: `subscription ${row.id}`, after: row.read_after };
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
