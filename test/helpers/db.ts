/**
 * A fresh SQLite database inside a real Durable Object, for unit tests of the modules that take a
 * `Db`: each call uses a new object (storage isolation per name), with the informer's tables.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { migrateInformer } from "../../src/cache/informer.ts";
import { SpecStore } from "../../src/config/spec-store.ts";
import { SubscriberList } from "../../src/delivery/subscriber-list.ts";
import { Db } from "../../src/sql.ts";

/**
 * `sameStorage()` makes another Db over the same storage, with its own `rows`: two modules that
 * live in two objects in production (an informer and a subscription) share the test's storage
 * and still have their rows told apart. `storage`: the object's storage itself, for a test that wraps
 * it (test/check kills a Db's user mid-schedule).
 */
export async function withDb<T>(fn: (db: Db, sameStorage: () => Db, storage: DurableObjectStorage) => T | Promise<T>): Promise<T> {
  const stub = env.INFORMER.getByName(`unit-${crypto.randomUUID()}`);
  return runInDurableObject(stub, (_instance, state) => {
    const db = new Db(state.storage);
    // The tables a configured InformerObject has (an unconfigured one creates none, #7.17).
    migrateInformer(db);
    new SpecStore(db);
    new SubscriberList(db);
    return fn(db, () => new Db(state.storage), state.storage);
  });
}

/**
 * withDb, and the rows every statement has read so far (`cursor.rowsRead`, what the platform bills,
 * as `Db.rows` tallies it): for tests that hold a read path to a budget.
 */
export async function withCountedDb<T>(fn: (db: Db, rowsRead: () => number) => T | Promise<T>): Promise<T> {
  return withDb((db) => fn(db, () => db.rows.read));
}
