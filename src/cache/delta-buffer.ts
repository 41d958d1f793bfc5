/**
 * The DeltaFIFO's in-memory buffer (`DeltaFIFO.bufferedInTx`): while nothing is queued in storage,
 * a transaction that queues deltas and pops them at once (a watch chunk, a page of the initial
 * list) keeps them here instead of in `fifo_deltas`.
 *
 * Guarantees: keys keep queue order (the order of their first delta) and each key its deltas,
 * oldest first, as the stored queue does; what the transaction leaves unpopped is written out
 * (`flushBufferInTx`) with ids and queue positions as if each delta had been queued in storage, so
 * the outcome is the same as writing every delta, without writing bodies that are popped at once.
 */
import { chunks, type Db, MAX_BOUND_PARAMETERS, placeholders, stmt } from "../sql.ts";
import type { Delta } from "./delta.ts";
import { lastDeltaId } from "./delta-fifo-replace.ts";

/** Deltas by key in queue order (a Map keeps insertion order). */
export type DeltaBuffer = Map<string, Delta[]>;

const DELTA_COLUMNS = 7;
const insertDeltaRows = (rows: number) =>
  stmt(
    "fifo.insertDeltas",
    `INSERT INTO fifo_deltas (id, key, type, body, tombstone, rv, uid) VALUES ${placeholders(rows, DELTA_COLUMNS)}`,
  );
const enqueueKeyRows = (rows: number) =>
  stmt("fifo.enqueueKeys", `INSERT OR IGNORE INTO fifo_queue (key, pos) VALUES ${placeholders(rows, 2)}`);

/** Takes up to `max` keys, with their deltas, from the head of `buffer`. */
export function takeBuffered(buffer: DeltaBuffer, max: number): { key: string; deltas: Delta[] }[] {
  const popped: { key: string; deltas: Delta[] }[] = [];
  for (const [key, deltas] of buffer) {
    if (popped.length === max) break;
    popped.push({ key, deltas });
    buffer.delete(key);
  }
  return popped;
}

/** Writes buffered deltas to storage as if each had been queued there. */
export function flushBufferInTx(db: Db, buffer: DeltaBuffer): void {
  if (buffer.size === 0) return;
  let id = lastDeltaId(db);
  const rows: unknown[][] = [];
  const keys: unknown[][] = [];
  for (const [key, deltas] of buffer) {
    keys.push([key, id + 1]);
    for (const d of deltas) rows.push([++id, key, d.type, d.body, d.tombstone ? 1 : 0, d.resourceVersion, d.uid]);
  }
  for (const chunk of chunks(rows, Math.floor(MAX_BOUND_PARAMETERS / DELTA_COLUMNS))) {
    db.run(insertDeltaRows(chunk.length), ...chunk.flat());
  }
  for (const chunk of chunks(keys, MAX_BOUND_PARAMETERS / 2)) db.run(enqueueKeyRows(chunk.length), ...chunk.flat());
  buffer.clear();
}
