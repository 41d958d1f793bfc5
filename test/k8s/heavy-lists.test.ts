/**
 * Heavy `/k8s` lists, made in turns with ingest and other reads between them:
 * - a list, then a watch from its resourceVersion (DESIGN.md invariant 9, review N1): the list's RV
 *   is the state its items come from, so the watch continues exactly — every change after the
 *   listed state is delivered, whatever the cache ingested while the list was being made;
 * - a list without limit, streamed page by page (issue 27: bodies broke off mid-list), completes;
 * - a search's page with selectors is a heavy read too (review N2): admitted, shed, made in turns.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { listFirstPage, MAX_CONTINUE_LAG, SCAN_PER_TURN, type VersionedPage } from "../../src/cache/versioned-list.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { attempt, type Result } from "../../src/errors.ts";
import { type AdmissionLimits, ReadAdmission } from "../../src/k8s/admission.ts";
import { CacheReads, type QueryAnswer } from "../../src/k8s/cache-reads.ts";
import { describeResource } from "../../src/k8s/catalog.ts";
import { watchSourceOf } from "../../src/k8s/informer-watch-source.ts";
import { WatchHub } from "../../src/k8s/watch-hub.ts";
import { parseLabelSelector } from "../../src/kube/selectors.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";
import { readLines } from "../helpers/watch-lines.ts";

const pods = describeResource("pods", undefined)!;
const name = (i: number) => `p${String(i).padStart(5, "0")}`;
/** More pods than one part of a heavy read scans, one in a hundred labelled `app=rare`. */
const PODS = 3 * SCAN_PER_TURN;
const rare = (i: number) => (i % 100 === 0 ? { app: "rare" } : { app: "common" });

/** An informer holding `count` pods at RV 1..count, whose log's growth wakes a hub over it. */
function populated(db: Db, count = PODS) {
  const spec = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 5, retention: { maxEvents: 50_000 } }, "list-watch");
  let hub: WatchHub | undefined;
  const clock = new FakeClock();
  const informer = new Informer(db, informerSettings(spec), clock, () => 0.5, () => hub?.notify());
  hub = new WatchHub(() => watchSourceOf(informer));
  relist(informer, Array.from({ length: count }, (_, i) => pod({ name: name(i), rv: String(i + 1), labels: rare(i) })), String(count));
  return { informer, hub, clock };
}

/** A list of `objects` at `rv`, committed (its Replace is popped by processQueue). */
function relist(informer: Informer, objects: KubeObject[], rv: string): void {
  informer.beginList();
  informer.stage(objects);
  informer.commitList(rv, { state: { kind: "watching" }, memory: initialMemory });
}

/** CacheReads over `informer`, whose heavy reads run `between` at each turn they yield. */
function readsOf(informer: Informer, between: () => void | Promise<void>, limits?: AdmissionLimits): CacheReads {
  const at = <T>(fn: (spec: { name: string }, informer: Informer) => T): Result<T> => attempt(() => fn({ name: "list-watch" }, informer));
  return new CacheReads(at, new ReadAdmission(limits), async () => {
    await between();
  });
}

const itemsOf = (answer: Result<QueryAnswer<VersionedPage>>) => {
  if (!answer.ok || answer.value.value.expired) throw new Error("expected a page");
  return answer.value.value.items.map((text) => JSON.parse(text) as KubeObject);
};

