/**
 * A deterministic pod churn confined to one namespace, written through the fake API server's control
 * API: creates (25%), updates (50%: the phase, and every other one moves the `app` label between
 * web and api so selector watches see objects enter and leave), deletes (25%). The fake's own
 * `churn` spreads over every namespace, which would change the objects whose table rows the other
 * tests pin; this one leaves them alone. It returns every change as a watcher must see it: type,
 * name, resourceVersion and phase, in order.
 */
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { Prng } from "../fake-apiserver/prng.ts";
import type { FakeObject, ObjectOp } from "../fake-apiserver/types.ts";

export interface WatchedChange {
  type: "ADDED" | "MODIFIED" | "DELETED";
  name: string;
  resourceVersion: string;
  /** `status.phase` of the object the event carries (for DELETED, the last state). */
  phase: string;
}

export interface ChurnOptions {
  namespace: string;
  seed: number;
  operations: number;
  /** Operations per control-API call (each call is applied in order, one revision per operation). */
  batch?: number;
}

const PHASES = ["Pending", "Running", "Running", "Succeeded", "Failed"];

function churnPod(namespace: string, name: string, app: string, phase: string, generation: number): FakeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { app, tier: "a", churn: String(generation) } },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }], restartPolicy: "Always", nodeName: "node-a" },
    status: { phase },
  };
}

/** Applies the churn and resolves to the changes in the order the server made them. */
export async function churnNamespace(cluster: FakeCluster, options: ChurnOptions): Promise<WatchedChange[]> {
  const rng = new Prng(options.seed);
  const { namespace } = options;
  const live = new Map<string, FakeObject>();
  for (const item of (await cluster.state("pods", namespace)).items) live.set(item.metadata.name!, item);
  const changes: WatchedChange[] = [];
  const batchSize = options.batch ?? 10;
  for (let done = 0; done < options.operations; ) {
    const ops: ObjectOp[] = [];
    const types: WatchedChange["type"][] = [];
    const planned = new Map(live);
    for (let i = 0; i < batchSize && done < options.operations; i++, done++) {
      const roll = rng.next();
      const names = [...planned.keys()].sort();
      if (names.length === 0 || roll < 0.25) {
        const name = `churn-${options.seed}-${done}`;
        const pod = churnPod(namespace, name, rng.next() < 0.5 ? "web" : "api", "Pending", done);
        planned.set(name, pod);
        ops.push({ op: "create", resource: "pods", object: pod });
        types.push("ADDED");
      } else if (roll < 0.75) {
        const name = names[rng.int(names.length)]!;
        const current = planned.get(name)!;
        const app = (current.metadata.labels?.app === "web") === (done % 2 === 0) ? "api" : "web";
        const pod = churnPod(namespace, name, app, PHASES[rng.int(PHASES.length)]!, done);
        planned.set(name, pod);
        ops.push({ op: "upsert", resource: "pods", object: pod });
        types.push("MODIFIED");
      } else {
        const name = names[rng.int(names.length)]!;
        planned.delete(name);
        ops.push({ op: "delete", resource: "pods", object: { metadata: { name, namespace } } });
        types.push("DELETED");
      }
    }
    const result = await cluster.apply(ops);
    result.objects.forEach((object, i) => {
      const name = object.metadata.name!;
      const phase = String((object.status as { phase?: string } | undefined)?.phase);
      changes.push({ type: types[i]!, name, resourceVersion: object.metadata.resourceVersion!, phase });
      if (types[i] === "DELETED") live.delete(name);
      else live.set(name, object);
    });
  }
  return changes;
}
