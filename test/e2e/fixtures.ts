/**
 * The cluster the end-to-end tests read: 17 pods in three namespaces and four deployments, written
 * by hand so that each table cell below follows from the object by kubectl's printing rules
 * (reference/kubernetes-api-server-facts.md §2, printers.go `printPod` / `printDeployment`), not
 * from anything our code does. Pods cover every STATUS branch the rules name: running, not ready,
 * waiting, init progress, terminated with and without a reason, `status.reason`, sidecars and
 * `deletionTimestamp`. Labels `app` and `tier` are spread so `-l app=web` and `tier in (a,b)` pick
 * from every namespace; some objects carry managedFields, which our cache drops by default.
 *
 * Churn tests write only to their own namespaces (CHURN_WATCH_NAMESPACE, CHURN_INFORMER_NAMESPACE),
 * so the objects here and their rows never change during a run. Every pod there carries a `churn`
 * label, so `-l '!churn'` selects exactly the pods below.
 */
import type { FakeObject } from "../fake-apiserver/types.ts";

export const CHURN_WATCH_NAMESPACE = "churn-watch";
export const CHURN_INFORMER_NAMESPACE = "churn-informer";
export const NAMESPACES = ["shop", "ops", "batch", CHURN_WATCH_NAMESPACE, CHURN_INFORMER_NAMESPACE];

