/**
 * Watch relays (k8s/watch-relay.ts; issue 20 item 2): a relay's hub serves its watchers what the
 * informer's own hub would, while the informer's object answers a few calls per batch per relay,
 * however many watchers the relay has. The two ends are wired here as in production, each call
 * passed through structuredClone as RPC passes it; the Durable Objects around them are tested
 * through the Worker (test/http/k8s-relay.test.ts).
 */
import { describe, expect, it } from "vitest";
import { HEAVY_READS_QUEUED, HEAVY_READS_RUNNING, ReadAdmission } from "../../src/k8s/admission.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { type WatchRequest, WatchHub } from "../../src/k8s/watch-hub.ts";
import { RELAY_PLACES_TIMEOUT_MS } from "../../src/k8s/relay-places.ts";
import { pickRelay, POLL_WAIT_MS, RelayHost, RelaySource, type RelayUpstream } from "../../src/k8s/watch-relay.ts";
import type { AdmittedListing, ListedPage } from "../../src/k8s/watch-source.ts";
import { SubrequestLimitError } from "../../src/net/subrequest-budget.ts";
import { isRefusal, MAX_WATCHERS_PER_PRINCIPAL } from "../../src/k8s/watcher-caps.ts";
import { compareRv } from "../helpers/informer.ts";
import { type RelayEnd, wire } from "../helpers/relay-wiring.ts";
import { scriptedLog } from "../helpers/scripted-log.ts";
import { readLines, readToEnd } from "../helpers/watch-lines.ts";

const pods = describeResource("pods", undefined)!;
const request: WatchRequest = { info: pods, format: { kind: "json" }, includeObject: "Metadata", bookmarks: false, initialEvents: false, resourceVersion: "100" };
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The resourceVersion of each line: an event's object's, a bookmark's. */
const rvsOf = (lines: string[]) => lines.map((line) => JSON.parse(line).object.metadata.resourceVersion as string);

const ends = (stream: ReadableStream<Uint8Array>) => readToEnd(stream, 2_000);