describe("a list, then a watch from its resourceVersion", () => {
  it("reports the RV its items come from when ingest runs between the parts of a heavy list, so the watch misses nothing (N1)", () =>
    withDb(async (db) => {
      const { informer, hub } = populated(db);
      const base = PODS;
      // What ingest applies at the first yield, after the list's first part was read: a listed rare
      // pod changed, one the later parts list deleted, a new rare pod, and a pod turning rare.
      const changes = [
        { type: "MODIFIED" as const, object: pod({ name: name(0), rv: String(base + 1), labels: { app: "rare", v: "2" } }) },
        { type: "DELETED" as const, object: pod({ name: name(5_000), rv: String(base + 2), labels: { app: "rare" } }) },
        { type: "ADDED" as const, object: pod({ name: "q-new", rv: String(base + 3), labels: { app: "rare" } }) },
        { type: "MODIFIED" as const, object: pod({ name: name(4_001), rv: String(base + 4), labels: { app: "rare" } }) },
      ];
      let yields = 0;
      const reads = readsOf(informer, () => {
        if (yields++ === 0) informer.applyWatch(changes, String(base + 4));
      });
      const labelSelector = "app=rare";
      const answer = await reads.listAt({ labelSelector, limit: 5_000 }, undefined, undefined, { part: "first" });
      expect(yields).toBeGreaterThan(0);
      const listed = itemsOf(answer);
      // The items are the state before the changes: the snapshot of the first part.
      expect(listed.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`)).toEqual(
        Array.from({ length: PODS / 100 }, (_, k) => `${name(k * 100)}@${k * 100 + 1}`),
      );
      const rv = answer.ok ? answer.value.resourceVersion : "";
      expect(rv).toBe(String(base));

      // A reflector watches from the list's RV: every change after the listed state arrives.
      const stream = hub.open({
        info: pods,
        format: { kind: "json" },
        includeObject: "Metadata",
        labelSelector: parseLabelSelector(labelSelector),
        resourceVersion: rv,
        initialEvents: false,
        bookmarks: false,
        timeoutSeconds: 5,
      });
      const events = (await readLines(stream, changes.length)).map((line) => JSON.parse(line) as { type: string; object: KubeObject });
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`)).toEqual([
        `MODIFIED ${name(0)}@${base + 1}`,
        `DELETED ${name(5_000)}@${base + 2}`,
        `ADDED q-new@${base + 3}`,
        `ADDED ${name(4_001)}@${base + 4}`,
      ]);
    }));

  it("answers the query API's scan in turns with the RV before its first part, not one ingest reached during it (N1)", () =>
    withDb(async (db) => {
      const { informer } = populated(db);
      let yields = 0;
      const reads = readsOf(informer, () => {
        if (yields++ === 0) informer.applyWatch([{ type: "DELETED", object: pod({ name: name(5_000), rv: String(PODS + 1), labels: { app: "rare" } }) }], String(PODS + 1));
      });
      const answer = await reads.listObjects({ labelSelector: "app=rare" });
      expect(yields).toBeGreaterThan(0);
      if (!answer.ok) throw new Error(answer.error.message);
      // The scan reads the live cache: it missed the deleted pod, and the delete is after the RV it
      // answers, so a watch from X-Resource-Version still delivers it.
      expect(answer.value.value.items).toHaveLength(PODS / 100 - 1);
      expect(answer.value.resourceVersion).toBe(String(PODS));
    }));

  it("lists a relist's state only under the relist's RV, from the transaction that pops its last key on (F18)", () =>
    withDb(async (db) => {
      const spec = parseInformerSpec({ resource: "pods" }, "list-watch");
      // What a list made at each moment ingest announces shows: its items' RVs and the RV it reports.
      const seen: string[] = [];
      let informer: Informer | undefined;
      const listNow = () => {
        const page = listFirstPage(informer!.indexer, informer!.log, { limit: 10 }, informer!.snapshotPosition());
        if (page.expired) throw new Error("expected a page");
        const items = page.items.map((text) => (JSON.parse(text) as KubeObject).metadata.resourceVersion).join(",");
        seen.push(`${items} at ${informer!.queryView().resourceVersion}`);
      };
      informer = new Informer(db, informerSettings(spec), new FakeClock(), () => 0.5, listNow);
      informer.beginList();
      informer.stage([pod({ name: "a", rv: "1" }), pod({ name: "b", rv: "2" })]);
      informer.commitList("2", { state: { kind: "watching" }, memory: initialMemory });
      seen.length = 0;
      // An upstream relist: a changed, b gone, c new; its Replace is popped after the commit.
      informer.beginList();
      informer.stage([pod({ name: "a", rv: "7" }), pod({ name: "c", rv: "8" })]);
      informer.commitList("9", { state: { kind: "watching" }, memory: initialMemory });
      await informer.processQueue();
      listNow();
      // Before the fix, right after the last pop: "7,8 at 2" (the relist's state under the RV before it).
      expect(new Set(seen)).toEqual(new Set(["7,8 at 9"]));
    }));
});

