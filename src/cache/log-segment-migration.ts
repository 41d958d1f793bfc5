/**
 * The event log's move from a row per event (`event_log`, the release before issue 19's segments)
 * to segments: a migration step of event-log.ts, kept apart as it reads a table nothing else does.
 */
import { type Db, stmt } from "../sql.ts";
import { type LogEventType, writeSegmentsInTx } from "./log-segment.ts";

/**
 * Migration: the readable rows of the per-event table `event_log` become segments, each update, sync
 * and delete with the state its `prev_seq` pointed at, read and written a page at a time.
 */
const OLD_ROWS = stmt(
  "eventLog.migrateRows",
  `SELECT e.seq AS seq, e.type AS type, e.key AS key, e.uid AS uid, e.rv AS rv, COALESCE(e.body, p.body) AS body,
          p.body AS old_body, e.flags AS flags, e.at AS at
   FROM event_log e LEFT JOIN event_log p ON p.seq = e.prev_seq
   WHERE e.seq > ?1 AND e.seq >= (SELECT head FROM event_log_state WHERE id = 1) ORDER BY e.seq LIMIT ?2`,
);
const KEEP_NEXT_SEQ = stmt(
  "eventLog.migrateNextSeq",
  "UPDATE event_log_state SET next_seq = COALESCE((SELECT MAX(seq) + 1 FROM event_log), next_seq) WHERE id = 1",
);

export function moveRowsToSegments(db: Db): void {
  db.run(KEEP_NEXT_SEQ);
  type OldRow = { seq: number; type: LogEventType; key: string; uid: string; rv: string; body: string | null; old_body: string | null; flags: number; at: number };
  for (let after = 0; ; ) {
    const rows = db.all<OldRow>(OLD_ROWS, after, 64);
    if (rows.length === 0) return;
    // Events of one time were one transaction's: keep them together (SEGMENT_EVENTS and SEGMENT_TEXT still split them).
    const runs: OldRow[][] = [];
    for (const row of rows) {
      const run = runs.at(-1);
      if (run && run.at(-1)!.at === row.at && run.at(-1)!.seq === row.seq - 1) run.push(row);
      else runs.push([row]);
    }
    for (const run of runs) {
      writeSegmentsInTx(
        db,
        run.map((row) => ({
          seq: row.seq,
          type: row.type,
          key: row.key,
          uid: row.uid,
          resourceVersion: row.rv,
          body: row.body,
          oldBody: row.type === "add" ? null : row.old_body,
          initialList: (row.flags & 1) !== 0,
          finalStateUnknown: (row.flags & 2) !== 0,
          at: row.at,
        })),
      );
    }
    after = rows.at(-1)!.seq;
  }
}
