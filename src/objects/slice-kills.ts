/**
 * Slices that were killed (review B9): an alarm cut off by the platform for CPU or memory, or by a
 * deploy's reset, never reaches its `finally`, and the platform retries it a few times and then
 * drops it, with nothing in our state to say so. So a slice marks itself started, durably, before
 * it does any work, and finished in its `finally`; the next slice that finds the mark still there
 * knows its predecessor was killed.
 *
 * Guarantees:
 * - `kills` counts killed slices since the object was configured (a counter: deleteAll resets it).
 * - After KILLS_BEFORE_SHRINKING killed slices in a row, `shrunk` is set and stays set: the object
 *   does less per alarm from then on (the informer lists in pages it resumes at, reflector.ts
 *   `listInPages`), since a slice that was killed once will be killed again doing the same work.
 * - A slice stopped on purpose (a reconfiguration, a deletion) reaches its `finally`: not a kill.
 * - `retried` counts a kill the platform reported instead, by retrying the alarm (whose handler
 *   never throws, so a retry means the last run never returned): one write per kill, none per
 *   slice, for objects whose slices are too many and too short to mark each (subscriptions).
 *
 * It does not tell CPU from memory from a deploy: the platform says nothing to the next alarm. It
 * stores in the object's synchronous key-value storage (no table of its own: src/objects holds no
 * SQL), and only for an object that holds something, so an unconfigured object stays empty.
 */

/** Killed slices in a row after which the object shrinks its work per alarm. */
export const KILLS_BEFORE_SHRINKING = 2;

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
  /** Killed slices since the last that finished. */
  streak: number;
}

const KEY = "slice-kills";
const NONE: Stored = { startedAt: null, streak: 0, kills: 0, lastKillAt: null, shrunk: false };

export class SliceKills {
  readonly #store: SliceMarkStore;

  constructor(store: SliceMarkStore) {
    this.#store = store;
  }

  /** Marks a slice started at `now`; answers whether the previous one was killed (and counts it). */
  begin(now: number): boolean {
    const stored = this.#read();
    const killed = stored.startedAt !== null;
    const streak = killed ? stored.streak + 1 : 0;
    this.#store.put<Stored>(KEY, {
      startedAt: now,
      streak,
      kills: stored.kills + (killed ? 1 : 0),
      lastKillAt: killed ? stored.startedAt : stored.lastKillAt,
      shrunk: stored.shrunk || streak >= KILLS_BEFORE_SHRINKING,
    });
    return killed;
  }

  /** The slice reached its end (returned or threw): not a kill. */
  finish(): void {
    const stored = this.#read();
    if (stored.startedAt !== null) this.#store.put<Stored>(KEY, { ...stored, startedAt: null, streak: 0 });
  }

  /** The platform retried the alarm of a slice that started at about `at`: count it killed (no mark involved). */
  retried(at: number): void {
    const stored = this.#read();
    this.#store.put<Stored>(KEY, { ...stored, kills: stored.kills + 1, lastKillAt: at });
  }

  /** Runs `work` as a marked slice. */
  async during<T>(now: number, work: () => Promise<T>, onKilled: (counts: SliceKillCounts) => void): Promise<T> {
    if (this.begin(now)) onKilled(this.counts());
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
