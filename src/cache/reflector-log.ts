/**
 * The reflector's notable transitions as log lines (src/log.ts): a relist with its cause, a watch
 * that dropped, a failing list. Read off two consecutive persisted states, so the state machine
 * stays free of logging and a line costs nothing when nothing notable happened.
 *
 * Volume: a relist or a dropped watch is rare and `info`/`warn`; a watch rotating at its server
 * timeout is routine and `debug`.
 */
import { logger } from "../log.ts";
import type { InformerIdentity } from "../log-identity.ts";
import { countersOf, RELIST_CAUSES } from "./reflector-counters.ts";
import type { ReflectorState } from "./reflector.ts";
import type { ReflectorMemory } from "./reflector-memory.ts";

interface Snapshot {
  state: ReflectorState;
  memory: ReflectorMemory;
}

export function logStep(identity: InformerIdentity, before: Snapshot, after: Snapshot & { wakeAt: number }): void {
  const was = countersOf(before.memory);
  const now = countersOf(after.memory);
  for (const cause of RELIST_CAUSES) {
    if (now.relists[cause] > was.relists[cause]) {
      logger.info("relist", { ...identity, cause, relists: after.memory.relists, lastError: before.memory.lastError });
    }
  }
  if (now.watchDrops > was.watchDrops) {
    logger.warn("watch dropped", {
      ...identity,
      reason: after.memory.lastErrorReason ?? null,
      error: after.memory.lastError,
      next: after.state.kind,
    });
  } else if (now.watchStarts > was.watchStarts && before.state.kind === "watching") {
    logger.debug("watch restarted", { ...identity, restarts: after.memory.watchRestarts });
  }
  if (before.state.kind === "listing" && after.memory.lastError !== null && after.memory.lastErrorAt !== before.memory.lastErrorAt) {
    logger.warn("list failed", { ...identity, reason: after.memory.lastErrorReason ?? null, error: after.memory.lastError, next: after.state.kind });
  }
}
