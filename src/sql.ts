/**
 * The one SQL helper. Modules own their tables: each keeps its DDL as a numbered migration list and
 * its statements as named constants (`stmt(name, text)`), and runs them through a `Db`.
 *
 * Guarantees:
 * - Cursors are read to the end before returning (`toArray`), so no cursor survives an `await`
 *   (cloudflare-platform.md §1.1: a cursor held across an await has no snapshot isolation).
 * - Failures become `SqlError{statement}` carrying the statement's name and never its bound values,
 *   so secrets and object bodies do not leak into logs.
 * - `transaction(fn)` is atomic (Durable Object `transactionSync`); code that must run inside one
 *   takes a `Db` and ends in `InTx`, as client-go marks `…Locked`.
 * - Every statement's rows read and written (what the platform bills) add up in `rows`
 *   (sql-rows.ts), per Durable Object and in memory: /metrics reads them (issue 19).
 */
import { RowTally } from "./sql-rows.ts";

export interface Statement {
  readonly name: string;
  readonly text: string;
}

export function stmt(name: string, text: string): Statement {
  return { name, text };
}

/** The narrow storage surface the logic needs: SQL and synchronous transactions. */
export interface SqlStorageLike {
  sql: Pick<SqlStorage, "exec">;
  transactionSync<T>(fn: () => T): T;
}

export type Row = Record<string, SqlStorageValue>;

/** A migration: DDL statements separated by `;`, or a step that moves data in code. */
export type Migration = string | ((db: Db) => void);

export class SqlError extends Error {
  override readonly name = "SqlError";
  readonly statement: string;
  constructor(statement: string, cause: unknown) {
    super(`SQL statement '${statement}' failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.statement = statement;
  }
}

export class Db {
  readonly #storage: SqlStorageLike;
  /** Rows every statement run through this Db read and wrote, since it was made. */
  readonly rows = new RowTally();

  constructor(storage: SqlStorageLike) {
    this.#storage = storage;
  }

  all<T extends Row>(s: Statement, ...bindings: unknown[]): T[] {
    return this.#exec<T>(s, bindings).rows;
  }

  first<T extends Row>(s: Statement, ...bindings: unknown[]): T | undefined {
    return this.all<T>(s, ...bindings)[0];
  }

  /** Runs a statement for its effect; returns the number of rows written. */
  run(s: Statement, ...bindings: unknown[]): number {
    return this.#exec(s, bindings).written;
  }

  /** Runs `s` to the end, then counts its rows: a cursor's counts are final once it is read through. */
  #exec<T extends Row>(s: Statement, bindings: unknown[]): { rows: T[]; written: number } {
    try {
      const cursor = this.#storage.sql.exec<T>(s.text, ...bindings);
      const rows = cursor.toArray();
      const written = cursor.rowsWritten;
      this.rows.add(s.name, cursor.rowsRead, written);
      return { rows, written };
    } catch (error) {
      throw new SqlError(s.name, error);
    }
  }

  transaction<T>(fn: () => T): T {
    return this.#storage.transactionSync(fn);
  }
}

const MIGRATIONS_TABLE = stmt(
  "migrations.create",
  "CREATE TABLE IF NOT EXISTS schema_migrations (module TEXT PRIMARY KEY, version INTEGER NOT NULL)",
);
const MIGRATIONS_GET = stmt("migrations.get", "SELECT version FROM schema_migrations WHERE module = ?");
const MIGRATIONS_SET = stmt(
  "migrations.set",
  "INSERT INTO schema_migrations (module, version) VALUES (?, ?) ON CONFLICT (module) DO UPDATE SET version = excluded.version",
);

const TABLE_EXISTS = stmt("migrations.tableExists", "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = ?");
const SCHEMA_EXISTS = stmt(
  "migrations.exists",
  "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
);

/**
 * Whether any module has migrated this storage. Read-only, so an object can tell a fresh (or wiped)
 * storage from a configured one without creating anything.
 */
export function hasSchema(db: Db): boolean {
  return db.first(SCHEMA_EXISTS) !== undefined;
}

/**
 * Applies a module's migrations that have not run yet, in order, each in its own transaction.
 * Idempotent: runs on every wake and does nothing when the schema is current.
 */
export function migrate(db: Db, module: string, migrations: readonly Migration[]): void {
  db.run(MIGRATIONS_TABLE);
  const current = db.first<{ version: number }>(MIGRATIONS_GET, module)?.version ?? 0;
  for (let version = current + 1; version <= migrations.length; version++) {
    const step = migrations[version - 1]!;
    db.transaction(() => {
      if (typeof step === "function") step(db);
      else for (const part of step.split(";").map((p) => p.trim()).filter(Boolean)) db.run(stmt(`${module}.migration${version}`, part));
      db.run(MIGRATIONS_SET, module, version);
    });
  }
}

/** Whether a table exists: a migration that moves data from another module's table checks first. */
export function tableExists(db: Db, name: string): boolean {
  return db.first(TABLE_EXISTS, name) !== undefined;
}

/** Builds `(?, ?, ?), (?, ?, ?)` for a multi-row insert of `rows` rows of `columns` values. */
export function placeholders(rows: number, columns: number): string {
  const row = `(${new Array(columns).fill("?").join(", ")})`;
  return new Array(rows).fill(row).join(", ");
}

/** SQLite allows 100 bound parameters per statement (cloudflare-platform.md §1.4). */
export const MAX_BOUND_PARAMETERS = 100;

/** Splits `items` into runs of at most `size`, for multi-row statements and `IN (…)` lists. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** `?, ?, ?` for an `IN (…)` list of `n` values. */
export function list(n: number): string {
  return new Array(n).fill("?").join(", ");
}
