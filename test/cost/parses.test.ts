/**
 * JSON work per applied watch event as budgets (issue 28): what the ingest of an update costs the
 * informer's thread besides SQLite. A watch line of a realistic pod (3.8 KB, managedFields 1.6 KB)
 * is decoded as the KubeClient decodes it and applied through `Informer.applyWatch`; JSON.parse and
 * JSON.stringify are counted, and the text they parse. Deterministic: no timing is involved.
 *
 * Today: one parse per event, of the object's text without its managedFields (2.1 KB: the stored
 * body itself, cut from the line, kube/object-text.ts), and no stringify of the object (its text is
 * the body, admission.ts); a field index reads the parsed object (delta.ts), not the body again.
 * Before issue 28: a parse of the whole line, a stringify per event, and a second parse per event
 * with a field index.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { WatchDecoder } from "../../src/kube/watch-decoder.ts";
import { Prng } from "../fake-apiserver/prng.ts";
import { Workload } from "../fake-apiserver/realistic.ts";
import { withDb } from "../helpers/db.ts";
import { FakeClock } from "../helpers/fakes.ts";

const PODS = 200;
/** Events per applied batch (one transaction), as a busy watch batches them (watch-batch-reader.ts). */
const EVENTS = 200;

function realisticPods(): KubeObject[] {
  const workload = new Workload({ name: "web", namespace: "prod", image: "nginx:1.27", labels: { app: "web" }, replicas: PODS } as never, new Prng(1), "2026-11-20T08:14:03Z");
  return Array.from({ length: PODS }, (_, i) => {
    const pod = workload.pod({ suffix: `p${i}`, nodeName: `node-${i % 5}`, phase: "Running", podIP: "10.0.0.1", hostIP: "10.1.0.1" });
    return { ...pod, metadata: { ...pod.metadata, resourceVersion: "1" } } as unknown as KubeObject;
  });
}

interface JsonWork {
  parses: number;
  parsedUnits: number;
  stringifiedUnits: number;
  bodyUnits: number;
}

/** Lists the pods, then decodes and applies one MODIFIED event per pod: the JSON work per event. */
async function jsonWorkPerEvent(spec: Record<string, unknown>, omitManagedFields = true): Promise<JsonWork> {
  return withDb((db) => {
    const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods", ...spec }, "parses")), new FakeClock(), () => 0.5);
    const pods = realisticPods();
    informer.beginList();
    informer.stage(structuredClone(pods));
    informer.commitList("100", { state: { kind: "watching" }, memory: initialMemory });
    const lines = pods.map((pod, i) => JSON.stringify({ type: "MODIFIED", object: { ...pod, metadata: { ...pod.metadata, resourceVersion: String(200 + i) } } }));
    const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);

    const parse = vi.spyOn(JSON, "parse");
    const stringify = vi.spyOn(JSON, "stringify");
    const decoder = new WatchDecoder({ omitManagedFields });
    const events = decoder.push(bytes);
    informer.applyWatch(events, "399");
    const work: JsonWork = {
      parses: parse.mock.calls.length / EVENTS,
      parsedUnits: parse.mock.calls.reduce((n, [text]) => n + String(text).length, 0) / EVENTS,
      stringifiedUnits: stringify.mock.results.reduce((n, result) => n + String(result.value ?? "").length, 0) / EVENTS,
      bodyUnits: informer.indexer.get("prod/" + pods[0]!.metadata.name)!.body.length,
    };
    vi.restoreAllMocks();
    expect(events).toHaveLength(EVENTS);
    expect(informer.indexer.get("prod/" + pods[0]!.metadata.name)!.resourceVersion).toBe("200");
    return work;
  });
}

describe("JSON work per applied watch event (issue 28)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("one parse, of the stored body's text alone, and no stringify per event", async () => {
    const work = await jsonWorkPerEvent({});
    expect(work.parses).toBeLessThanOrEqual(1.05);
    // The text parsed is the body (managedFields cut before parsing), not the 3.8 KB line.
    expect(work.parsedUnits).toBeLessThanOrEqual(work.bodyUnits * 1.05);
    // Nothing the size of a body is serialized: the log's entries (~100 units an event) alone.
    expect(work.stringifiedUnits).toBeLessThanOrEqual(200);
  });

  it("a field index reads the parsed object: still one parse per event", async () => {
    const work = await jsonWorkPerEvent({ indexers: { byNode: "spec.nodeName" } });
    expect(work.parses).toBeLessThanOrEqual(1.05);
    expect(work.stringifiedUnits).toBeLessThanOrEqual(250);
  });

  it("an informer that keeps managedFields parses them, and still stores the text as received", async () => {
    const work = await jsonWorkPerEvent({ transform: { dropManagedFields: false } }, false);
    expect(work.parses).toBeLessThanOrEqual(1.05);
    expect(work.stringifiedUnits).toBeLessThanOrEqual(200);
    expect(work.bodyUnits).toBeGreaterThan(3_500);
  });
});