describe("watch relays", () => {
  it("serve a relay's watchers the same lines as the informer's own hub serves its watchers", async () => {
    const log = scriptedLog();
    const { informerHub, relayHub } = wire(() => log.source);
    const direct = readLines(informerHub.open(request), 30);
    const relayed = readLines(relayHub.open(request), 30);
    await settle();
    for (let batch = 0; batch < 6; batch++) {
      for (let i = 0; i < 5; i++) log.append(`pod-${batch}-${i}`);
      informerHub.notify();
      await settle();
    }
    const expected = await direct;
    expect(expected).toHaveLength(30);
    expect(await relayed).toEqual(expected);
  });

  it("serve 1,000 watchers of one relay every event, with a few calls per batch to the informer's object whatever their number", async () => {
    const log = scriptedLog();
    const { informerHub, relayHub, calls } = wire(() => log.source);
    const principals = Math.ceil(1_000 / MAX_WATCHERS_PER_PRINCIPAL);
    const streams = Array.from({ length: 1_000 }, (_, i) => readLines(relayHub.open({ ...request, principal: `user-${i % principals}` }), 100));
    await settle();
    expect(relayHub.watchers).toBe(1_000);
    const before = { ...calls };
    const batches = 10;
    for (let batch = 0; batch < batches; batch++) {
      for (let i = 0; i < 10; i++) log.append(`pod-${batch}-${i}`);
      informerHub.notify();
      await settle();
    }
    const received = await Promise.all(streams);
    const names = Array.from({ length: batches * 10 }, (_, i) => `pod-${Math.floor(i / 10)}-${i % 10}`);
    for (const lines of received) expect(lines.map((line) => JSON.parse(line).object.metadata.name)).toEqual(names);
    // A poll, the shared buffer's read and the run's end per batch, for all 1,000: not per watcher.
    expect(calls.polls - before.polls).toBeLessThanOrEqual(batches + 2);
    expect(calls.reads - before.reads).toBeLessThanOrEqual(2 * batches + 2);
    // The informer's object frames nothing for them: parsing and framing happen in the relay.
    expect(informerHub.counters).toEqual({ parsed: 0, framed: 0 });
  });

  it("end every relay stream cleanly when the informer ends its own watchers (reconfigured), and serve new watches after", async () => {
    const log = scriptedLog();
    const { informerHub, relayHub, host } = wire(() => log.source);
    const streams = [relayHub.open(request), relayHub.open(request)];
    await settle();
    host.closeAll();
    informerHub.closeAll();
    for (const stream of streams) expect(await ends(stream)).toEqual([]);
    const again = readLines(relayHub.open({ ...request, resourceVersion: "100" }), 1);
    await settle();
    log.append("after");
    informerHub.notify();
    expect((await again).map((line) => JSON.parse(line).object.metadata.name)).toEqual(["after"]);
  });

  it("expire relay watchers with a 410 when the informer's log is made anew (the informer deleted and re-created)", async () => {
    let log = scriptedLog("log-1");
    const { informerHub, relayHub } = wire(() => log.source);
    const stream = relayHub.open(request);
    await settle();
    log = scriptedLog("log-2");
    log.append("new");
    informerHub.notify();
    const lines = await ends(stream);
    expect(lines).not.toBe("open");
    expect((lines as string[]).map((line) => JSON.parse(line))).toEqual([
      { type: "ERROR", object: expect.objectContaining({ kind: "Status", code: 410, reason: "Expired" }) },
    ]);
  });

  it("end relay streams cleanly, never with an error, when the informer's object cannot be reached", async () => {
    const log = scriptedLog();
    const { informerHub, relayHub, breakUpstream } = wire(() => log.source);
    const streams = [relayHub.open(request), relayHub.open({ ...request, labelSelector: { requirements: [] } })];
    await settle();
    breakUpstream();
    log.append("unseen");
    informerHub.notify();
    for (const stream of streams) expect(await ends(stream)).toEqual([]);
  });

  it("end relay streams cleanly when the informer is deleted", async () => {
    const log = scriptedLog();
    let present = true;
    const { informerHub, relayHub } = wire(() => (present ? log.source : undefined));
    const stream = relayHub.open(request);
    await settle();
    present = false;
    informerHub.notify();
    expect(await ends(stream)).toEqual([]);
  });

  it("admit a watch's listing by the informer's admission, shared with its own lists: shed when its queue is full, given back when ended", async () => {
    const log = scriptedLog();
    const admission = new ReadAdmission();
    const { relay } = wire(() => log.source, admission);
    const listings: AdmittedListing[] = [];
    // Owners of their own: each credential may queue only a share of the places (review N1).
    for (let i = 0; i < HEAVY_READS_RUNNING + HEAVY_READS_QUEUED; i++) {
      const listing = await relay.admit(`team-${i}`);
      expect(listing).toBeDefined();
      listings.push(listing!);
    }
    expect(admission.running).toBe(HEAVY_READS_RUNNING);
    expect(admission.queued).toBe(HEAVY_READS_QUEUED);
    expect(admission.enter("other")).toBeUndefined(); // the informer's own list is shed too
    expect(await relay.admit("other")).toBeUndefined();
    // Every listing reads its page in turn: a turn is parked between pages, so the waiting ones
    // take it though the first never ended (their clients drain slowly).
    const pages = await Promise.all(listings.map((listing) => listing.listAt({ limit: 1 })));
    expect(pages.every((page) => !page.expired)).toBe(true);
    expect(admission.peak).toBe(HEAVY_READS_RUNNING);
    for (const listing of listings) listing.end();
    await settle();
    expect([admission.running, admission.queued]).toEqual([0, 0]);
  });

  describe("heavy-read leases fail closed (review N7)", () => {
    /** An informer's RelayHost whose leases lapse after `idleMs`. */
    function leasing(idleMs: number, limits = { running: 1, queued: 1 }) {
      const log = scriptedLog();
      for (let i = 0; i < 3; i++) log.append(`pod-${i}`);
      const admission = new ReadAdmission(limits);
      const host = new RelayHost(() => log.source, () => new Promise((resolve) => setTimeout(resolve, 5)), admission, Date.now, { leaseIdleMs: idleMs });
      const enter = async (owner: string) => (await host.call(log.source.incarnation, { op: "enter", owner })) as { value: string | undefined };
      const page = (lease: string) => host.call(log.source.incarnation, { op: "listAt", query: { limit: 10 }, lease }) as Promise<{ value: ListedPage }>;
      return { admission, host, enter, page };
    }

    it("gives back a lease its relay never used or released (evicted mid-listing): the slot is free within the idle time, not 5 min", async () => {
      const { admission, host, enter, page } = leasing(30);
      const { value: lease } = await enter("relay-a");
      expect((await page(lease!)).value.expired).toBe(false);
      expect([admission.running, host.leases]).toEqual([1, 1]);
      // The relay vanishes: no more pages, no release.
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect([admission.running, host.leases]).toEqual([0, 0]);
      // Another credential's list is admitted at once.
      expect(admission.enter("someone-else")).toBeDefined();
    });

    it("answers a page asked under a lapsed lease expired: never read without a slot", async () => {
      const { admission, enter, page } = leasing(30);
      const held = await admission.enter("informer-own-list")!; // the only slot is taken
      const { value: lease } = await enter("relay-a"); // queued behind it
      await new Promise((resolve) => setTimeout(resolve, 80)); // lapsed while queued (nothing asked)
      held.release();
      const answer = await page(lease!);
      expect(answer.value.expired).toBe(true);
      expect(admission.peak).toBe(1);
      expect(admission.running).toBe(0);
    });

    it("keeps a lease while its pages come, each page read in its turn", async () => {
      const { admission, host, enter, page } = leasing(40);
      const { value: lease } = await enter("relay-a");
      for (let i = 0; i < 5; i++) {
        expect((await page(lease!)).value.expired).toBe(false);
        await new Promise((resolve) => setTimeout(resolve, 20)); // under the idle time between pages
      }
      expect(host.leases).toBe(1);
      await host.call("", { op: "release", lease: lease! });
      expect([admission.running, host.leases]).toEqual([0, 0]);
    });
  });

  describe("open on the informer's state, not the relay's last snapshot (review N2)", () => {
    /** A relay whose pump stopped after `seen` events, and an informer `ahead` events further. */
    async function idleBehind(seen: number, ahead: number) {
      const log = scriptedLog();
      const wiring = wire(() => log.source);
      for (let i = 0; i < seen; i++) log.append(`seen-${i}`);
      const stopped = wiring.stopPump();
      wiring.informerHub.notify(); // the poll answers; the pump sees no watcher and stops
      await stopped;
      for (let i = 0; i < ahead; i++) log.append(`ahead-${i}`);
      wiring.informerHub.notify(); // nobody polls: the relay keeps its snapshot
      return { log, ...wiring };
    }

    it("starts a watch from RV \"\" at the informer's tail, not replaying what came after the relay's snapshot as live", async () => {
      const { log, informerHub, open, startPump } = await idleBehind(2, 3);
      const received = readLines(open({ ...request, resourceVersion: "" }), 1);
      startPump();
      await settle();
      log.append("live");
      informerHub.notify();
      expect((await received).map((line) => JSON.parse(line).object.metadata.name)).toEqual(["live"]);
    });

    it("closes a watch-list with the initial-events-end bookmark at or after every listed object's RV", async () => {
      const { open, startPump } = await idleBehind(2, 3);
      const received = readLines(open({ ...request, resourceVersion: "", initialEvents: true, bookmarks: true }), 6);
      startPump();
      const rvs = rvsOf(await received);
      expect(rvs).toEqual(["101", "102", "103", "104", "105", "105"]);
    });

    it("closes a watch-list with the bookmark at the listed state's RV when the informer moved on between relayOpen and the listing", async () => {
      const log = scriptedLog();
      const { open } = wire(() => log.source, new ReadAdmission(), { pump: false });
      log.append("a");
      const received = readLines(open({ ...request, resourceVersion: "", initialEvents: true, bookmarks: true }), 4);
      log.append("b"); // after relayOpen answered, before the listing read the cache
      log.append("c");
      expect(rvsOf(await received)).toEqual(["101", "102", "103", "103"]);
    });

    it("keeps the newer of two states when a poll's answer arrives after a watch's opening brought a later one", async () => {
      const log = scriptedLog();
      const { host, relay } = wire(() => log.source, new ReadAdmission(), { pump: false });
      log.append("a");
      const polled = structuredClone(host.snapshot()!); // a poll's answer, still on its way
      log.append("b");
      relay.open(structuredClone(host.snapshot()));
      relay.accept(polled);
      expect(relay.current()!.bounds().tail).toBe(2);
      expect(relay.current()!.cacheResourceVersion()).toBe("102");
    });

    it("keeps a watch opened after an informer restart open at the relay's next poll", async () => {
      const { log, informerHub, open, startPump, restartInformer } = await idleBehind(1, 0);
      restartInformer(); // the same log and configuration, a new instance of its object
      const received = readLines(open({ ...request, resourceVersion: "101" }), 1);
      startPump();
      await settle();
      log.append("live");
      informerHub.notify();
      expect((await received).map((line) => JSON.parse(line).object.metadata.name)).toEqual(["live"]);
    });
  });

  describe("never send a bookmark behind an event already sent on the stream (review N3)", () => {
    const watching = { ...request, resourceVersion: "100", bookmarks: true, timeoutSeconds: 10 };

    /** A stream's events' RVs grow strictly, and each bookmark is at or after the last event before it. */
    function expectInOrder(lines: string[]) {
      const events = lines.map((line) => JSON.parse(line) as { type: string; object: { metadata: { resourceVersion: string } } });
      let last = "";
      for (const { type, object } of events) {
        const rv = object.metadata.resourceVersion;
        if (type === "BOOKMARK") expect(compareRv(rv, last), `bookmark ${rv} after ${last}`).toBeGreaterThanOrEqual(0);
        else expect(compareRv(rv, last), `${type} ${rv} after ${last}`).toBeGreaterThan(0);
        last = type === "BOOKMARK" && compareRv(rv, last) < 0 ? last : rv;
      }
    }

    it("in a relay whose snapshot trails the informer: the deadline bookmark is at or after the run just delivered", async () => {
      let now = 0;
      const log = scriptedLog();
      const { host, relay, relayHub } = wire(() => log.source, new ReadAdmission(), { pump: false, now: () => now });
      const received = readLines(relayHub.open(watching), 6);
      await settle();
      log.append("polled");
      relay.accept(structuredClone(host.snapshot())); // a poll's answer: one event
      for (let i = 0; i < 4; i++) log.append(`ahead-${i}`); // the informer moves on before the relay's hub reads the run
      await settle();
      now = 8_000; // 2 s before the deadline: the last bookmark is due
      relayHub.notify();
      const lines = await received;
      expect(rvsOf(lines)).toHaveLength(6);
      expect(JSON.parse(lines.at(-1)!).type).toBe("BOOKMARK");
      expectInOrder(lines);
    });

    it("in the informer's own hub (WATCH_RELAYS=0) under the same churn", async () => {
      let now = 0;
      const log = scriptedLog();
      const hub = new WatchHub(() => log.source, { now: () => now });
      const received = readLines(hub.open(watching), 6);
      await settle();
      for (let i = 0; i < 5; i++) log.append(`churn-${i}`);
      hub.notify();
      await settle();
      now = 8_000;
      hub.notify();
      const lines = await received;
      expect(JSON.parse(lines.at(-1)!).type).toBe("BOOKMARK");
      expectInOrder(lines);
    });

    it("in a relay, a watcher resumed from an RV newer than the relay's snapshot gets no bookmark below it", async () => {
      let now = 0;
      const log = scriptedLog();
      const { relayHub } = wire(() => log.source, new ReadAdmission(), { pump: false, now: () => now });
      for (let i = 0; i < 3; i++) log.append(`unpolled-${i}`); // the relay's snapshot still says 100
      const received = readLines(relayHub.open({ ...watching, resourceVersion: "103" }), 1);
      await settle();
      now = 8_000;
      relayHub.notify();
      expect(rvsOf(await received)).toEqual(["103"]);
    });
  });

  describe("a credential's watches spread over all relays, counted once by the informer (issue 29 item 1)", () => {
    const ofAlice = { ...request, principal: "alice" };

    it("lands 150 watches of one credential on all 4 relays and refuses the 101st on, naming WATCHERS_PER_CREDENTIAL (100)", async () => {
      const log = scriptedLog();
      const { relays, host } = wire(() => log.source, new ReadAdmission(), { relays: 4, perPrincipal: 100 });
      const opened: Awaited<ReturnType<RelayEnd["watch"]>>[] = [];
      for (let i = 0; i < 150; i++) opened.push(await relays[pickRelay(relays.length)]!.watch(ofAlice));
      expect(opened.slice(0, 100).every((o) => o !== "notReady" && !isRefusal(o))).toBe(true);
      for (const refusal of opened.slice(100)) expect(refusal).toMatchObject({ refused: true, message: expect.stringContaining("WATCHERS_PER_CREDENTIAL") });
      expect(host.places).toBe(100);
      const perRelay = relays.map((end) => end.relayHub.watchers);
      expect(perRelay.reduce((a, b) => a + b)).toBe(100);
      for (const watchers of perRelay) expect(watchers).toBeGreaterThan(0);
      // Another credential has its own count.
      expect(isRefusal((await relays[0]!.watch({ ...request, principal: "bob" })) as object)).toBe(false);
    });

    it("grants exactly the cap when a credential's watches open on every relay at once", async () => {
      const log = scriptedLog();
      const { relays, host } = wire(() => log.source, new ReadAdmission(), { relays: 4, perPrincipal: 100 });
      const opened = await Promise.all(Array.from({ length: 150 }, (_, i) => relays[i % 4]!.watch(ofAlice)));
      expect(opened.filter((o) => o !== "notReady" && !isRefusal(o))).toHaveLength(100);
      expect(relays.map((end) => end.relayHub.watchers).reduce((a, b) => a + b)).toBe(100);
      expect(host.places).toBe(100);
    });

    it("gives a place back when its watch ends, at the relay's next opening or poll", async () => {
      const log = scriptedLog();
      const { relays, host } = wire(() => log.source, new ReadAdmission(), { relays: 2, perPrincipal: 3, pump: false });
      const streams = [];
      for (let i = 0; i < 3; i++) streams.push(((await relays[i % 2]!.watch(ofAlice)) as { stream: ReadableStream }).stream);
      expect(isRefusal((await relays[1]!.watch(ofAlice)) as object)).toBe(true);
      await streams[0]!.cancel(); // relay 0's watcher leaves
      await settle();
      expect(relays[0]!.relayHub.watchers).toBe(1);
      expect(host.places).toBe(3); // not told yet
      // Relay 1 has not heard of it: still refused; relay 0's opening carries its tally.
      expect(isRefusal((await relays[1]!.watch(ofAlice)) as object)).toBe(true);
      expect(isRefusal((await relays[0]!.watch(ofAlice)) as object)).toBe(false);
      expect(host.places).toBe(3);
    });

    it("frees the places of a relay that stops polling once RELAY_PLACES_TIMEOUT_MS passed, not before", async () => {
      let now = 0;
      const log = scriptedLog();
      const { relays, host } = wire(() => log.source, new ReadAdmission(), { relays: 2, perPrincipal: 100, pump: false, hostNow: () => now });
      const [gone, alive] = relays as [RelayEnd, RelayEnd];
      for (let i = 0; i < 100; i++) expect(isRefusal((await gone.watch(ofAlice)) as object)).toBe(false);
      // `gone` is killed mid-stream: it never polls or opens again.
      now = RELAY_PLACES_TIMEOUT_MS - 1;
      expect(isRefusal((await alive.watch(ofAlice)) as object)).toBe(true);
      now = RELAY_PLACES_TIMEOUT_MS;
      expect(isRefusal((await alive.watch(ofAlice)) as object)).toBe(false);
      expect(host.places).toBe(1);
    });

    it("keeps a relay's places while its poll is in flight, however long", async () => {
      let now = 0;
      const log = scriptedLog();
      const { relays, host } = wire(() => log.source, new ReadAdmission(), { relays: 2, perPrincipal: 2, hostNow: () => now });
      const [polling, other] = relays as [RelayEnd, RelayEnd];
      await polling.stopPump();
      await polling.watch(ofAlice);
      await polling.watch(ofAlice);
      polling.startPump(); // its poll waits for a change
      await settle();
      now = 10 * RELAY_PLACES_TIMEOUT_MS;
      expect(isRefusal((await other.watch(ofAlice)) as object)).toBe(true);
      expect(host.places).toBe(2);
    });

    it("picks every relay, uniformly", () => {
      expect(pickRelay(4, () => 0)).toBe(0);
      expect(pickRelay(4, () => 0.999_999)).toBe(3);
      const counts = [0, 0, 0, 0];
      for (let i = 0; i < 4_000; i++) counts[pickRelay(4, () => (i % 4) / 4 + 0.1)]!++;
      expect(counts).toEqual([1_000, 1_000, 1_000, 1_000]);
    });
  });

  it("cost the informer a few calls per relay, not two per watcher, when 1,000 relay watchers re-watch after it restarts (review N10)", async () => {
    const log = scriptedLog();
    const relaysCount = 4;
    const wiring = wire(() => log.source, new ReadAdmission(), { relays: relaysCount, perPrincipal: 1_000 });
    for (let i = 0; i < 3; i++) log.append(`before-${i}`);
    wiring.informerHub.notify();
    await settle();
    // Half the clients stand at RV 102, half at 103 (the last they saw; the scripted log starts them at its tail).
    const from = (i: number) => ({ ...request, principal: `team-${i % 10}`, resourceVersion: i % 2 === 0 ? "102" : "103" });
    const first = await Promise.all(Array.from({ length: 1_000 }, (_, i) => wiring.relays[i % relaysCount]!.watch(from(i))));
    const ended = first.map((opened) => ends((opened as { stream: ReadableStream<Uint8Array> }).stream));
    expect(wiring.relays.map((end) => end.relayHub.watchers)).toEqual([250, 250, 250, 250]);
    // A deploy restarts the informer's object: each relay's next poll finds a new instance and ends its streams.
    wiring.restartInformer();
    log.append("during");
    wiring.informerHub.notify();
    await Promise.all(ended);
    const before = { ...wiring.calls, ops: { ...wiring.calls.ops } };
    const again = await Promise.all(Array.from({ length: 1_000 }, (_, i) => wiring.relays[i % relaysCount]!.watch(from(i))));
    const streams = again.map((opened) => readLines((opened as { stream: ReadableStream<Uint8Array> }).stream, 1));
    await settle();
    const opens = wiring.calls.opens - before.opens;
    const positions = (wiring.calls.ops.positionsOf ?? 0) - (before.ops.positionsOf ?? 0);
    const calls = wiring.calls.opens + wiring.calls.reads + wiring.calls.polls - before.opens - before.reads - before.polls;
    // Per relay, one opening for its herd and one look-up of their starts (the old protocol: a
    // relayOpen and a positionOf per watcher, 2,000 calls). Arriving over time, a relay's herd
    // costs one opening per round trip instead.
    expect(opens).toBe(relaysCount);
    expect(positions).toBe(relaysCount);
    expect(calls).toBeLessThanOrEqual(3 * relaysCount); // polls and reads included
    expect(wiring.host.places).toBe(1_000);
    // And they get what comes next.
    log.append("after");
    wiring.informerHub.notify();
    for (const lines of await Promise.all(streams)) expect(lines.map((line) => JSON.parse(line).object.metadata.name)).toEqual(["after"]);
  });

  it("stop the relay's pump quietly, its streams open, when the slice's subrequest budget refuses a poll (review B1a)", async () => {
    const log = scriptedLog();
    const { host } = wire(() => log.source, new ReadAdmission(), { pump: false });
    let closed = 0;
    let polls = 0;
    const refusing: RelayUpstream = {
      open: () => Promise.reject(new Error("unused")),
      poll: async () => {
        polls++;
        throw new SubrequestLimitError();
      },
      call: (incarnation, call) => host.call(incarnation, call),
    };
    const relay = new RelaySource(refusing, { changed: () => {}, closeAll: () => closed++ });
    let asked = 0;
    await relay.pump(() => ++asked <= 3, 1);
    expect({ polls, closed }).toEqual({ polls: 1, closed: 0 });
  });

  it("stop counting a relay as watching two poll waits after its last poll, once its last watcher left (review B7)", async () => {
    let now = 0;
    const log = scriptedLog();
    const { host, informerHub, watch, relayHub, stopPump } = wire(() => log.source, new ReadAdmission(), { hostNow: () => now });
    const opened = await watch(request);
    await settle();
    expect(host.active).toBe(true); // a poll is in flight
    await (opened as { stream: ReadableStream }).stream.cancel();
    log.append("next"); // the watcher learns its client left at its next write; the poll answers
    const stopped = stopPump(); // as the relay's pump, which wants watchers
    informerHub.notify();
    await stopped;
    expect(relayHub.watchers).toBe(0);
    now += 2 * POLL_WAIT_MS - 1;
    expect(host.active).toBe(true);
    now += 1;
    expect(host.active).toBe(false);
  });
});

