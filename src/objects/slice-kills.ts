/**
 * Slices that were killed (review B9): an alarm cut off by the platform for CPU or memory, or by a
 * deploy's reset, never reaches its `finally`, and the platform retries it a few times and then
 * drops it, with nothing in our state to say so. So a slice marks itself started, durably, before
 * it does any work, and finished in its `finally`; the next slice that finds the mark still there
 * knows its predecessor never ended.
 *
 * Guarantees:
 * - A slice that never ended and was started under another version of the Worker than the one
 *   running now (the `CF_VERSION_METADATA` binding's id) was ended by a deploy (or a `wrangler
 *   secret put`, which makes a version too): not a kill, and neither a kill nor a clean slice in a
 *   row (review N10). Without a version on both sides (no binding; a mark made before it), it is
 *   counted a kill, as it always was.
 * - `kills` counts killed slices since the object was configured (a counter: deleteAll resets it).
 * - After KILLS_BEFORE_SHRINKING killed slices in a row, `shrunk` is set: the object does less per
 *   alarm from then on (the informer lists in pages it resumes at, reflector.ts `listInPages`),
 *   since a slice that was killed once will be killed again doing the same work. After
 *   CLEAN_SLICES_BEFORE_GROWING slices in a row that finished, it is cleared (review N10: it stayed
 *   set for good, every later relist a paged quorum read); if whole lists still get killed, the
 *   next kills in a row set it again.
 * - A slice stopped on purpose (a reconfiguration, a deletion) reaches its `finally`: not a kill.
 * - `retried` counts a kill the platform reported instead, by retrying the alarm (whose handler
 *   never throws, so a retry means the last run never returned): one write per kill, none per
 *   slice, for objects whose slices are too many and too short to mark each (subscriptions).
 *
 * It does not tell CPU from memory: the platform says nothing to the next alarm. A slice killed
 * for CPU whose retry comes only after a deploy is taken for the deploy's. It stores in the
 * object's synchronous key-value storage (no table of its own: src/objects holds no SQL), and only
 * for an object that holds something, so an unconfigured object stays empty.
 */

/** Killed slices in a row after which the object shrinks its work per alarm. */
export const KILLS_BEFORE_SHRINKING = 2;
/** Finished slices in a row after which a shrunk object does its whole work per alarm again. */
export const CLEAN_SLICES_BEFORE_GROWING = 3;

/** What the previous slice's end was, as the next one finds it. */
export type SliceEnd = "finished" | "killed" | "deploy";

/** The object's synchronous key-value storage (`ctx.storage.kv`), as far as this needs it. */
export interface SliceMarkStore {
  get<T>(key: string): T | undefined;
  put<T>(key: string, value: T): void;
}

export interface SliceKillCounts {
  kills: number;
  /** When the last killed slice had started (ms since epoch). */
  lastKillAt: number | null;
  /** Work per alarm is shrunk (see the contract). */
  shrunk: boolean;
}

interface Stored extends SliceKillCounts {
  /** When the running slice started; null between slices. */
  startedAt: number | null;
  /** The Worker's version the running slice started under; null when unknown. */
  version: string | null;
  /** Killed slices since the last that finished. */
  streak: number;
  /** Finished slices since the last killed one. */
  clean: number;
}

const KEY = "slice-kills";
const NONE: Stored = { startedAt: null, version: null, streak: 0, clean: 0, kills: 0, lastKillAt: null, shrunk: false };

export class SliceKills {
  readonly #store: SliceMarkStore;
  readonly #version: string | null;

  /** `version`: the running Worker's version id (`CF_VERSION_METADATA.id`), when it has the binding. */
  constructor(store: SliceMarkStore, version?: string) {
    this.#store = store;
    this.#version = version ?? null;
  }

  /** Marks a slice started at `now`; answers how the previous one ended (and counts a kill). */
  begin(now: number): SliceEnd {
    const stored = this.#read();
    const end = endOf(stored, this.#version);
    const killed = end === "killed";
    const streak = killed ? stored.streak + 1 : stored.streak;
    this.#store.put<Stored>(KEY, {
      startedAt: now,
      version: this.#version,
      streak,
      clean: killed ? 0 : stored.clean,
      kills: stored.kills + (killed ? 1 : 0),
      lastKillAt: killed ? stored.startedAt : stored.lastKillAt,
      shrunk: stored.shrunk || streak >= KILLS_BEFORE_SHRINKING,
    });
    return end;
  }

  /** The slice reached its end (returned or threw): not a kill. */
  finish(): void {
    const stored = this.#read();
    if (stored.startedAt === null) return;
    const clean = stored.clean + 1;
    const grown = stored.shrunk && clean >= CLEAN_SLICES_BEFORE_GROWING;
    this.#store.put<Stored>(KEY, { ...stored, startedAt: null, streak: 0, clean: grown ? 0 : clean, shrunk: stored.shrunk && !grown });
  }

  /** The platform retried the alarm of a slice that started at about `at`: count it killed (no mark involved). */
  retried(at: number): void {
    const stored = this.#read();
    this.#store.put<Stored>(KEY, { ...stored, kills: stored.kills + 1, lastKillAt: at });
  }

  /** Runs `work` as a marked slice. */
  async during<T>(now: number, work: () => Promise<T>, onEnded: (end: Exclude<SliceEnd, "finished">, counts: SliceKillCounts) => void): Promise<T> {
    const end = this.begin(now);
    if (end !== "finished") onEnded(end, this.counts());
    try {
      return await work();
    } finally {
      this.finish();
    }
  }

  counts(): SliceKillCounts {
    const { kills, lastKillAt, shrunk } = this.#read();
    return { kills, lastKillAt, shrunk };
  }

  #read(): Stored {
    return { ...NONE, ...this.#store.get<Partial<Stored>>(KEY) };
  }
}

/** How the slice `stored` marks ended, seen from a slice of `version`. */
function endOf(stored: Stored, version: string | null): SliceEnd {
  if (stored.startedAt === null) return "finished";
  return stored.version !== null && version !== null && stored.version !== version ? "deploy" : "killed";
}
