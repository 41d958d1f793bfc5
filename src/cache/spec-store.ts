/**
 * The informer object's own configuration row: its validated spec and, for tests and multi-cluster
 * setups, an API server URL that overrides `KUBE_API_URL`. Kept apart from the informer's working
 * state so that deleting or re-pointing an informer is one clear step.
 */
import type { InformerSpec } from "../config.ts";
import { type Db, migrate, stmt } from "../sql.ts";

export interface StoredSpec {
  spec: InformerSpec;
  apiUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

const MIGRATIONS = [
  `CREATE TABLE informer_spec (
     id INTEGER PRIMARY KEY CHECK (id = 1), spec TEXT NOT NULL, api_url TEXT,
     created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
] as const;

const GET = stmt("specStore.get", "SELECT spec, api_url, created_at, updated_at FROM informer_spec WHERE id = 1");
const PUT = stmt(
  "specStore.put",
  `INSERT INTO informer_spec (id, spec, api_url, created_at, updated_at) VALUES (1, ?, ?, ?, ?)
   ON CONFLICT (id) DO UPDATE SET spec = excluded.spec, api_url = excluded.api_url, updated_at = excluded.updated_at`,
);

export class SpecStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
    migrate(db, "spec_store", MIGRATIONS);
  }

  get(): StoredSpec | undefined {
    const row = this.#db.first<{ spec: string; api_url: string | null; created_at: number; updated_at: number }>(GET);
    return row && { spec: JSON.parse(row.spec), apiUrl: row.api_url, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  put(spec: InformerSpec, apiUrl: string | null, now: number): void {
    this.#db.run(PUT, JSON.stringify(spec), apiUrl, now, now);
  }
}
