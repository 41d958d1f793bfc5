/**
 * ReadAdmission and WatcherCaps by themselves (admission.ts, watcher-caps.ts): slots go to waiters
 * in arrival order, the next part of an admitted read is never shed, releases count once, and a
 * credential's places are its own.
 */
import { describe, expect, it } from "vitest";
import { inSlot, ReadAdmission } from "../../src/k8s/admission.ts";
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
