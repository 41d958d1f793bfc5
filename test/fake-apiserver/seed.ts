/**
 * Data for fake clusters:
 * - `seedDemo`: the small, deterministic demo cluster (`npm start`, the "default" test cluster);
 * - `seedBulk`: many realistic pods fast (100k in a few seconds), for benchmarks and large tests;
 * - `startChurn`: background churn at a steady rate (the demo's "live" cluster).
 * Names come from a seeded PRNG, so the same call on the same state always produces the same names;
 * uids and timestamps are stamped by the store as on a real cluster.
 */
import { Cluster, type ClusterRegistry } from "./cluster.ts";
import { Prng } from "./prng.ts";
import { Workload, nowTimestamp, realisticConfigMap, realisticNamespace, realisticNode, realisticWidget } from "./realistic.ts";
import { resourceByName } from "./resources.ts";
import { objectKey, Store } from "./store.ts";
import type { FakeObject, SeedOptions, SeedResult } from "./types.ts";

const pods = resourceByName("pods")!;
const deployments = resourceByName("deployments")!;
const namespaces = resourceByName("namespaces")!;
const nodes = resourceByName("nodes")!;
const configmaps = resourceByName("configmaps")!;
const widgets = resourceByName("widgets")!;

/** Where to seed: a store, a cluster, or a whole server (its "default" cluster). */
export type SeedTarget = Store | Cluster | { clusters: ClusterRegistry };

function storeOf(target: SeedTarget): Store {
  if (target instanceof Store) return target;
  if (target instanceof Cluster) return target.store;
  return target.clusters.defaultCluster.store;
}

/**
 * The demo cluster. Namespaces default, kube-system, demo, payments; nodes node-a, node-b (zone-1),
 * node-c (zone-2); deployments kube-system/coredns (2 pods, k8s-app=kube-dns), demo/web (3 pods,
 * app=web, tier=frontend), demo/api (2, app=api, tier=backend), payments/worker (2, app=worker,
 * tier=backend) — 9 pods, all Running on a node except the last worker pod (Pending, unscheduled);
 * a kube-root-ca.crt ConfigMap per namespace plus demo/web-config; widgets demo/blue, demo/red,
 * payments/green. Idempotent: objects that already exist are left alone.
 */
export function seedDemo(target: SeedTarget): void {
  const store = storeOf(target);
  const rng = new Prng(20240601);
  const time = nowTimestamp();
  const createIfMissing = (def: typeof pods, obj: FakeObject): void => {
    const key = objectKey(def, obj.metadata.namespace, obj.metadata.name!);
    if (!store.table(def).current(key)) store.create(def, obj);
  };
  const nsNames = ["default", "kube-system", "demo", "payments"];
  for (const name of nsNames) createIfMissing(namespaces, realisticNamespace(name));
  const nodeNames = ["node-a", "node-b", "node-c"];
  nodeNames.forEach((name, i) => createIfMissing(nodes, realisticNode(name, i, i < 2 ? "zone-1" : "zone-2", time)));
  const workloads = [
    new Workload({ namespace: "kube-system", name: "coredns", replicas: 2, image: "registry.k8s.io/coredns/coredns:v1.12.0", labels: { "k8s-app": "kube-dns" }, port: 53 }, rng, time),
    new Workload({ namespace: "demo", name: "web", replicas: 3, image: "nginx:1.27", labels: { app: "web", tier: "frontend" }, port: 80 }, rng, time),
    new Workload({ namespace: "demo", name: "api", replicas: 2, image: "ghcr.io/example/shop-api:2.4.1", labels: { app: "api", tier: "backend" } }, rng, time),
    new Workload({ namespace: "payments", name: "worker", replicas: 2, image: "ghcr.io/example/payments-worker:1.9.0", labels: { app: "worker", tier: "backend" } }, rng, time),
  ];
  let podIndex = 0;
  for (const w of workloads) {
    createIfMissing(deployments, w.deployment());
    for (let r = 0; r < w.spec.replicas; r++) {
      const pending = w.spec.name === "worker" && r === w.spec.replicas - 1;
      const nodeIndex = podIndex % nodeNames.length;
      createIfMissing(
        pods,
        w.pod({
          suffix: rng.suffix(5),
          nodeName: pending ? "" : nodeNames[nodeIndex]!,
          phase: pending ? "Pending" : "Running",
          podIP: `10.244.${nodeIndex}.${10 + podIndex}`,
          hostIP: `10.0.0.${nodeIndex + 2}`,
        }),
      );
      podIndex++;
    }
  }
  for (const ns of nsNames) {
    createIfMissing(configmaps, realisticConfigMap(ns, "kube-root-ca.crt", { "ca.crt": "-----BEGIN CERTIFICATE-----\nMIIFAKE\n-----END CERTIFICATE-----\n" }));
  }
  createIfMissing(configmaps, realisticConfigMap("demo", "web-config", { "nginx.conf": "server { listen 80; }\n", LOG_LEVEL: "info" }));
  createIfMissing(widgets, realisticWidget("demo", "blue", "blue", 3));
  createIfMissing(widgets, realisticWidget("demo", "red", "red", 5));
  createIfMissing(widgets, realisticWidget("payments", "green", "green", 1));
}