describe("a list without limit, streamed page by page", () => {
  it("serves its pages in the slot its first page took, so other heavy reads and the ingest they let run cannot expire it mid-body (issue 27)", () =>
    withDb(async (db) => {
      const { informer } = populated(db);
      // Two pods in a namespace of their own: a list of them in pages of one item is two pages.
      informer.applyWatch(
        ["x", "y"].map((name, i) => ({ type: "ADDED" as const, object: pod({ name, namespace: "small", rv: String(PODS + 1 + i) }) })),
        String(PODS + 2),
      );
      // Another client's heavy read lets ingest run between its parts: more changes than a list's
      // pages may lag behind (a minute at the 600 changes/s of the runs).
      let ingested = false;
      const ingest = () => {
        if (ingested) return;
        ingested = true;
        const base = PODS + 2;
        const churn = Array.from({ length: MAX_CONTINUE_LAG + 1 }, (_, i) => ({
          type: "MODIFIED" as const,
          object: pod({ name: name(i % PODS), rv: String(base + 1 + i), labels: rare(i % PODS) }),
        }));
        informer.applyWatch(churn, String(base + churn.length));
      };
      const reads = readsOf(informer, ingest, { running: 1, queued: 8 });
      const lease = "list-1";
      const first = await reads.listAt({ namespace: "small", limit: 1 }, undefined, undefined, { part: "first", hold: lease });
      if (!first.ok || first.value.value.expired || !first.value.value.next) throw new Error("expected a first page with more to follow");
      // Meanwhile another client lists with a selector (a scan in turns), and the first list's next page is asked for.
      const other = reads.listAt({ labelSelector: "app=rare", limit: 5_000 }, undefined, undefined, { part: "first" });
      const second = await reads.listAt({ namespace: "small", limit: 1 }, first.value.value.next, undefined, { part: "next", hold: lease });
      expect(itemsOf(second).map((o) => o.metadata.name)).toEqual(["y"]);
      expect(second.ok && !second.value.value.expired && second.value.value.next).toBeFalsy(); // the last page
      // The other read ran once the list was sent, and saw the changes made after it.
      expect(itemsOf(await other).length).toBeGreaterThan(0);
      expect(ingested).toBe(true);
    }));
});