/** Five days ago, so a restart column reads "(5d ago)" for as long as a run can take. */
const FIVE_DAYS_AGO = new Date(Date.now() - 5 * 24 * 3600 * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
const STARTED = FIVE_DAYS_AGO;

type Json = Record<string, unknown>;

const running = (name: string, extra: Json = {}): Json => ({
  name,
  ready: true,
  started: true,
  restartCount: 0,
  image: "nginx:1.27",
  imageID: "",
  state: { running: { startedAt: STARTED } },
  ...extra,
});

const container = (name: string, extra: Json = {}): Json => ({ name, image: "nginx:1.27", ...extra });

const managedFields = [
  { manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "v1", time: STARTED, fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:labels": {} } } },
];

interface PodSeed {
  namespace: string;
  name: string;
  labels: Record<string, string>;
  containers: Json[];
  initContainers?: Json[];
  status: Json;
  metadata?: Json;
  /** The row kubectl prints: READY, STATUS, RESTARTS (AGE is not compared). */
  row: [ready: string, status: string, restarts: string];
}

export const PODS: PodSeed[] = [
  {
    namespace: "shop", name: "web-1", labels: { app: "web", tier: "a" },
    containers: [container("web")],
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [running("web")] },
    metadata: { managedFields },
    row: ["1/1", "Running", "0"],
  },
  {
    // One container not ready; its restarts count, and their time is the last termination's finishedAt.
    namespace: "shop", name: "web-2", labels: { app: "web", tier: "b" },
    containers: [container("web"), container("log")],
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False" }],
      containerStatuses: [
        running("web"),
        running("log", { ready: false, restartCount: 3, lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: STARTED, finishedAt: FIVE_DAYS_AGO } } }),
      ],
    },
    row: ["1/2", "Running", "3 (5d ago)"],
  },
  {
    namespace: "shop", name: "api-1", labels: { app: "api", tier: "b" },
    containers: [container("api")],
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [running("api")] },
    row: ["1/1", "Running", "0"],
  },
  {
    // A waiting reason replaces the phase.
    namespace: "shop", name: "cache-1", labels: { app: "cache", tier: "c" },
    containers: [container("redis")],
    status: { phase: "Pending", containerStatuses: [{ name: "redis", ready: false, started: false, restartCount: 0, image: "redis:7", imageID: "", state: { waiting: { reason: "ContainerCreating" } } }] },
    row: ["0/1", "ContainerCreating", "0"],
  },
  {
    // Initializing: the first init container exited 0 (skipped), the second runs: Init:1/2.
    // While initializing, RESTARTS counts the init containers' restarts only.
    namespace: "shop", name: "setup-1", labels: { app: "web", tier: "a" },
    initContainers: [container("migrate"), container("warm")],
    containers: [container("web")],
    status: {
      phase: "Pending",
      conditions: [{ type: "Initialized", status: "False" }],
      initContainerStatuses: [
        { name: "migrate", ready: false, started: false, restartCount: 0, image: "nginx:1.27", imageID: "", state: { terminated: { exitCode: 0, reason: "Completed", startedAt: STARTED, finishedAt: STARTED } } },
        running("warm", { ready: false, restartCount: 2, lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: STARTED, finishedAt: FIVE_DAYS_AGO } } }),
      ],
      containerStatuses: [{ name: "web", ready: false, started: false, restartCount: 0, image: "nginx:1.27", imageID: "", state: { waiting: { reason: "PodInitializing" } } }],
    },
    row: ["0/1", "Init:1/2", "2 (5d ago)"],
  },
  {
    namespace: "ops", name: "crash-1", labels: { app: "web", tier: "c" },
    containers: [container("web")],
    status: {
      phase: "Running",
      conditions: [{ type: "Ready", status: "False" }],
      containerStatuses: [
        { name: "web", ready: false, started: false, restartCount: 5, image: "nginx:1.27", imageID: "", state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 5m0s" } }, lastState: { terminated: { exitCode: 1, reason: "Error", startedAt: STARTED, finishedAt: FIVE_DAYS_AGO } } },
      ],
    },
    row: ["0/1", "CrashLoopBackOff", "5 (5d ago)"],
  },
  {
    namespace: "ops", name: "job-1", labels: { app: "job", tier: "c" },
    containers: [container("job")],
    status: { phase: "Succeeded", containerStatuses: [{ name: "job", ready: false, started: false, restartCount: 0, image: "nginx:1.27", imageID: "", state: { terminated: { exitCode: 0, reason: "Completed", startedAt: STARTED, finishedAt: STARTED } } }] },
    row: ["0/1", "Completed", "0"],
  },
  {
    // Terminated without a reason: ExitCode:n.
    namespace: "ops", name: "failed-1", labels: { app: "job", tier: "a" },
    containers: [container("job")],
    status: { phase: "Failed", containerStatuses: [{ name: "job", ready: false, started: false, restartCount: 0, image: "nginx:1.27", imageID: "", state: { terminated: { exitCode: 2, startedAt: STARTED, finishedAt: STARTED } } }] },
    row: ["0/1", "ExitCode:2", "0"],
  },
  {
    // status.reason replaces the phase.
    namespace: "ops", name: "evicted-1", labels: { app: "api", tier: "b" },
    containers: [container("api")],
    status: { phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory." },
    row: ["0/1", "Evicted", "0"],
  },
  {
    // A started, ready sidecar (init container with restartPolicy Always) counts in READY: 2/2.
    namespace: "ops", name: "sidecar-1", labels: { app: "api", tier: "a" },
    initContainers: [container("proxy", { restartPolicy: "Always" })],
    containers: [container("api")],
    status: {
      phase: "Running",
      conditions: [{ type: "Initialized", status: "True" }, { type: "Ready", status: "True" }],
      initContainerStatuses: [running("proxy")],
      containerStatuses: [running("api")],
    },
    row: ["2/2", "Running", "0"],
  },
  {
    // deletionTimestamp set on a running pod: Terminating.
    namespace: "ops", name: "gone-1", labels: { app: "web", tier: "b" },
    containers: [container("web")],
    status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [running("web")] },
    metadata: { deletionTimestamp: "2030-01-01T00:00:00Z", deletionGracePeriodSeconds: 30, finalizers: ["example.com/hold"] },
    row: ["1/1", "Terminating", "0"],
  },
  ...[0, 1, 2, 3, 4, 5].map(
    (i): PodSeed => ({
      namespace: "batch", name: `worker-${i}`, labels: { app: "worker", tier: i % 2 === 0 ? "b" : "c" },
      containers: [container("worker")],
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [running("worker")] },
      row: ["1/1", "Running", "0"],
    }),
  ),
];

