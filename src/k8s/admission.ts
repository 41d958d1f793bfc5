/**
 * Admission of heavy reads on one informer object (review B3, A7): the reads that walk the whole
 * cache — a watch from RV ""/"0" (its initial events are a full listing), a list without `limit`,
 * a list with a selector (a scan that parses objects; `/k8s` or the query API) — run at most HEAVY_READS_RUNNING at a time;
 * up to HEAVY_READS_QUEUED more wait their turn, and any beyond that is shed with a 429
 * TooManyRequests Status and `Retry-After`, as kube-apiserver's APF sheds what its queues cannot hold.
 *
 * Why: an informer object is one thread, shared by its reflector's ingest and by every read. N
 * full listings at once make the object N times as busy for as long; ingest falls behind and the
 * upstream watch is closed as unresponsive. Bounding them keeps the thread's share of reads bounded;
 * shedding keeps the queue (and the memory of waiting readers) bounded.
 *
 * Guarantees:
 * - `enter` decides at once: a slot (now, or once one frees up, in arrival order) or undefined
 *   (shed). `enterAdmitted` never sheds: the next part of a read already admitted (a list's next
 *   page, whose answer is already streaming), queued like the others but beyond the queue's bound.
 * - A slot counts until released; releasing twice counts once; a freed slot goes to the first waiter.
 * - A list without limit holds its slot from its first page to its last (`HeldSlots`): its pages
 *   never wait behind reads that came after it. Queued between its pages, it fell so far behind
 *   the ingest those reads let run that its position expired and its body broke off mid-list
 *   (issue 27: 5 of 48 lists of 9.5 MB under 600 changes/s). A held slot not used again within
 *   HELD_SLOT_IDLE_MS (a slow or vanished client) is released; the list's next page then queues.
 *
 * Heavy work done while holding a slot yields to the event loop between batches (yieldToEventLoop,
 * src/clock.ts), so ingest and light reads run in between; that is also what lets several admitted
 * reads overlap at all.
 */

/** Heavy reads running at once on one informer object (A7: "one or two" full listings). */
export const HEAVY_READS_RUNNING = 2;
/** Heavy reads waiting for a slot at most; more are shed. */
export const HEAVY_READS_QUEUED = 8;
/** A heavy read takes up to a few seconds: a shed client retries after a second, as APF advises. */
export const HEAVY_READ_RETRY_AFTER_SECONDS = 1;
/** What a shed read is told. */
export const HEAVY_READ_SHED_MESSAGE = "too many requests that read the whole cache of this resource are running: try again later";

/** A list's page that is a heavy read: the read's first (may be shed) or a next one of an admitted read (never shed). */
export type HeavyRead = "first" | "next";

/** How long a held slot waits for its list's next page before it is released. */
export const HELD_SLOT_IDLE_MS = 5_000;

export interface ReadSlot {
  release(): void;
}

export interface AdmissionLimits {
  running: number;
  queued: number;
}

/** A read that holds its slot between its parts: under `name` in `slots`, while `more` says parts follow. */
export interface HoldSlot<T> {
  slots: HeldSlots;
  name: string;
  more(result: T): boolean;
}

/**
 * Runs `work` in a slot of `admission` (a "first" part may be shed: "shed" then, and `work` never
 * runs), releasing the slot however `work` ends — or, with `hold`, in the slot held for the read's
 * earlier part when there is one, and holding the slot on while more parts follow.
 */
export async function inSlot<T>(admission: ReadAdmission, part: HeavyRead, work: () => Promise<T>, hold?: HoldSlot<T>): Promise<T | "shed"> {
  const held = hold?.slots.take(hold.name);
  const entering = held ? Promise.resolve(held) : part === "first" ? admission.enter() : admission.enterAdmitted();
  if (!entering) return "shed";
  const slot = await entering;
  let keep = false;
  try {
    const result = await work();
    keep = hold?.more(result) === true;
    return result;
  } finally {
    if (keep) hold!.slots.hold(hold!.name, slot);
    else slot.release();
  }
}

export class ReadAdmission {
  readonly #limits: AdmissionLimits;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  /** The most that ever ran at once: what tests of the bound read. */
  #peak = 0;

  constructor(limits: AdmissionLimits = { running: HEAVY_READS_RUNNING, queued: HEAVY_READS_QUEUED }) {
    this.#limits = limits;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  get peak(): number {
    return this.#peak;
  }

  /** A slot for a new heavy read, or undefined when the queue is full (shed it). */
  enter(): Promise<ReadSlot> | undefined {
    if (this.#running >= this.#limits.running && this.#waiting.length >= this.#limits.queued) return undefined;
    return this.enterAdmitted();
  }

  /** A slot for the next part of an admitted read: waits however long the queue, never shed. */
  enterAdmitted(): Promise<ReadSlot> {
    if (this.#running < this.#limits.running) return Promise.resolve(this.#slot());
    return new Promise<ReadSlot>((resolve) => this.#waiting.push(() => resolve(this.#slot())));
  }

  #slot(): ReadSlot {
    this.#running++;
    this.#peak = Math.max(this.#peak, this.#running);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#running--;
        this.#waiting.shift()?.();
      },
    };
  }
}

/**
 * Slots held between the pages of one read, by a name its caller chose (a list without limit: see
 * the contract). A slot is held only while its read has more pages; one idle for HELD_SLOT_IDLE_MS
 * is released.
 */
export class HeldSlots {
  readonly #held = new Map<string, { slot: ReadSlot; timer: ReturnType<typeof setTimeout> }>();
  readonly #idleMs: number;

  constructor(idleMs = HELD_SLOT_IDLE_MS) {
    this.#idleMs = idleMs;
  }

  /** The slot held for `name` (no longer held: the caller releases or holds it again), if any. */
  take(name: string): ReadSlot | undefined {
    const held = this.#held.get(name);
    if (!held) return undefined;
    clearTimeout(held.timer);
    this.#held.delete(name);
    return held.slot;
  }

  /** Holds `slot` for the next part of `name`'s read, releasing it if none comes in time. */
  hold(name: string, slot: ReadSlot): void {
    this.take(name)?.release();
    const timer = setTimeout(() => this.take(name)?.release(), this.#idleMs);
    this.#held.set(name, { slot, timer });
  }
}