describe("a list while a relist's Replace is applied", () => {
  it("shows a mixed state under the RV before the relist when the Replace is too long to rebuild, and a watch from it misses nothing and sends nothing older (F18)", () =>
    withDb(async (db) => {
      const count = MAX_CONTINUE_LAG + 1_000;
      const { informer, hub, clock } = populated(db, count);
      await informer.processQueue();
      const before = informer.queryView().resourceVersion;
      // The relist finds every pod changed but the last ten, gone; popped 500 keys a transaction.
      const relistRv = String(3 * count);
      relist(informer, Array.from({ length: count - 10 }, (_, i) => pod({ name: name(i), rv: String(count + 1 + i), labels: rare(i) })), relistRv);
      let popped = 0;
      while (informer.log.bounds().tail - count <= MAX_CONTINUE_LAG) {
        await informer.processQueue(clock.now()); // one transaction: the deadline has passed
        popped++;
      }
      expect(informer.fifo.isEmpty()).toBe(false); // mid-Replace, too far past its snapshot to rebuild it
      const reads = readsOf(informer, () => {});
      const answer = reads.listAt({ limit: 5_000 }, undefined, undefined, { part: "first" });
      const page = await answer;
      if (!page.ok || page.value.value.expired) throw new Error("expected a page");
      expect(page.value.resourceVersion).toBe(before);
      const listed = new Map(itemsOf(page).map((o) => [o.metadata.name!, o.metadata.resourceVersion!]));
      // The rest of the list (later pages at the same position), as a client pages through it.
      for (let next = page.value.value.next; next; ) {
        const more = await reads.listAt({ limit: 5_000 }, next, undefined, { part: "next" });
        itemsOf(more).forEach((o) => listed.set(o.metadata.name!, o.metadata.resourceVersion!));
        next = more.ok && !more.value.value.expired ? more.value.value.next : undefined;
      }
      expect(new Set(listed.values()).has(String(count + 1))).toBe(true); // some listed after the relist…
      expect(new Set(listed.values()).has(String(count))).toBe(true); // …and some before it
      await informer.processQueue();

      // The watch from the list's RV: the whole relist, in RV order; per key nothing older than listed.
      const total = count; // every pod changed or deleted once
      const stream = hub.open({ info: pods, format: { kind: "json" }, includeObject: "Metadata", resourceVersion: before, initialEvents: false, bookmarks: false, timeoutSeconds: 30 });
      const events = (await readLines(stream, total)).map((line) => JSON.parse(line) as { type: string; object: KubeObject });
      expect(events).toHaveLength(total);
      let repeated = 0;
      for (const { type, object } of events) {
        const key = object.metadata.name!;
        const held = listed.get(key);
        if (held !== undefined) expect(BigInt(object.metadata.resourceVersion!) >= BigInt(held), key).toBe(true);
        if (held === object.metadata.resourceVersion && type !== "DELETED") repeated++;
        if (type === "DELETED") listed.delete(key);
        else listed.set(key, object.metadata.resourceVersion!);
      }
      // The client ends where the cache is, having been sent some states again (those listed after the relist).
      const cached = new Map(informer.indexer.list({ limit: 2 * count }).map((o) => [o.name, o.resourceVersion]));
      expect([...listed].sort()).toEqual([...cached].sort());
      expect(repeated).toBeGreaterThan(0);
      expect(popped).toBeGreaterThan(0);
    }));
});

describe("a search with selectors (review N2)", () => {
  it("is a heavy read: made in turns, shed while the object's heavy reads are taken, and a search without selectors is not", () =>
    withDb(async (db) => {
      const { informer } = populated(db);
      let turns = 0;
      let release!: () => void;
      const blocked = new Promise<void>((resolve) => (release = resolve));
      let blocking = false;
      const reads = readsOf(
        informer,
        async () => {
          turns++;
          if (blocking) await blocked;
        },
        { running: 1, queued: 0 },
      );
      // Alone, a selector search scans the cache in parts, with other work between them.
      const rare = await reads.searchAt({ labelSelector: "app=rare", limit: 1_000 });
      expect(itemsOf(rare)).toHaveLength(PODS / 100);
      expect(turns).toBeGreaterThan(0);
      // While a heavy list holds the object's only slot (none queued), a selector search is shed…
      blocking = true;
      const list = reads.listAt({ labelSelector: "app=common", limit: 5_000 }, undefined, undefined, { part: "first" });
      await new Promise((resolve) => setTimeout(resolve, 1));
      const shed = await reads.searchAt({ labelSelector: "app=rare", limit: 1_000 });
      expect(shed.ok ? "answered" : shed.error.code).toBe("TooManyRequests");
      // …and a search without selectors (a page by key) still answers at once.
      const plain = await reads.searchAt({ limit: 10 });
      expect(itemsOf(plain)).toHaveLength(10);
      release();
      expect(itemsOf(await list).length).toBeGreaterThan(0);
    }));
});
