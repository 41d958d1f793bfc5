/**
 * The registry of informers of one deployment (client-go SharedInformerFactory's map of informers):
 * which exist, their specs, and whether each was declared in `INFORMERS` (wrangler.toml) or created
 * through the admin API. Declared informers follow the variable: the factory adds, updates and
 * removes them as it changes; API-created ones are left alone.
 */
import type { InformerSpec } from "../config.ts";
import { type Db, migrate, stmt } from "../sql.ts";

export type InformerSource = "config" | "api";

export interface RegisteredInformer {
  name: string;
  spec: InformerSpec;
  source: InformerSource;
  createdAt: number;
  updatedAt: number;
}

const MIGRATIONS = [
  `CREATE TABLE informers (
     name TEXT PRIMARY KEY, spec TEXT NOT NULL, source TEXT NOT NULL,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
] as const;

const GET = stmt("registry.get", "SELECT name, spec, source, created_at, updated_at FROM informers WHERE name = ?");
const LIST = stmt("registry.list", "SELECT name, spec, source, created_at, updated_at FROM informers ORDER BY name");
const PUT = stmt(
  "registry.put",
  `INSERT INTO informers (name, spec, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
   ON CONFLICT (name) DO UPDATE SET spec = excluded.spec, source = excluded.source, updated_at = excluded.updated_at`,
);
const DELETE = stmt("registry.delete", "DELETE FROM informers WHERE name = ?");

type Row = { name: string; spec: string; source: InformerSource; created_at: number; updated_at: number };

function toRegistered(row: Row): RegisteredInformer {
  return { name: row.name, spec: JSON.parse(row.spec), source: row.source, createdAt: row.created_at, updatedAt: row.updated_at };
}

export class InformerRegistry {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "informer_registry", MIGRATIONS);
  }

  get(name: string): RegisteredInformer | undefined {
    const row = this.#db.first<Row>(GET, name);
    return row && toRegistered(row);
  }

  list(): RegisteredInformer[] {
    return this.#db.all<Row>(LIST).map(toRegistered);
  }

  put(spec: InformerSpec, source: InformerSource, now: number): void {
    this.#db.run(PUT, spec.name, JSON.stringify(spec), source, now, now);
  }

  delete(name: string): boolean {
    return this.#db.run(DELETE, name) > 0;
  }
}
