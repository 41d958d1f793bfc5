/**
 * Rows per operation (issue 19): what a Db's tally (src/sql-rows.ts) counted while an operation
 * ran, added up over the runs that are measured and divided by how many units they covered, with
 * the statements that made them, most written first. Counts are deterministic: the same operation
 * on the same state reads and writes the same rows, so budgets on them are exact tests.
 */
import type { RowTally, StatementRows } from "../../src/sql-rows.ts";

export interface StatementCost extends StatementRows {
  name: string;
}

/** Rows per unit of an operation. */
export interface Rows {
  written: number;
  read: number;
  /** Each statement's rows and runs per unit, most written (then most read) first. */
  statements: StatementCost[];
}

export class Meter {
  readonly #tally: RowTally;
  #written = 0;
  #read = 0;
  readonly #statements = new Map<string, StatementRows>();

  constructor(tally: RowTally) {
    tally.keepStatements();
    this.#tally = tally;
  }

  /** Runs `fn`, adding what the tally counted meanwhile. Nothing else may use the tally's Db then. */
  async during<T>(fn: () => T | Promise<T>): Promise<T> {
    const totals = this.#tally.totals();
    const statements = this.#tally.statements();
    try {
      return await fn();
    } finally {
      this.#written += this.#tally.written - totals.written;
      this.#read += this.#tally.read - totals.read;
      for (const [name, now] of this.#tally.statements()) {
        const before = statements.get(name) ?? { read: 0, written: 0, runs: 0 };
        const sum = this.#statements.get(name) ?? { read: 0, written: 0, runs: 0 };
        this.#statements.set(name, { read: sum.read + now.read - before.read, written: sum.written + now.written - before.written, runs: sum.runs + now.runs - before.runs });
      }
    }
  }

  /** Everything measured so far, per one of `units`. */
  per(units: number): Rows {
    const statements = [...this.#statements]
      .filter(([, rows]) => rows.runs > 0)
      .map(([name, rows]) => ({ name, written: rows.written / units, read: rows.read / units, runs: rows.runs / units }));
    return { written: this.#written / units, read: this.#read / units, statements: ordered(statements) };
  }
}

/** Rows of several parts of one operation, each already per unit (an idle minute's watch and its cron tick). */
export function sum(...parts: Rows[]): Rows {
  const statements = new Map<string, StatementCost>();
  for (const { name, written, read, runs } of parts.flatMap((part) => part.statements)) {
    const had = statements.get(name);
    statements.set(name, had ? { name, written: had.written + written, read: had.read + read, runs: had.runs + runs } : { name, written, read, runs });
  }
  return {
    written: parts.reduce((total, part) => total + part.written, 0),
    read: parts.reduce((total, part) => total + part.read, 0),
    statements: ordered([...statements.values()]),
  };
}

function ordered(statements: StatementCost[]): StatementCost[] {
  return statements.sort((a, b) => b.written - a.written || b.read - a.read || a.name.localeCompare(b.name));
}
