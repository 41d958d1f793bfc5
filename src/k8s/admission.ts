/**
 * Admission of heavy reads on one informer object (review B3, A7, N1): the reads that walk the whole
 * cache — a watch from RV ""/"0" (its initial events are a full listing), a list without `limit`,
 * a list with a selector (a scan that parses objects; `/k8s`, the query API or `/search`) — run at
 * most HEAVY_READS_RUNNING at a time; up to HEAVY_READS_QUEUED more wait their turn, at most
 * HEAVY_READS_QUEUED_PER_CREDENTIAL of them one credential's, and any beyond that is shed with a 429
 * TooManyRequests Status and `Retry-After`, as kube-apiserver's APF sheds what its queues cannot hold.
 *
 * Why: an informer object is one thread, shared by its reflector's ingest and by every read. N
 * full listings at once make the object N times as busy for as long; ingest falls behind and the
 * upstream watch is closed as unresponsive. Bounding them keeps the thread's share of reads bounded;
 * shedding keeps the queue (and the memory of waiting readers) bounded.
 *
 * Fair per credential (review N1, as APF's fair queuing is per flow): each read names its owner (the
 * credential). A freed slot goes to the waiting owner that runs the fewest heavy reads, owners in
 * turn among equals, and within an owner to the next part of a read it already runs before a new
 * read. A slot idle between two parts of a read (parked: its client drains the page before) is
 * taken from it the moment another owner waits, so ten slow streams of one credential hold no
 * slot while they drain; the read's next part then queues, never shed. One owner alone keeps
 * today's behaviour: its own waiters take no slot parked by it.
 *
 * Guarantees:
 * - `enter` decides at once: a slot (now, or once one frees up) or undefined (shed). `enterAdmitted`
 *   never sheds: the next part of a read already admitted (a list's next page, whose answer is
 *   already streaming), queued like the others but beyond the queue's bounds.
 * - A slot counts until released; releasing twice counts once; a freed slot goes to a waiter at once.
 * - A list without limit keeps its slot parked from one page to the next (`HeldSlots`): its pages
 *   never wait behind reads of its own credential that came after it. Queued between its pages, it
 *   fell so far behind the ingest those reads let run that its position expired and its body broke
 *   off mid-list (issue 27: 5 of 48 lists of 9.5 MB under 600 changes/s). A held slot not used again
 *   within HELD_SLOT_IDLE_MS (a slow or vanished client) is released; the list's next page then queues.
 * - A watch's initial listing (`ListingTurns`) takes its turn page by page: the slot is parked while
 *   the page is written to its client.
 *
 * Heavy work done while holding a slot yields to the event loop between batches (yieldToEventLoop,
 * src/clock.ts), so ingest and light reads run in between; that is also what lets several admitted
 * reads overlap at all.
 */

/** Heavy reads running at once on one informer object (A7: "one or two" full listings). */
export const HEAVY_READS_RUNNING = 2;
/** Heavy reads waiting for a slot at most; more are shed. */
export const HEAVY_READS_QUEUED = 8;
/**
 * New heavy reads of one credential waiting at most (review N1): with 8 places, a credential takes
 * at most a quarter of the queue, so three others still find room while it loops.
 */
export const HEAVY_READS_QUEUED_PER_CREDENTIAL = 2;
/** A heavy read takes up to a few seconds: a shed client retries after a second, as APF advises. */
export const HEAVY_READ_RETRY_AFTER_SECONDS = 1;
/** What a shed read is told. */
export const HEAVY_READ_SHED_MESSAGE = "too many requests that read the whole cache of this resource are running: try again later";

/** A list's page that is a heavy read: the read's first (may be shed) or a next one of an admitted read (never shed). */
export type HeavyRead = "first" | "next";

/** A page of a heavy read: which part, for whom (a credential's name), and the name its slot is held under between pages, if it is. */
export interface HeavyReadPart {
  part: HeavyRead;
  owner?: string;
  hold?: string;
}

/** Who a heavy read is for when it does not say: admission is fair between owners (credentials). */
export const ANONYMOUS_OWNER = "anonymous";

/** How long a held slot waits for its list's next page before it is released. */
export const HELD_SLOT_IDLE_MS = 5_000;

export interface ReadSlot {
  release(): void;
}

/**
 * A slot of this object's own admission: besides releasing it, its read may park it between two of
 * its parts (its client drains what it was sent) and resume it for the next part.
 */
export interface AdmittedSlot extends ReadSlot {
  /** Idle until `resume`: another owner's waiter takes it meanwhile (`onTaken` is told). */
  park(onTaken?: () => void): void;
  /** Busy again; false when it was taken while parked (released: the read enters again). */
  resume(): boolean;
}

