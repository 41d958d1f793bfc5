/**
 * A Db that dies at a kill -9: from then on every statement of the modules built on it throws, so a
 * dead incarnation's loops (a drain, a watcher) never reach storage again. What survives is what
 * was committed; the next incarnation is built anew over the same storage.
 */
import { Db, type Row, type Statement } from "../../src/sql.ts";

export class KillableDb extends Db {
  #dead = false;

  kill(): void {
    this.#dead = true;
  }

  override all<T extends Row>(s: Statement, ...bindings: unknown[]): T[] {
    this.#alive();
    return super.all<T>(s, ...bindings);
  }

  override run(s: Statement, ...bindings: unknown[]): number {
    this.#alive();
    return super.run(s, ...bindings);
  }

  override transaction<T>(fn: () => T): T {
    this.#alive();
    return super.transaction(fn);
  }

  #alive(): void {
    if (this.#dead) throw new Error("killed: this incarnation is gone");
  }
}
