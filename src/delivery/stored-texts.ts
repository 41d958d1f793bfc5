/**
 * Event texts of a subscription (its outbox's and its dead letters'), stored by name in chunks
 * below SQLite's 2 MB row limit: an update carries two objects of up to 1.5 MB each.
 *
 * Guarantees:
 * - A text reads back exactly as written, whatever its size (one chunk at least, so "" is stored).
 * - Names say whose a text is (`outboxText`, `deadLetterText`): the outbox's are removed together
 *   with their batch, and one moves to the dead letters by a rename, never a copy.
 * - Writes go through the caller's `run` (subscription-row.ts `Run`), inside its transaction.
 */
import { type Db, stmt } from "../sql.ts";
import type { Run } from "./subscription-row.ts";

/** Text chunk size: well under the 2 MB row limit. */
export const CHUNK_CHARS = 512 * 1024;

const TEXT_PARTS = stmt("texts.get", "SELECT chunk FROM texts WHERE name = ? ORDER BY part");
const PUT_TEXT_PART = stmt("texts.put", "INSERT OR REPLACE INTO texts (name, part, chunk) VALUES (?, ?, ?)");
const DELETE_TEXT = stmt("texts.delete", "DELETE FROM texts WHERE name = ?");
const DELETE_OUTBOX_TEXTS = stmt("texts.deleteOutbox", "DELETE FROM texts WHERE name >= 'out:' AND name < 'out;'");
const RENAME_TEXT = stmt("texts.rename", "UPDATE texts SET name = ? WHERE name = ?");

export const outboxText = (index: number) => `out:${index}`;
export const deadLetterText = (eventId: string) => `dead:${eventId}`;

export class StoredTexts {
  readonly #db: Db;
  readonly #run: Run;

  constructor(db: Db, run: Run) {
    this.#db = db;
    this.#run = run;
  }

  /** Writes a text under a name that is free (outbox texts are cleared with their batch). */
  put(name: string, text: string): void {
    for (let part = 0, start = 0; part === 0 || start < text.length; part++, start += CHUNK_CHARS) {
      this.#run(PUT_TEXT_PART, name, part, text.slice(start, start + CHUNK_CHARS));
    }
  }

  get(name: string): string | undefined {
    const parts = this.#db.all<{ chunk: string }>(TEXT_PARTS, name);
    return parts.length === 0 ? undefined : parts.map((p) => p.chunk).join("");
  }

  delete(name: string): void {
    this.#run(DELETE_TEXT, name);
  }

  /** Removes every outbox text. */
  deleteOutboxTexts(): void {
    this.#run(DELETE_OUTBOX_TEXTS);
  }

  rename(from: string, to: string): void {
    this.#run(RENAME_TEXT, to, from);
  }
}
