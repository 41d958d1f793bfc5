/**
 * The example receiver's state (examples/receiver-mirror.ts, issue 17 item 12): ids are kept as
 * long as a captured request could still verify, and no event older, by resourceVersion, than what
 * the mirror holds for its key is applied, so neither a replay nor a late retry moves it back in time.
 */
import { describe, expect, it } from "vitest";
import type { WebhookEvent } from "../../src/client/index.ts";
import { ID_RETENTION_MS, ReceiverMirror } from "../../examples/receiver-mirror.ts";
import { FakeClock } from "../helpers/fakes.ts";

let ids = 0;

/** A valid event of pod `default/web` at `rv`; each call a new id unless given. */
function event(type: WebhookEvent["type"], rv: string, overrides: Partial<WebhookEvent> = {}): WebhookEvent {
  return {
    id: `evt_${++ids}`,
    type,
    cluster: "default",
    informer: "pods",
    key: "default/web",
    object: { metadata: { name: "web", namespace: "default", resourceVersion: rv } },
    initialList: false,
    finalStateUnknown: false,
    resourceVersion: rv,
    sequence: ids,
    ...overrides,
  };
}

const held = (mirror: ReceiverMirror, where: Partial<WebhookEvent> = {}) =>
  mirror.objects({ cluster: "default", informer: "pods", ...where }).get("default/web")?.metadata.resourceVersion;

describe("example receiver", () => {
  it("keeps ids for the signature tolerance however many events arrive meanwhile", () => {
    const clock = new FakeClock();
    const mirror = new ReceiverMirror(() => clock.now());
    const first = event("add", "1");
    expect(mirror.receive(first)).toBe("applied");
    // 20,000 events in a minute (a busy cluster): the first id must still be known.
    for (let i = 0; i < 20_000; i++) mirror.receive(event("update", String(2 + i), { key: `default/p-${i}` }));
    clock.advance(60_000);
    expect(mirror.receive(first)).toBe("duplicate");
    clock.advance(ID_RETENTION_MS - 60_000 - 1);
    expect(mirror.receive(first)).toBe("duplicate");
  });

  it("keeps ids at least as long as the 5-minute tolerance, and forgets them after, so memory follows the rate", () => {
    expect(ID_RETENTION_MS).toBeGreaterThanOrEqual(5 * 60_000);
    const clock = new FakeClock();
    const mirror = new ReceiverMirror(() => clock.now());
    for (let i = 0; i < 100; i++) mirror.receive(event("update", String(i + 1), { key: `default/p-${i}` }));
    expect(mirror.rememberedIds).toBe(100);
    clock.advance(ID_RETENTION_MS + 1);
    mirror.receive(event("update", "1000", { key: "default/other" }));
    expect(mirror.rememberedIds).toBe(1);
  });

  it("never applies an update older than the state it holds, though its id is new", () => {
    const mirror = new ReceiverMirror();
    expect(mirror.receive(event("update", "10"))).toBe("applied");
    expect(mirror.receive(event("update", "9"))).toBe("stale");
    expect(held(mirror)).toBe("10");
  });

  it.each([
    // held, incoming, outcome
    ["9", "10", "applied"], // a longer RV is newer: text alone would put "10" before "9"
    ["10", "9", "stale"],
    ["10", "10", "applied"], // a sync carries the state held
    ["100", "099", "stale"],
  ])("compares resourceVersions by length, then text: holding %s, %s is %s", (before, after, outcome) => {
    const mirror = new ReceiverMirror();
    mirror.receive(event("update", before));
    expect(mirror.receive(event("sync", after))).toBe(outcome);
  });

  it("applies a delete with finalStateUnknown, which carries the last known state", () => {
    const mirror = new ReceiverMirror();
    mirror.receive(event("update", "10"));
    expect(mirror.receive(event("delete", "10", { finalStateUnknown: true }))).toBe("applied");
    expect(held(mirror)).toBeUndefined();
  });

  it("refuses a delete older than the state it holds", () => {
    const mirror = new ReceiverMirror();
    mirror.receive(event("update", "10"));
    expect(mirror.receive(event("delete", "8"))).toBe("stale");
    expect(held(mirror)).toBe("10");
  });

  it("does not bring back a deleted object with an older event", () => {
    const clock = new FakeClock();
    const mirror = new ReceiverMirror(() => clock.now());
    mirror.receive(event("add", "5"));
    mirror.receive(event("delete", "6"));
    expect(mirror.receive(event("update", "5"))).toBe("stale");
    expect(held(mirror)).toBeUndefined();
    // A newer add (the object created again) is applied.
    clock.advance(1_000);
    expect(mirror.receive(event("add", "7"))).toBe("applied");
    expect(held(mirror)).toBe("7");
  });

  it("keys state on the signed body's cluster: two clusters' objects of one name stay apart", () => {
    const mirror = new ReceiverMirror();
    mirror.receive(event("add", "500", { cluster: "east" }));
    // Another cluster's resourceVersions mean nothing here: a smaller one is not older.
    expect(mirror.receive(event("add", "7", { cluster: "west" }))).toBe("applied");
    expect([held(mirror, { cluster: "east" }), held(mirror, { cluster: "west" })]).toEqual(["500", "7"]);
  });
});
