/**
 * Index-driven field selectors (issue 30 item 3, review G6): a `/k8s` list whose field selector
 * asks an indexed field for equality (`spec.nodeName=n1`, what k9s' node view and `kubectl describe
 * node` send) reads the index's hits, not every object: a light read that takes no heavy-read slot
 * and is never shed; `spec.nodeName` is a default index of pods. `!=` stays a scan, a heavy read.
 * The pages are the same as a scan's, at a continue position too.
 */
import { describe, expect, it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { listAt, type Position, type VersionedPage } from "../../src/cache/versioned-list.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { attempt, type Result } from "../../src/errors.ts";
import { ReadAdmission } from "../../src/k8s/admission.ts";
import { CacheReads, type QueryAnswer } from "../../src/k8s/cache-reads.ts";
import { parseFieldSelector, parseLabelSelector, matchesFields, matchesLabels } from "../../src/kube/selectors.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import type { Db } from "../../src/sql.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock, pod } from "../helpers/fakes.ts";

const NODES = 10;
const PODS = 600;
const name = (i: number) => `p${String(i).padStart(4, "0")}`;
const podAt = (i: number, rv = String(i + 1)) =>
  pod({ name: name(i), namespace: `ns${i % 3}`, rv, nodeName: `n${i % NODES}`, labels: { app: i % 2 === 0 ? "web" : "db" } });

/** A pods informer with its default indexes (`spec.nodeName` among them), holding PODS pods spread over NODES nodes. */
async function populated(db: Db, spec: object = {}) {
  const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods", ...spec }, "by-node")), new FakeClock(), () => 0.5, () => {});
  informer.beginList();
  informer.stage(Array.from({ length: PODS }, (_, i) => podAt(i)));
  informer.commitList(String(PODS), { state: { kind: "watching" }, memory: initialMemory });
  await informer.processQueue();
  return informer;
}

function readsOf(informer: Informer, admission: ReadAdmission): CacheReads {
  const at = <T>(fn: (spec: { name: string }, informer: Informer) => T): Result<T> => attempt(() => fn({ name: "by-node" }, informer));
  return new CacheReads(at, admission);
}

const namesOf = (answer: Result<QueryAnswer<VersionedPage>>) => {
  if (!answer.ok) throw new Error(`expected a page, got ${answer.error.code}: ${answer.error.message}`);
  if (answer.value.value.expired) throw new Error("expected a page, got expired");
  return answer.value.value.items.map((text) => (JSON.parse(text) as KubeObject).metadata.name);
};

