/**
 * A change to one object as the DeltaFIFO queues it (client-go `Delta`): its type and the state it
 * brings. Types only; the queue is delta-fifo.ts.
 */
import type { KubeObject } from "../kube/types.ts";

export type DeltaType = "Added" | "Updated" | "Deleted" | "Replaced" | "Sync";

export interface Delta {
  type: DeltaType;
  /** The object's JSON; for a tombstone its last known state, or null when none was known. */
  body: string | null;
  /** A deletion inferred at relist (client-go `DeletedFinalStateUnknown`). */
  tombstone: boolean;
  /** The state's resourceVersion; a tombstone's is the relist's (the deletion's is unknown, it was by then). */
  resourceVersion: string;
  uid: string;
  /**
   * The object `body` was made from, when it is at hand (queued in this transaction, not read back
   * from storage): field indexes read it instead of parsing the body again. Never changed.
   */
  object?: KubeObject;
}
