/**
 * The rows a `Db`'s statements read and wrote, as each statement's cursor reports them
 * (`rowsRead`, `rowsWritten`): what Cloudflare bills a Durable Object's SQLite by, every index entry
 * a row of its own (cloudflare-platform.md §1.1). Issue 19 counts them to cut them.
 *
 * Guarantees:
 * - Totals only grow while the tally lives, which is as long as its `Db`: in memory, so an eviction
 *   or a restart of the object starts them at 0 again (a counter reset to Prometheus). Storing them
 *   would itself cost a row written per count.
 * - Counting a statement costs two additions; the per-statement breakdown (tests, `npm run bench`)
 *   costs a map lookup more and is off until `keepStatements()` turns it on.
 * - A statement that fails is not counted (its cursor is never read).
 */

export interface RowCounts {
  read: number;
  written: number;
}

/** One statement's share, by its name (`stmt(name, …)`): rows, and how many times it ran. */
export interface StatementRows extends RowCounts {
  runs: number;
}

export class RowTally implements RowCounts {
  read = 0;
  written = 0;
  #statements: Map<string, StatementRows> | undefined;

  add(statement: string, read: number, written: number): void {
    this.read += read;
    this.written += written;
    if (this.#statements === undefined) return;
    const rows = this.#statements.get(statement);
    if (rows === undefined) this.#statements.set(statement, { read, written, runs: 1 });
    else {
      rows.read += read;
      rows.written += written;
      rows.runs += 1;
    }
  }

  /** Keeps a breakdown by statement from now on (what ran before is in the totals only). */
  keepStatements(): void {
    this.#statements ??= new Map();
  }

  /** The totals now, as a copy. */
  totals(): RowCounts {
    return { read: this.read, written: this.written };
  }

  /** The breakdown so far, as a copy; empty unless `keepStatements()` was called. */
  statements(): Map<string, StatementRows> {
    return new Map([...(this.#statements ?? [])].map(([name, rows]) => [name, { ...rows }]));
  }
}
