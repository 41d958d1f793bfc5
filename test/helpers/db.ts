/**
 * A fresh SQLite database inside a real Durable Object, for unit tests of the modules that take a
 * `Db`: each call uses a new object (storage isolation per name), with the informer's tables.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Db } from "../../src/sql.ts";

export async function withDb<T>(fn: (db: Db) => T | Promise<T>): Promise<T> {
  const stub = env.INFORMER.getByName(`unit-${crypto.randomUUID()}`);
  return runInDurableObject(stub, (_instance, state) => fn(new Db(state.storage)));
}
