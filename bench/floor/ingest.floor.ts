/**
 * Where a durable watch event's CPU goes, piece by piece, inside workerd on Durable Object SQLite
 * (BENCHMARKS.md "The floor of durable ingest"). Each figure is the wall time of a loop over
 * pre-built input divided by its events; workerd's clock moves only across I/O, so every timed
 * region starts and ends after a timer. Run on a quiet machine: the figures are wall time.
 */
import { deflateRawSync, inflateRawSync, constants } from "node:zlib";
import { it } from "vitest";
import { Informer } from "../../src/cache/informer.ts";
import { initialMemory } from "../../src/cache/reflector-memory.ts";
import { informerSettings, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { ListDecoder } from "../../src/kube/list-decoder.ts";
import { takeDecodedText } from "../../src/kube/object-text.ts";
import { parseWatchLine, WatchDecoder } from "../../src/kube/watch-decoder.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { type Db, stmt } from "../../src/sql.ts";
import { withDb } from "../../test/helpers/db.ts";
import { FakeClock } from "../../test/helpers/fakes.ts";
import { Prng } from "../../test/fake-apiserver/prng.ts";
import { Workload } from "../../test/fake-apiserver/realistic.ts";

const PODS = 5_000;
const EVENTS = 30_000;
const results: { piece: string; usPerEvent: number }[] = [];

const afterTimer = () => new Promise((resolve) => setTimeout(resolve, 0));

async function measure(piece: string, run: () => void | Promise<void>): Promise<void> {
  await afterTimer();
  const start = Date.now();
  await run();
  await afterTimer();
  results.push({ piece, usPerEvent: Math.round(((Date.now() - start) * 10_000) / EVENTS) / 10 });
}

function realisticPods(): KubeObject[] {
  const workload = new Workload(
    { name: "web", namespace: "prod", image: "nginx:1.27", labels: { app: "web" }, replicas: PODS } as never,
    new Prng(1),
    "2026-11-20T08:14:03Z",
  );
  return Array.from({ length: PODS }, (_, i) => {
    const pod = workload.pod({ suffix: `p${i}`, nodeName: `node-${i % 50}`, phase: "Running", podIP: "10.0.0.1", hostIP: "10.1.0.1" });
    return { ...pod, metadata: { ...pod.metadata, resourceVersion: "1" } } as unknown as KubeObject;
  });
}

/** EVENTS MODIFIED lines over the pods, round robin, each with a new resourceVersion. */
function watchLines(pods: KubeObject[]): string[] {
  return Array.from({ length: EVENTS }, (_, i) => {
    const pod = pods[i % PODS]!;
    return JSON.stringify({ type: "MODIFIED", object: { ...pod, metadata: { ...pod.metadata, resourceVersion: String(1_000 + i) } } });
  });
}

function listedInformer(db: Db, pods: KubeObject[]): Informer {
  const informer = new Informer(db, informerSettings(parseInformerSpec({ resource: "pods" }, "floor")), new FakeClock(), () => 0.5);
  informer.beginList();
  for (let i = 0; i < PODS; i += 500) informer.stage(structuredClone(pods.slice(i, i + 500)));
  informer.commitList("999", { state: { kind: "watching" }, memory: initialMemory });
  return informer;
}

async function applyAll(informer: Informer, events: WatchEvent[], batch: number): Promise<void> {
  for (let i = 0; i < EVENTS; i += batch) {
    informer.applyWatch(events.slice(i, i + batch), events[Math.min(i + batch, EVENTS) - 1]!.object.metadata.resourceVersion!);
    await afterTimer(); // as between watch batches: the commit is flushed
  }
}

it("measures the pieces of durable ingest", async () => {
  const pods = realisticPods();
  const lines = watchLines(pods);
  const bytes = new TextEncoder().encode(`${lines.join("\n")}\n`);
  const parsed = () => lines.map((line) => JSON.parse(line) as WatchEvent);

  await measure("decode: TextDecoder + split + JSON.parse (64 KB reads)", () => {
    const decoder = new WatchDecoder();
    for (let i = 0; i < bytes.length; i += 65_536) decoder.push(bytes.subarray(i, i + 65_536));
  });
  const list = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"999"},"items":[${lines.map((line) => line.slice('{"type":"MODIFIED","object":'.length, -1)).join(",")}]}`;
  const decoder = new TextDecoder();
  const listBytes = new TextEncoder().encode(list);
  await measure("list decode: ListDecoder (split + JSON.parse per item, 64 KB reads)", () => {
    const items = new ListDecoder(() => {});
    for (let i = 0; i < listBytes.length; i += 65_536) items.push(decoder.decode(listBytes.subarray(i, i + 65_536), { stream: true }));
    items.end();
  });
  // Issue 28: an event's body made as before (the whole line parsed, managedFields deleted, the
  // object serialized again) and as the informer's watch now makes it (managedFields cut from the
  // text, the rest parsed, the text kept as the body); lines split from 64 KB reads both ways.
  const splitLines = (): string[] => {
    const text = new TextDecoder();
    const out: string[] = [];
    let carry = "";
    for (let i = 0; i < bytes.length; i += 65_536) {
      const chunk = carry + text.decode(bytes.subarray(i, i + 65_536), { stream: true });
      let start = 0;
      for (let newline = chunk.indexOf("\n"); newline !== -1; newline = chunk.indexOf("\n", start)) {
        out.push(chunk.slice(start, newline));
        start = newline + 1;
      }
      carry = chunk.slice(start);
    }
    return out;
  };
  for (const round of [1, 2, 3]) {
    await measure(`decode and make the body, round ${round}, as before: split, JSON.parse of the line, drop managedFields, JSON.stringify`, () => {
      for (const line of splitLines()) {
        const event = parseWatchLine(line);
        delete event.object.metadata.managedFields;
        JSON.stringify(event.object);
      }
    });
    await measure(`decode and make the body, round ${round}, now: split, cut managedFields from the text, JSON.parse of the rest, the text is the body`, () => {
      const decoder = new WatchDecoder({ omitManagedFields: true });
      for (let i = 0; i < bytes.length; i += 65_536) for (const event of decoder.push(bytes.subarray(i, i + 65_536))) takeDecodedText(event.object);
    });
  }
  await measure("JSON.parse of each event line alone", () => {
    for (const line of lines) JSON.parse(line);
  });
  const events = parsed();
  await measure("transform: drop managedFields + JSON.stringify", () => {
    for (const event of events) {
      delete event.object.metadata.managedFields;
      JSON.stringify(event.object);
    }
  });
  const bodies = events.map((event) => JSON.stringify(event.object));
  // Would fewer bytes written pay for compressing them? (zlib is native in workerd with nodejs_compat.)
  let compressed: Uint8Array[] = [];
  await measure("compress the body: deflateRawSync, level 1", () => {
    compressed = bodies.map((body) => deflateRawSync(body, { level: constants.Z_BEST_SPEED }));
  });
  await measure("decompress it: inflateRawSync + TextDecoder", () => {
    const text = new TextDecoder();
    for (const bytes of compressed) text.decode(inflateRawSync(bytes));
  });
  const ratio = compressed.reduce((n, b) => n + b.length, 0) / bodies.reduce((n, b) => n + b.length, 0);
  console.log(`deflate level 1: ${Math.round(ratio * 100)}% of the body's size`);
  await withDb(async (db) => {
    db.run(stmt("floor.createBlob", "CREATE TABLE floor_blobs (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, body BLOB NOT NULL)"));
    const insert = stmt("floor.insertBlob", `INSERT INTO floor_blobs (seq, key, body) VALUES ${Array(10).fill("(?, ?, ?)").join(", ")}`);
    await measure("SQLite alone: insert the compressed body, 200 per transaction", async () => {
      for (let i = 0; i < EVENTS; i += 200) {
        db.transaction(() => {
          for (let j = i; j < i + 200; j += 10) {
            db.run(insert, ...Array.from({ length: 10 }, (_, k) => [j + k, `prod/p${(j + k) % PODS}`, compressed[j + k]]).flat());
          }
        });
        await afterTimer();
      }
    });
  });
  for (const batch of [50, 200, 1_000]) {
    await withDb(async (db) => {
      db.run(stmt("floor.create", "CREATE TABLE floor_rows (seq INTEGER PRIMARY KEY, key TEXT NOT NULL, body TEXT NOT NULL)"));
      const insert = stmt("floor.insert", `INSERT INTO floor_rows (seq, key, body) VALUES ${Array(10).fill("(?, ?, ?)").join(", ")}`);
      await measure(`SQLite alone: insert the transformed body (${Math.round(bodies[0]!.length / 100) / 10} KB), ${batch} per transaction`, async () => {
        for (let i = 0; i < EVENTS; i += batch) {
          db.transaction(() => {
            for (let j = i; j < i + batch; j += 10) {
              db.run(insert, ...Array.from({ length: 10 }, (_, k) => [j + k, `prod/p${(j + k) % PODS}`, bodies[j + k]]).flat());
            }
          });
          await afterTimer();
        }
      });
    });
  }
  for (const batch of [50, 200, 1_000]) {
    await withDb(async (db) => {
      const informer = listedInformer(db, pods);
      const input = parsed();
      await measure(`applyWatch (transform, queue, pop, index, log), ${batch} events per transaction`, () => applyAll(informer, input, batch));
    });
  }
  // Issue 28: events as the watch decodes them carry their text, which becomes the body (no
  // transform, no JSON.stringify); parsed lines go through the transform and JSON.stringify.
  const decoded = () => new WatchDecoder({ omitManagedFields: true }).push(bytes);
  for (const round of [1, 2]) {
    for (const [how, input] of [["parsed lines (transform + JSON.stringify)", parsed], ["decoded events (the text is the body)", decoded]] as const) {
      await withDb(async (db) => {
        const informer = listedInformer(db, pods);
        const events = input();
        await measure(`applyWatch, round ${round}, 200 per transaction, of ${how}`, () => applyAll(informer, events, 200));
      });
    }
  }
  await withDb(async (db) => {
    const informer = listedInformer(db, pods);
    const input = parsed();
    // What is left without the two writes: the JavaScript around them and the small statements.
    Object.assign(informer.indexer, { writeInTx: () => {} });
    const append = informer.log.appendInTx.bind(informer.log);
    Object.assign(informer.log, { appendInTx: () => append([]) });
    await measure("applyWatch without the object and log writes, 200 per transaction", () => applyAll(informer, input, 200));
  });

  const table = results.map((r) => `${String(r.usPerEvent).padStart(7)} µs/event  ${r.piece}`).join("\n");
  console.log(`\n${EVENTS} MODIFIED events over ${PODS} cached pods, ${lines[0]!.length} bytes per watch line\n${table}`);
});
