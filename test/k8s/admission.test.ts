/**
 * ReadAdmission and WatcherCaps by themselves (admission.ts, watcher-caps.ts): slots go to waiters
 * in arrival order, the next part of an admitted read is never shed, releases count once, a read
 * may hold its slot between its parts, and a credential's places are its own.
 */
import { describe, expect, it } from "vitest";
import { HeldSlots, inSlot, ReadAdmission } from "../../src/k8s/admission.ts";
import { isRefusal, WatcherCaps } from "../../src/k8s/watcher-caps.ts";

describe("ReadAdmission", () => {
  it("runs `running` at once, queues `queued`, sheds the rest, and hands a freed slot to the first waiter", async () => {
    const admission = new ReadAdmission({ running: 1, queued: 2 });
    const order: string[] = [];
    const first = await admission.enter()!;
    const waiters = ["a", "b"].map((name) => admission.enter()!.then((slot) => (order.push(name), slot)));
    expect(admission.enter()).toBeUndefined(); // shed: the queue is full
    // The next page of an admitted list waits beyond the queue's bound, never shed.
    const admitted = admission.enterAdmitted().then((slot) => (order.push("next-page"), slot));
    expect([admission.running, admission.queued]).toEqual([1, 3]);
    first.release();
    first.release(); // counts once
    const a = await waiters[0]!;
    expect([admission.running, admission.queued]).toEqual([1, 2]);
    a.release();
    (await waiters[1]!).release();
    (await admitted).release();
    expect(order).toEqual(["a", "b", "next-page"]);
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
