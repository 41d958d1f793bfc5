/**
 * The factory's index of subscriptions: which informer (cluster and name) each subscription id
 * follows. It lets `/subscriptions/{id}` answer an unknown id with a 404 without addressing that
 * id's Durable Object (reaching an object by name brings it into existence, with its SQLite file),
 * as the informer registry does for informer routes.
 *
 * Contract: every subscription that exists is in the index (once `complete`), so a miss is a true
 * 404. The converse need not hold: an entry is written before its object is created and removed
 * after it is deleted, so a failure between leaves an entry whose object answers NotFound itself
 * (storing nothing) — harmless. Subscriptions created before the index existed are copied in once
 * from their informers' subscriber lists (the factory's `backfill`), after which `complete` is set.
 */
import type { InformerAddress } from "../clusters/cluster.ts";
import { type Db, migrate, stmt } from "../sql.ts";

const MIGRATIONS = [
  `CREATE TABLE subscription_index (id TEXT PRIMARY KEY, cluster TEXT NOT NULL, informer TEXT NOT NULL) WITHOUT ROWID;
   CREATE TABLE subscription_index_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID`,
] as const;

const GET = stmt("subscriptionIndex.get", "SELECT cluster, informer FROM subscription_index WHERE id = ?");
const PUT = stmt(
  "subscriptionIndex.put",
  "INSERT INTO subscription_index (id, cluster, informer) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET cluster = excluded.cluster, informer = excluded.informer",
);
const DELETE = stmt("subscriptionIndex.delete", "DELETE FROM subscription_index WHERE id = ?");
const GET_COMPLETE = stmt("subscriptionIndex.getComplete", "SELECT value FROM subscription_index_state WHERE key = 'complete'");
const SET_COMPLETE = stmt("subscriptionIndex.setComplete", "INSERT OR REPLACE INTO subscription_index_state (key, value) VALUES ('complete', 1)");

export class SubscriptionRegistry {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "subscription_index", MIGRATIONS);
  }

  /** The informer subscription `id` follows, if it is indexed. */
  get(id: string): InformerAddress | undefined {
    const row = this.#db.first<{ cluster: string; informer: string }>(GET, id);
    return row && { cluster: row.cluster, name: row.informer };
  }

  put(id: string, informer: InformerAddress): void {
    this.#db.run(PUT, id, informer.cluster, informer.name);
  }

  delete(id: string): void {
    this.#db.run(DELETE, id);
  }

  /** Whether every existing subscription is indexed (the one-time copy from the informers is done). */
  complete(): boolean {
    return this.#db.first(GET_COMPLETE) !== undefined;
  }

  markComplete(): void {
    this.#db.run(SET_COMPLETE);
  }
}

/**
 * Copies every informer's subscriber list into the index, then marks it complete; an informer that
 * cannot answer leaves it incomplete (the next lookup or cron tick tries again). Entries written
 * meanwhile stay: a concurrent delete may leave one behind, which is harmless (see above).
 */
export async function backfillSubscriptions(
  registry: SubscriptionRegistry,
  informers: InformerAddress[],
  subscriberIds: (informer: InformerAddress) => Promise<string[] | undefined>,
): Promise<boolean> {
  let complete = true;
  for (const informer of informers) {
    const ids = await subscriberIds(informer).catch(() => undefined);
    if (ids === undefined) complete = false;
    for (const id of ids ?? []) registry.put(id, informer);
  }
  if (complete) registry.markComplete();
  return complete;
}
