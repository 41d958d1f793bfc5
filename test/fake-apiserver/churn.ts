/**
 * Deterministic churn: a seeded sequence of creates (25%), updates (50%) and deletes (25%) on one
 * resource, spread over the namespaces that exist. The same seed on the same starting state gives
 * the same operations (objects are picked from the live keys in key order, never Math.random).
 * Pod updates change status.phase, and about a third of them move the `app` label between
 * web/api/worker, so selector-filtered watches see objects enter and leave their selection.
 */
import { Prng } from "./prng.ts";
import { nowTimestamp, realisticConfigMap, realisticNamespace, realisticNode, realisticWidget, Workload } from "./realistic.ts";
import { resourceByName, type ResourceDef } from "./resources.ts";
import { objectKey, type Store } from "./store.ts";
import type { ChurnOptions, ChurnResult, FakeObject } from "./types.ts";

const APPS = ["web", "api", "worker"];
const PHASES = ["Pending", "Running", "Running", "Running", "Succeeded", "Failed"];

export function churn(store: Store, options: ChurnOptions): ChurnResult {
  const { seed, operations } = options;
  if (typeof seed !== "number" || !Number.isInteger(seed)) throw new RangeError("seed must be an integer");
  if (typeof operations !== "number" || !Number.isInteger(operations) || operations < 0 || operations > 10_000_000) {
    throw new RangeError("operations must be an integer between 0 and 10000000");
  }
  const def = resourceByName(options.resource ?? "pods");
  if (!def) throw new RangeError(`unknown resource ${JSON.stringify(options.resource)}`);
  const rng = new Prng(seed);
  const table = store.table(def);
  const live = table.sortedKeys().filter((k) => table.current(k) !== undefined);
  const namespaces = def.namespaced ? namespacesOf(store, live) : [];
  const nodeTable = store.table(resourceByName("nodes")!);
  const nodeNames = nodeTable.sortedKeys().filter((k) => nodeTable.current(k));
  if (nodeNames.length === 0) nodeNames.push("node-a", "node-b", "node-c");
  const time = nowTimestamp();
  const workloads = new Map<string, Workload>();
  const result = { created: 0, updated: 0, deleted: 0 };

  for (let i = 0; i < operations; i++) {
    const roll = rng.next();
    if (live.length === 0 || roll < 0.25) {
      const ns = def.namespaced ? rng.pick(namespaces) : undefined;
      let obj = newObject(def, ns, `churn-${seed}-${i}`, rng, time, nodeNames, workloads);
      while (table.current(objectKey(def, ns, obj.metadata.name!))) {
        obj = { ...obj, metadata: { ...obj.metadata, name: `${obj.metadata.name}-${rng.suffix(3)}` } };
      }
      const change = store.create(def, obj);
      live.push(change.key);
      result.created++;
    } else if (roll < 0.75) {
      const current = table.current(live[rng.int(live.length)]!)!;
      store.update(def, changed(def, current, i, rng), false);
      result.updated++;
    } else {
      const index = rng.int(live.length);
      const key = live[index]!;
      // Swap-remove keeps picks O(1) and still deterministic.
      live[index] = live[live.length - 1]!;
      live.pop();
      store.delete(def, table.current(key)!);
      result.deleted++;
    }
  }
  return { resourceVersion: String(store.revision), ...result };
}

function namespacesOf(store: Store, liveKeys: string[]): string[] {
  const set = new Set<string>();
  const nsTable = store.table(resourceByName("namespaces")!);
  for (const k of nsTable.sortedKeys()) if (nsTable.current(k)) set.add(k);
  for (const k of liveKeys) set.add(k.slice(0, k.indexOf("/")));
  if (set.size === 0) set.add("default");
  return [...set].sort();
}

function newObject(
  def: ResourceDef,
  ns: string | undefined,
  name: string,
  rng: Prng,
  time: string,
  nodeNames: string[],
  workloads: Map<string, Workload>,
): FakeObject {
  switch (def.name) {
    case "pods": {
      const app = rng.pick(APPS);
      const wkey = `${ns}/${app}`;
      let w = workloads.get(wkey);
      if (!w) {
        w = new Workload({ namespace: ns!, name: app, replicas: 1, image: "nginx:1.27", labels: { app } }, rng, time);
        workloads.set(wkey, w);
      }
      const nodeIndex = rng.int(nodeNames.length);
      const pod = w.pod({ suffix: rng.suffix(5), nodeName: nodeNames[nodeIndex]!, phase: "Pending", podIP: "", hostIP: `10.0.0.${nodeIndex + 2}` });
      const { generateName: _generated, ...metadata } = pod.metadata;
      return { ...pod, metadata: { ...metadata, name, labels: { ...pod.metadata.labels, churn: "true" } } };
    }
    case "configmaps":
      return realisticConfigMap(ns!, name, { value: rng.hex(16) });
    case "widgets":
      return realisticWidget(ns!, name, rng.pick(["red", "green", "blue"]), rng.int(10));
    case "namespaces":
      return realisticNamespace(name);
    case "nodes":
      return realisticNode(name, rng.int(250), "zone-1", time);
    default:
      return { metadata: { name, namespace: ns, labels: { churn: "true" } }, spec: {} };
  }
}

/** A modified copy (stored objects are never mutated). */
function changed(def: ResourceDef, current: FakeObject, step: number, rng: Prng): FakeObject {
  const labels = { ...current.metadata.labels };
  const annotations = { ...current.metadata.annotations, "churn.example.com/step": String(step) };
  if (def.name === "pods") {
    if (rng.next() < 0.33) labels.app = rng.pick(APPS);
    const status = { ...(current.status as Record<string, unknown>), phase: rng.pick(PHASES) };
    return { ...current, metadata: { ...current.metadata, labels, annotations }, status };
  }
  labels.churn = String(step % 5);
  return { ...current, metadata: { ...current.metadata, labels, annotations } };
}