const APP_NAMES = ["web", "api", "worker", "cache", "auth", "search", "billing", "gateway", "metrics", "queue"];
const IMAGES = ["nginx:1.27", "ghcr.io/example/api:3.1.0", "ghcr.io/example/worker:1.4.2", "redis:7.4", "ghcr.io/example/auth:0.9.8"];

function checkCount(value: unknown, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${name} must be an integer between 0 and ${max}`);
  }
  return value;
}

/** Bulk-creates namespaces `ns-N`, their deployments and pods (plus nodes to place them on). */
export function seedBulk(store: Store, options: SeedOptions): SeedResult {
  const nsCount = checkCount(options.namespaces, "namespaces", 1, 100_000);
  const perNs = checkCount(options.podsPerNamespace, "podsPerNamespace", 10, 1_000_000);
  const depCount = Math.max(1, checkCount(options.deployments, "deployments", 2, 1_000));
  const podBytes = checkCount(options.podBytes, "podBytes", 3000, 1_000_000);
  const rng = new Prng(checkCount(options.seed, "seed", 1, 2 ** 32 - 1));
  const time = nowTimestamp();
  const created = { namespaces: 0, nodes: 0, deployments: 0, pods: 0 };
  const totalPods = nsCount * perNs;

  const nodeNames: string[] = [];
  const nodeCount = Math.max(3, Math.ceil(totalPods / 110));
  for (let i = 0; i < nodeCount; i++) {
    const name = `node-${String(i).padStart(4, "0")}`;
    nodeNames.push(name);
    if (!store.table(nodes).current(name)) {
      store.create(nodes, realisticNode(name, i, `zone-${(i % 3) + 1}`, time));
      created.nodes++;
    }
  }

  let size: { lean: number; padding: string } | undefined;
  const names: string[] = [];
  for (let n = 0; n < nsCount; n++) {
    const ns = `ns-${n}`;
    names.push(ns);
    if (!store.table(namespaces).current(ns)) {
      store.create(namespaces, realisticNamespace(ns));
      created.namespaces++;
    }
    const workloads: Workload[] = [];
    for (let d = 0; d < depCount; d++) {
      const app = d < APP_NAMES.length ? APP_NAMES[d]! : `app-${d}`;
      const replicas = Math.floor(perNs / depCount) + (d < perNs % depCount ? 1 : 0);
      const w = new Workload({ namespace: ns, name: app, replicas, image: IMAGES[d % IMAGES.length]!, labels: { app, tier: d % 2 === 0 ? "frontend" : "backend" } }, rng, time);
      workloads.push(w);
      if (!store.table(deployments).current(objectKey(deployments, ns, app))) {
        store.create(deployments, w.deployment());
        created.deployments++;
      }
    }
    const podTable = store.table(pods);
    for (let i = 0; i < perNs; i++) {
      const w = workloads[i % workloads.length]!;
      const nodeIndex = rng.int(nodeNames.length);
      const roll = rng.next();
      const phase = roll < 0.9 ? "Running" : roll < 0.95 ? "Pending" : "Succeeded";
      const shape = {
        suffix: rng.suffix(5),
        nodeName: nodeNames[nodeIndex]!,
        phase,
        podIP: `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`,
        hostIP: `10.0.${Math.floor(nodeIndex / 250)}.${(nodeIndex % 250) + 2}`,
      };
      size ??= sizeFor(w, shape, podBytes);
      let pod = w.pod({ ...shape, ...size });
      while (podTable.current(objectKey(pods, ns, pod.metadata.name!))) pod = w.pod({ ...shape, suffix: rng.suffix(5), ...size });
      store.create(pods, pod);
      created.pods++;
    }
  }
  return { resourceVersion: String(store.revision), namespaces: names, created };
}

/**
 * How lean pods must be and one shared padding string, so a stored pod's JSON is about `podBytes`
 * (never below the leanest realistic pod, ~1.6 KB).
 */
function sizeFor(w: Workload, shape: Omit<Parameters<Workload["pod"]>[0], "padding" | "lean">, podBytes: number): { lean: number; padding: string } {
  let lean = 0;
  let size = 0;
  for (; lean <= 3; lean++) {
    const sample = w.pod({ ...shape, padding: "", lean });
    // What the store adds: uid (36), resourceVersion (~8), generation, creationTimestamp; and no TypeMeta.
    sample.metadata.uid = "00000000-0000-0000-0000-000000000000";
    sample.metadata.resourceVersion = "10000000";
    sample.metadata.generation = 1;
    sample.metadata.creationTimestamp = "2025-01-01T00:00:00Z";
    delete sample.kind;
    delete sample.apiVersion;
    size = JSON.stringify(sample).length;
    if (size <= podBytes || lean === 3) break;
  }
  return { lean, padding: "x".repeat(Math.max(0, podBytes - size)) };
}

/**
 * Light churn for the demo cluster, `perSecond` operations a second until the returned function is
 * called: one `demoChurnStep` each.
 */
export function startChurn(target: SeedTarget, options: { perSecond: number; seed?: number }): () => void {
  const store = storeOf(target);
  if (!(options.perSecond > 0)) return () => {};
  const rng = new Prng(options.seed ?? 1);
  let step = 0;
  const timer = setInterval(() => demoChurnStep(store, rng, ++step), 1000 / options.perSecond);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * One change to the demo cluster. Unlike `churn` (tests), it keeps the demo recognisable: seeded pods
 * only get status and annotation updates (their labels stay, so the README's example queries keep
 * answering); pods are created and deleted only among its own (`churn=true`), at most
 * `MAX_DEMO_CHURN_PODS`; and a deployment now and then has a replica go unready and come back
 * (`readyReplicas`, `availableReplicas`, `unavailableReplicas`), so the deployments informer
 * has changes to show too. Deployments are never created or deleted, nor their spec changed.
 */
export function demoChurnStep(store: Store, rng: Prng, step: number): void {
  const roll = rng.next();
  if (roll < DEPLOYMENT_SHARE) {
    churnDeployment(store, rng, step);
    return;
  }
  const def = pods;
  const table = store.table(def);
  const live = table.sortedKeys().map((k) => table.current(k)).filter((p): p is FakeObject => p !== undefined);
  const own = live.filter((p) => p.metadata.labels?.churn === "true");
  const podRoll = rng.next();
  if (podRoll < 0.15 && own.length < MAX_DEMO_CHURN_PODS) {
    const template = rng.pick(live.filter((p) => p.metadata.labels?.churn !== "true"));
    if (template) {
      const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ts, ...metadata } = template.metadata;
      const name = `${String(metadata.name).replace(/-[a-z0-9]+$/, "")}-demo-${step}`;
      store.create(def, { ...template, metadata: { ...metadata, name, labels: { ...metadata.labels, churn: "true" } } });
    }
  } else if (podRoll < 0.3 && own.length > 0) {
    store.delete(def, rng.pick(own)!);
  } else if (live.length > 0) {
    const pod = rng.pick(live)!;
    const phase = rng.next() < 0.8 ? "Running" : "Pending";
    store.update(
      def,
      {
        ...pod,
        metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, "demo.example.com/step": String(step) } },
        status: { ...(pod.status as Record<string, unknown>), phase },
      },
      false,
    );
  }
}

/** A replica of a deployment goes unready, or an unready one recovers. */
function churnDeployment(store: Store, rng: Prng, step: number): void {
  const table = store.table(deployments);
  const live = table.sortedKeys().map((k) => table.current(k)).filter((d): d is FakeObject => d !== undefined);
  const deployment = rng.pick(live);
  if (!deployment) return;
  const { unavailableReplicas: _unavailable, ...status } = (deployment.status ?? {}) as Record<string, unknown>;
  const replicas = Number((deployment.spec as { replicas?: number } | undefined)?.replicas ?? 1);
  const ready = Number(status.readyReplicas ?? replicas) < replicas ? replicas : Math.max(0, replicas - 1);
  store.update(
    deployments,
    {
      ...deployment,
      metadata: { ...deployment.metadata, annotations: { ...deployment.metadata.annotations, "demo.example.com/step": String(step) } },
      status: { ...status, readyReplicas: ready, availableReplicas: ready, ...(ready < replicas ? { unavailableReplicas: replicas - ready } : {}) },
    },
    false,
  );
}

/** The share of demo churn steps that change a deployment rather than a pod. */
const DEPLOYMENT_SHARE = 0.2;
const MAX_DEMO_CHURN_PODS = 4;
