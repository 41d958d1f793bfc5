/**
 * Room for a relist's staged copy (delta-fifo-replace.ts): a relist over a cache stages what it
 * lists beside the cache until its Replace is committed and popped, so for a while the database
 * holds the cache about twice. A Durable Object's SQLite stops at 10 GB with SQLITE_FULL, which the
 * informer could only retry for ever (review N5, B10b). So a relist is refused before that:
 *
 * Guarantees:
 * - Before the first page is staged, a relist is refused when the database's size plus an
 *   estimate of the copy (the database less the event log's bytes: the cache, its indexes and the
 *   queue, an upper bound of the bodies a relist may stage) would pass the stage line, the
 *   platform's limit less STAGE_RESERVE_FRACTION (room for the commit's queue and events).
 * - Between pages, a staging that has grown to the stage line stops.
 * - A refusal is a StageRefused error whose message says which figures, fit for a status's
 *   `lastError`: the informer records it (reason "Storage"), logs a warn line, backs off and tries
 *   again; the cache keeps serving its last complete state meanwhile. Nothing here writes.
 * - The initial list (an empty cache, applied page by page, nothing staged) is never checked.
 */

/** The share of the platform's limit kept free of staged copies (500 MB of 10 GB). */
export const STAGE_RESERVE_FRACTION = 0.05;

/** A relist refused for want of room to stage it. */
export class StageRefused extends Error {
  override name = "StageRefused";
}

/** The size a staged copy may bring the database to: the limit less its reserve. */
export function stageLineBytes(limitBytes: number): number {
  return limitBytes * (1 - STAGE_RESERVE_FRACTION);
}

/** Before a relist stages its first page: a refusal when `bytes` plus `estimateBytes` would pass the stage line. */
export function stageStartRefusal(bytes: number, estimateBytes: number, limitBytes: number): StageRefused | undefined {
  const line = stageLineBytes(limitBytes);
  if (bytes + estimateBytes <= line) return undefined;
  return new StageRefused(
    `relist refused: staging a copy of the cache (about ${estimateBytes} bytes) on a database of ${bytes} bytes would pass ${line} bytes ` +
      `(the platform's limit of ${limitBytes} per object less ${STAGE_RESERVE_FRACTION * 100}%); the cache keeps its last complete state, ` +
      `and the relist is tried again: split the informer (namespaces, selectors) or drop fields`,
  );
}

/** Between a relist's pages: a refusal once the database has grown to the stage line. */
export function stagePageRefusal(bytes: number, limitBytes: number): StageRefused | undefined {
  const line = stageLineBytes(limitBytes);
  if (bytes <= line) return undefined;
  return new StageRefused(
    `relist refused: the database's ${bytes} bytes passed ${line} bytes while staging (the platform's limit of ${limitBytes} per object less ${STAGE_RESERVE_FRACTION * 100}%); ` +
      `the cache keeps its last complete state, and the relist is tried again`,
  );
}