/** What a scan of every pod selects: the answer an index read must equal. */
function scanned(fieldSelector: string, labelSelector?: string, namespace?: string): string[] {
  const fields = parseFieldSelector(fieldSelector);
  const labels = labelSelector === undefined ? undefined : parseLabelSelector(labelSelector);
  return Array.from({ length: PODS }, (_, i) => podAt(i))
    .filter((p) => (namespace === undefined || p.metadata.namespace === namespace) && matchesFields(fields, p) && (!labels || matchesLabels(labels, p.metadata.labels)))
    .sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`))
    .map((p) => p.metadata.name!);
}

describe("spec.nodeName is a default index of pods", () => {
  it("a pods spec without indexers indexes spec.nodeName; one that indexes it already keeps its own name; other resources get none", () => {
    expect(parseInformerSpec({ resource: "pods" }).indexers).toEqual({ nodeName: "spec.nodeName" });
    expect(parseInformerSpec({ resource: "pods", indexers: { byNode: "spec.nodeName" } }).indexers).toEqual({ byNode: "spec.nodeName" });
    expect(parseInformerSpec({ resource: "pods", indexers: { byApp: "metadata.labels.app" } }).indexers).toEqual({ byApp: "metadata.labels.app", nodeName: "spec.nodeName" });
    expect(parseInformerSpec({ resource: "deployments.apps" }).indexers).toEqual({});
  });
});

describe("a list whose field selector asks an indexed field for equality", () => {
  it("40 concurrent pods-by-node lists are all answered and none takes a heavy-read slot", () =>
    withDb(async (db) => {
      const informer = await populated(db);
      const admission = new ReadAdmission();
      const reads = readsOf(informer, admission);
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          reads.listAt({ fieldSelector: `spec.nodeName=n${i % NODES}`, limit: 500 }, undefined, undefined, { part: "first", owner: "read" }),
        ),
      );
      answers.forEach((answer, i) => expect(namesOf(answer)).toEqual(scanned(`spec.nodeName=n${i % NODES}`)));
      expect(admission.peak).toBe(0);
    }));

  it("filters the index's hits by the rest of the selectors, the namespace and the label selector (`==` as `=`)", () =>
    withDb(async (db) => {
      const admission = new ReadAdmission();
      const reads = readsOf(await populated(db), admission);
      const heavy = { part: "first" as const, owner: "read" };
      const query = { namespace: "ns1", fieldSelector: "spec.nodeName==n4,status.phase!=Failed", labelSelector: "app=web", limit: 500 };
      expect(namesOf(await reads.listAt(query, undefined, undefined, heavy))).toEqual(scanned("spec.nodeName=n4,status.phase!=Failed", "app=web", "ns1"));
      expect(admission.peak).toBe(0);
    }));

  it("`!=` on the indexed field stays a scan: a heavy read, admitted", () =>
    withDb(async (db) => {
      const admission = new ReadAdmission();
      const reads = readsOf(await populated(db), admission);
      const answer = await reads.listAt({ fieldSelector: "spec.nodeName!=n1", limit: 500 }, undefined, undefined, { part: "first", owner: "read" });
      expect(namesOf(answer)).toEqual(scanned("spec.nodeName!=n1").slice(0, 500));
      expect(admission.peak).toBe(1);
    }));

  it("pages by the index at the first page's position: a pod moved off the node since is still listed as it was, one moved onto it is not", () =>
    withDb(async (db) => {
      const informer = await populated(db);
      const query = { fieldSelector: parseFieldSelector("spec.nodeName=n2"), limit: 10 };
      const first = listAt(informer.indexer, informer.log, query);
      if (first.expired || !first.next) throw new Error("expected a first page with more to follow");
      const expected = scanned("spec.nodeName=n2");
      // After the first page: the next pod on n2 moves to n3, a pod of n3 moves onto n2.
      const leaving = expected[10]!;
      const leavingIndex = Number(leaving.slice(1));
      informer.applyWatch(
        [
          { type: "MODIFIED", object: { ...podAt(leavingIndex, String(PODS + 1)), spec: { nodeName: "n3" } } },
          { type: "MODIFIED", object: { ...podAt(3, String(PODS + 2)), spec: { nodeName: "n2" } } },
        ],
        String(PODS + 2),
      );
      await informer.processQueue();
      const rest: string[] = [];
      for (let from: Position | undefined = first.next; from; ) {
        const page = listAt(informer.indexer, informer.log, query, from);
        if (page.expired) throw new Error("expired");
        rest.push(...page.items.map((text) => (JSON.parse(text) as KubeObject).metadata.name!));
        from = page.next;
      }
      expect([...first.items.map((text) => (JSON.parse(text) as KubeObject).metadata.name), ...rest]).toEqual(expected);
    }));
});

describe("the query API's list with a field selector an index answers", () => {
  it("reads the index's hits: answered without a heavy-read slot, the same items as a scan", () =>
    withDb(async (db) => {
      const admission = new ReadAdmission();
      const reads = readsOf(await populated(db), admission);
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => reads.listObjects({ namespace: "ns2", fieldSelector: `spec.nodeName=n${i % NODES}`, limit: 500 }, "read")));
      answers.forEach((answer, i) => {
        if (!answer.ok) throw new Error(`expected a page, got ${answer.error.code}`);
        expect(answer.value.value.items.map((text) => (JSON.parse(text) as KubeObject).metadata.name)).toEqual(scanned(`spec.nodeName=n${i % NODES}`, undefined, "ns2"));
      });
      expect(admission.peak).toBe(0);
      // A malformed selector is still the read's own error, never an exception out of the call.
      await expect(reads.listObjects({ fieldSelector: "spec.nodeName" }, "read")).resolves.toMatchObject({ ok: false });
      await expect(Promise.resolve(reads.listAt({ fieldSelector: "spec.nodeName", limit: 5 }, undefined, undefined, { part: "first" }))).resolves.toMatchObject({ ok: false });
    }));
});
