/**
 * ReadAdmission and WatcherCaps by themselves (admission.ts, watcher-caps.ts): slots go to waiters
 * in arrival order, the next part of an admitted read is never shed, releases count once, a read
 * may hold its slot between its parts, and a credential's places are its own.
 */
import { describe, expect, it } from "vitest";
import { HeldSlots, inSlot, ListingTurns, ReadAdmission, type ReadSlot } from "../../src/k8s/admission.ts";
import { isRefusal, WatcherCaps } from "../../src/k8s/watcher-caps.ts";

describe("ReadAdmission", () => {
  it("runs `running` at once, queues `queued`, sheds the rest, and hands a freed slot to an admitted read's next part first, then in arrival order", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 2 });
    const order: string[] = [];
    const first = await admission.enter()!;
    const waiters = ["a", "b"].map((name) => admission.enter()!.then((slot) => (order.push(name), slot)));
    expect(admission.enter()).toBeUndefined(); // shed: the queue is full
    // The next page of an admitted list waits beyond the queue's bound, never shed, and goes first:
    // it must not fall behind reads that came after its list (issue 27).
    const admitted = admission.enterAdmitted().then((slot) => (order.push("next-page"), slot));
    expect([admission.running, admission.queued]).toEqual([1, 3]);
    first.release();
    first.release(); // counts once
    (await admitted).release();
    const a = await waiters[0]!;
    expect([admission.running, admission.queued]).toEqual([1, 1]);
    a.release();
    (await waiters[1]!).release();
    expect(order).toEqual(["next-page", "a", "b"]);
    expect([admission.running, admission.queued, admission.peak]).toEqual([0, 0, 1]);
  });

  it("holds a read's slot from part to part while more follow, releases it after the last, and one left idle (HeldSlots)", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 2 });
    const slots = new HeldSlots(1);
    const hold = (more: boolean) => ({ slots, name: "list", more: () => more });
    await inSlot(admission, "first", async () => "page 1", hold(true));
    expect(admission.running).toBe(1); // held: a later read waits
    const later = admission.enter()!;
    expect(admission.queued).toBe(1);
    // The next part takes the held slot at once, ahead of the waiting read; the last one releases it.
    expect(await inSlot(admission, "next", async () => "page 2", hold(true))).toBe("page 2");
    expect(await inSlot(admission, "next", async () => "page 3", hold(false))).toBe("page 3");
    (await later).release();
    // A held slot whose read never asks again (its client went away) is released when idle.
    await inSlot(admission, "first", async () => "page 1", hold(true));
    expect(admission.running).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([admission.running, admission.peak]).toEqual([0, 1]);
  });

  it("releases a slot when the work throws, and sheds without running the work", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 0 });
    await expect(inSlot(admission, "first", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(admission.running).toBe(0);
    const held = await admission.enter()!;
    let ran = false;
    expect(await inSlot(admission, "first", async () => (ran = true))).toBe("shed");
    expect(ran).toBe(false);
    held.release();
  });
});

describe("ReadAdmission is fair per credential (review N1)", () => {
  it("queues at most a credential's share of the places, so a looping credential leaves room for the others", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 8, queuedPerOwner: 2 });
    const running = await admission.enter("hostile")!;
    const queued = [admission.enter("hostile"), admission.enter("hostile")];
    expect(queued.every(Boolean)).toBe(true);
    expect(admission.enter("hostile")).toBeUndefined(); // its share is full
    const others = ["team-1", "team-2", "team-3"].map((team) => admission.enter(team));
    expect(others.every(Boolean)).toBe(true);
    running.release();
    await Promise.all([...queued, ...others].map((slot) => slot!.then((held) => held.release())));
    expect(admission.running).toBe(0);
  });

  it("hands a freed slot to the credentials in turn, not in arrival order", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 8, queuedPerOwner: 4 });
    const order: string[] = [];
    const held = await admission.enter("a")!;
    const served: ReadSlot[] = [];
    for (const name of ["a", "a", "b", "c"]) void admission.enter(name)!.then((slot) => (order.push(name), served.push(slot)));
    held.release();
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      served[i]!.release(); // whichever was served runs alone; releasing it serves the next
    }
    expect(order).toEqual(["a", "b", "c", "a"]);
  });

  it("hands a freed slot to the credential running the fewest", async () => {
    const admission = new ReadAdmission({ running: 2, queued: 8, queuedPerOwner: 4 });
    const a1 = await admission.enter("a")!;
    const a2 = await admission.enter("a")!;
    const order: string[] = [];
    const a3 = admission.enter("a")!.then((slot) => (order.push("a"), slot));
    const b = admission.enter("b")!.then((slot) => (order.push("b"), slot));
    a1.release(); // a still runs one, b none: b goes first though a's came first
    (await b).release();
    a2.release();
    (await a3).release();
    expect(order).toEqual(["b", "a"]);
  });

  it("takes a slot parked between two parts of a read the moment another credential waits, never for its own", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 4 });
    const turns = new ListingTurns(admission, "slow", admission.enter("slow")!);
    expect(await turns.page(async () => "page 1")).toBe("page 1");
    expect(admission.running).toBe(1); // parked: its client drains page 1
    // Its own next read waits: one credential alone keeps today's behaviour.
    const own = admission.enter("slow")!;
    await Promise.resolve();
    expect([admission.running, admission.queued, admission.taken]).toEqual([1, 1, 0]);
    // Another credential's read takes the parked slot at once.
    const other = await admission.enter("team")!;
    expect(admission.taken).toBe(1);
    // The slow listing's next page waits its turn, ahead of its own credential's new read.
    const page2 = turns.page(async () => "page 2");
    await new Promise((resolve) => setTimeout(resolve, 0)); // page 2 waits for its turn
    other.release();
    expect(await page2).toBe("page 2");
    turns.end();
    (await own).release();
    expect([admission.running, admission.queued]).toEqual([0, 0]);
  });

  it("takes a list's held slot (parked between pages) for another credential; the list's next page then enters again", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 4 });
    const slots = new HeldSlots(60_000);
    const hold = { slots, name: "list", more: () => true };
    await inSlot(admission, "first", async () => "page 1", hold, "slow");
    const other = admission.enter("team")!;
    expect(admission.taken).toBe(1);
    expect(slots.take("list")).toBeUndefined(); // taken while held
    (await other).release();
    expect(await inSlot(admission, "next", async () => "page 2", { ...hold, more: () => false }, "slow")).toBe("page 2");
    expect(admission.running).toBe(0);
  });
});

describe("WatcherCaps", () => {
  it("caps each credential and the object, and frees a place once per release", () => {
    const caps = new WatcherCaps({ perObject: 3, perPrincipal: 2 });
    const a1 = caps.take("a");
    const a2 = caps.take("a");
    expect(isRefusal(caps.take("a"))).toBe(true);
    const b1 = caps.take("b");
    expect(caps.take("c")).toMatchObject({ refused: true, message: expect.stringContaining("at most 3") });
    if (isRefusal(a1) || isRefusal(a2) || isRefusal(b1)) throw new Error("expected places");
    a1.release();
    a1.release();
    expect(caps.open).toBe(2);
    expect(isRefusal(caps.take("a"))).toBe(false);
  });
});