export interface AdmissionLimits {
  running: number;
  queued: number;
  /** New reads of one owner waiting at most (default HEAVY_READS_QUEUED_PER_CREDENTIAL). */
  queuedPerOwner?: number;
}

/** A read that holds its slot between its parts: under `name` in `slots`, while `more` says parts follow. */
export interface HoldSlot<T> {
  slots: HeldSlots;
  name: string;
  more(result: T): boolean;
}

/**
 * Runs `work` in a slot of `admission` for `owner` (a "first" part may be shed: "shed" then, and
 * `work` never runs), releasing the slot however `work` ends — or, with `hold`, in the slot held for
 * the read's earlier part when there is one, and holding the slot on while more parts follow.
 */
export async function inSlot<T>(admission: ReadAdmission, part: HeavyRead, work: () => Promise<T>, hold?: HoldSlot<T>, owner = ANONYMOUS_OWNER): Promise<T | "shed"> {
  const held = hold?.slots.take(hold.name);
  const entering = held ? Promise.resolve(held) : part === "first" ? admission.enter(owner) : admission.enterAdmitted(owner);
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

/** One owner's waiting reads: next parts of reads it runs go before its new reads. */
interface OwnerQueue {
  next: (() => void)[];
  first: (() => void)[];
}

/** A slot as admission tracks it. */
interface SlotState {
  owner: string;
  released: boolean;
  /** Set while parked: what to tell its read when another owner takes it. */
  parked?: () => void;
}

export class ReadAdmission {
  readonly #limits: Required<AdmissionLimits>;
  #running = 0;
  readonly #runningBy = new Map<string, number>();
  /** Owners with waiting reads, in the order they are served among equals (served: moved last). */
  readonly #queues = new Map<string, OwnerQueue>();
  #waiting = 0;
  #waitingFirst = 0;
  /** Slots parked between two parts of their reads, oldest first: what another owner's waiter may take. */
  readonly #parked = new Set<SlotState>();
  /** The most that ever ran at once: what tests of the bound read. */
  #peak = 0;
  /** Slots taken from parked reads for another owner's waiter (tests and metrics). */
  #taken = 0;

  constructor(limits: AdmissionLimits = { running: HEAVY_READS_RUNNING, queued: HEAVY_READS_QUEUED }) {
    this.#limits = { queuedPerOwner: HEAVY_READS_QUEUED_PER_CREDENTIAL, ...limits };
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting;
  }

  get peak(): number {
    return this.#peak;
  }

  /** How many parked slots were taken for another owner's waiter. */
  get taken(): number {
    return this.#taken;
  }

  /** Heavy reads `owner` runs now (parked slots included). */
  runningOf(owner: string): number {
    return this.#runningBy.get(owner) ?? 0;
  }

  /** A slot for a new heavy read of `owner`, or undefined when the queue, or the owner's share of it, is full (shed it). */
  enter(owner = ANONYMOUS_OWNER): Promise<AdmittedSlot> | undefined {
    if (this.#free()) return Promise.resolve(this.#slot(owner));
    const queue = this.#queues.get(owner);
    const ownerWaiting = queue ? queue.first.length + queue.next.length : 0;
    if (this.#waitingFirst >= this.#limits.queued || ownerWaiting >= this.#limits.queuedPerOwner) return undefined;
    return this.#wait(owner, "first");
  }

  /** A slot for the next part of an admitted read of `owner`: waits however long the queue, never shed. */
  enterAdmitted(owner = ANONYMOUS_OWNER): Promise<AdmittedSlot> {
    if (this.#free()) return Promise.resolve(this.#slot(owner));
    return this.#wait(owner, "next");
  }

  /** Whether a slot is free and nobody waits for one. */
  #free(): boolean {
    return this.#running < this.#limits.running && this.#waiting === 0;
  }

  #wait(owner: string, part: keyof OwnerQueue): Promise<AdmittedSlot> {
    let queue = this.#queues.get(owner);
    if (!queue) this.#queues.set(owner, (queue = { next: [], first: [] }));
    const waiter = new Promise<AdmittedSlot>((resolve) => queue[part].push(() => resolve(this.#slot(owner))));
    this.#waiting++;
    if (part === "first") this.#waitingFirst++;
    this.#takeParked();
    return waiter;
  }

  /**
   * No slot stays parked while another owner waits: the oldest such is taken (its read enters again
   * for its next part) and handed to the fairest waiter.
   */
  #takeParked(): void {
    for (const state of this.#parked) {
      if (this.#waiting === 0) return;
      if (this.#queues.size === 1 && this.#queues.has(state.owner)) continue;
      this.#taken++;
      const told = state.parked;
      // Its own waiters go last among equals: the slot was taken for another credential's.
      const own = this.#queues.get(state.owner);
      if (own) {
        this.#queues.delete(state.owner);
        this.#queues.set(state.owner, own);
      }
      this.#releaseSlot(state);
      told?.();
    }
  }

  #slot(owner: string): AdmittedSlot {
    this.#running++;
    this.#runningBy.set(owner, (this.#runningBy.get(owner) ?? 0) + 1);
    this.#peak = Math.max(this.#peak, this.#running);
    const state: SlotState = { owner, released: false };
    return {
      release: () => this.#releaseSlot(state),
      park: (onTaken) => {
        if (state.released) return;
        state.parked = onTaken ?? (() => {});
        this.#parked.add(state);
        this.#takeParked();
      },
      resume: () => {
        this.#parked.delete(state);
        delete state.parked;
        return !state.released;
      },
    };
  }

  /** Frees `state`'s slot once and hands it to the fairest waiter. */
  #releaseSlot(state: SlotState): void {
    if (state.released) return;
    state.released = true;
    this.#parked.delete(state);
    delete state.parked;
    this.#running--;
    const left = (this.#runningBy.get(state.owner) ?? 1) - 1;
    if (left === 0) this.#runningBy.delete(state.owner);
    else this.#runningBy.set(state.owner, left);
    this.#dispatch();
  }

  /**
   * Free slots to waiters: the owner running the fewest heavy reads first, owners in turn among
   * equals (the one served goes last), its reads' next parts before its new reads.
   */
  #dispatch(): void {
    while (this.#running < this.#limits.running && this.#waiting > 0) {
      let chosen: string | undefined;
      for (const owner of this.#queues.keys()) {
        if (chosen === undefined || this.runningOf(owner) < this.runningOf(chosen)) chosen = owner;
      }
      const queue = this.#queues.get(chosen!)!;
      const next = queue.next.shift();
      const wake = next ?? queue.first.shift()!;
      this.#waiting--;
      if (!next) this.#waitingFirst--;
      this.#queues.delete(chosen!);
      if (queue.next.length + queue.first.length > 0) this.#queues.set(chosen!, queue);
      wake();
    }
  }
}

/**
 * Slots held between the pages of one read, by a name its caller chose (a list without limit: see
 * the contract). A slot is held only while its read has more pages, parked (another owner's waiter
 * may take it); one idle for HELD_SLOT_IDLE_MS is released.
 */
export class HeldSlots {
  readonly #held = new Map<string, { slot: AdmittedSlot; timer: ReturnType<typeof setTimeout> }>();
  readonly #idleMs: number;

  constructor(idleMs = HELD_SLOT_IDLE_MS) {
    this.#idleMs = idleMs;
  }

  /** The slot held for `name` (no longer held: the caller releases or holds it again), if any and not taken meanwhile. */
  take(name: string): AdmittedSlot | undefined {
    const held = this.#drop(name);
    return held?.resume() ? held : undefined;
  }

  /** Holds `slot` for the next part of `name`'s read, releasing it if none comes in time. */
  hold(name: string, slot: AdmittedSlot): void {
    this.take(name)?.release();
    const timer = setTimeout(() => this.take(name)?.release(), this.#idleMs);
    this.#held.set(name, { slot, timer });
    slot.park(() => this.#drop(name));
  }

  #drop(name: string): AdmittedSlot | undefined {
    const held = this.#held.get(name);
    if (!held) return undefined;
    clearTimeout(held.timer);
    this.#held.delete(name);
    return held.slot;
  }
}

/**
 * A heavy read made of pages whose client drains each page before the next (a watch's initial
 * listing): each page is read in a turn of the object's admission for `owner`, the first in the slot
 * the read was admitted with; between pages the slot is parked, so another credential's read takes
 * it while this client is slow (review N1: held for the whole listing, ten slow listings of one
 * credential shed everyone else's heavy reads for minutes).
 */
export class ListingTurns {
  readonly #admission: ReadAdmission;
  readonly #owner: string;
  #slot: Promise<AdmittedSlot> | AdmittedSlot;
  #ended = false;

  constructor(admission: ReadAdmission, owner: string, first: Promise<AdmittedSlot>) {
    this.#admission = admission;
    this.#owner = owner;
    this.#slot = first;
  }

  /** `read` in this listing's turn: the slot, resumed or entered again, parked once `read` is done. */
  async page<T>(read: () => Promise<T>): Promise<T> {
    if (this.#ended) throw new Error("the listing ended");
    let slot = await this.#slot;
    if (!slot.resume()) slot = await this.#admission.enterAdmitted(this.#owner);
    this.#slot = slot;
    try {
      return await read();
    } finally {
      if (this.#ended) slot.release();
      else slot.park();
    }
  }

  /** The listing is over (or its stream ended): its slot, parked or awaited, is released. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    void Promise.resolve(this.#slot).then((slot) => slot.release());
  }
}