export function podObject(seed: PodSeed): FakeObject {
  const spec: Json = { containers: seed.containers, restartPolicy: "Always", nodeName: "node-a" };
  if (seed.initContainers) spec.initContainers = seed.initContainers;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: seed.name, namespace: seed.namespace, labels: seed.labels, ...seed.metadata },
    spec,
    status: seed.status,
  };
}

interface DeploymentSeed {
  namespace: string;
  name: string;
  replicas: number;
  status: Json;
  managed?: boolean;
  /** READY, UP-TO-DATE, AVAILABLE. */
  row: [ready: string, upToDate: string, available: string];
}

export const DEPLOYMENTS: DeploymentSeed[] = [
  { namespace: "shop", name: "web", replicas: 3, status: { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 }, row: ["2/3", "3", "2"] },
  { namespace: "shop", name: "api", replicas: 1, status: { replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 }, row: ["1/1", "1", "1"] },
  // A rollout in progress: 4 of 6 updated.
  { namespace: "batch", name: "worker", replicas: 6, status: { replicas: 6, updatedReplicas: 4, readyReplicas: 6, availableReplicas: 6 }, managed: true, row: ["6/6", "4", "6"] },
  // Scaled to zero: the status has no counts, so every cell is 0.
  { namespace: "ops", name: "paused", replicas: 0, status: {}, row: ["0/0", "0", "0"] },
];

export function deploymentObject(seed: DeploymentSeed): FakeObject {
  const labels = { app: seed.name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: seed.name, namespace: seed.namespace, labels, ...(seed.managed ? { managedFields } : {}) },
    spec: {
      replicas: seed.replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [container(seed.name)] } },
    },
    status: seed.status,
  };
}

/** A few pods per churn namespace, so watches and informers start from a non-empty list. */
export function churnSeedPods(namespace: string): FakeObject[] {
  return [0, 1, 2].map((i) =>
    podObject({
      namespace, name: `seed-${i}`, labels: { app: i === 0 ? "web" : "api", tier: "a", churn: "seed" },
      containers: [container("main")],
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }], containerStatuses: [running("main")] },
      row: ["1/1", "Running", "0"],
    }),
  );
}

/**
 * Nodes and config maps for the Table comparisons of kubectl-table.e2e.test.ts: a ready control-plane
 * node with addresses and node info, a NotReady one, and a cordoned one without info (`<unknown>`
 * wide cells); config maps with data, binary data and none. Their rows are whatever both printers
 * agree on: the test compares /k8s with the fake API server, command for command.
 */
export const NODES: FakeObject[] = [
  {
    apiVersion: "v1", kind: "Node",
    metadata: { name: "node-a", labels: { "node-role.kubernetes.io/control-plane": "", "kubernetes.io/hostname": "node-a" } },
    spec: {},
    status: {
      conditions: [{ type: "MemoryPressure", status: "False" }, { type: "Ready", status: "True" }],
      addresses: [{ type: "InternalIP", address: "10.0.0.10" }, { type: "ExternalIP", address: "203.0.113.10" }, { type: "Hostname", address: "node-a" }],
      nodeInfo: { kubeletVersion: "v1.32.2", osImage: "Debian GNU/Linux 12 (bookworm)", kernelVersion: "6.1.0-28-amd64", containerRuntimeVersion: "containerd://1.7.24" },
    },
  },
  {
    apiVersion: "v1", kind: "Node",
    metadata: { name: "node-b", labels: { "kubernetes.io/role": "worker" } },
    spec: {},
    status: { conditions: [{ type: "Ready", status: "False" }], addresses: [{ type: "InternalIP", address: "10.0.0.11" }], nodeInfo: { kubeletVersion: "v1.31.5" } },
  },
  { apiVersion: "v1", kind: "Node", metadata: { name: "node-c" }, spec: { unschedulable: true }, status: {} },
];

export const CONFIG_MAPS: FakeObject[] = [
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "settings", namespace: "shop" }, data: { a: "1", b: "2" } } as FakeObject,
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "certs", namespace: "ops" }, data: { "ca.crt": "x" }, binaryData: { "ca.der": "AAE=" } } as FakeObject,
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "empty", namespace: "batch" } },
];
