/**
 * Factories for objects that look like a real cluster's (managedFields, ownerReferences, conditions,
 * tolerations, …) so informers and benchmarks handle realistic sizes and shapes. Parts that are the
 * same for every pod of a deployment are built once and shared between pods: stored objects are
 * never mutated, and sharing keeps 100k pods cheap in memory while their JSON stays full size.
 */
import type { FakeObject } from "./types.ts";
import type { Prng } from "./prng.ts";

export const PADDING_ANNOTATION = "fake.example.com/padding";

export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function realisticNamespace(name: string): FakeObject {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "kubernetes.io/metadata.name": name } },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

export function realisticNode(name: string, index: number, zone: string, time: string): FakeObject {
  const ip = `10.0.${Math.floor(index / 250)}.${(index % 250) + 2}`;
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      labels: {
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node-role.kubernetes.io/worker": "",
        "topology.kubernetes.io/zone": zone,
      },
      annotations: { "node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true" },
    },
    spec: { podCIDR: `10.244.${index % 256}.0/24`, podCIDRs: [`10.244.${index % 256}.0/24`], providerID: `fake://${name}` },
    status: {
      capacity: { cpu: "8", "ephemeral-storage": "102350Mi", memory: "32869488Ki", pods: "110" },
      allocatable: { cpu: "7910m", "ephemeral-storage": "94315026165", memory: "31211120Ki", pods: "110" },
      conditions: [
        { type: "MemoryPressure", status: "False", lastHeartbeatTime: time, lastTransitionTime: time, reason: "KubeletHasSufficientMemory", message: "kubelet has sufficient memory available" },
        { type: "DiskPressure", status: "False", lastHeartbeatTime: time, lastTransitionTime: time, reason: "KubeletHasNoDiskPressure", message: "kubelet has no disk pressure" },
        { type: "PIDPressure", status: "False", lastHeartbeatTime: time, lastTransitionTime: time, reason: "KubeletHasSufficientPID", message: "kubelet has sufficient PID available" },
        { type: "Ready", status: "True", lastHeartbeatTime: time, lastTransitionTime: time, reason: "KubeletReady", message: "kubelet is posting ready status" },
      ],
      addresses: [
        { type: "InternalIP", address: ip },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: "0".repeat(32),
        systemUUID: "00000000-0000-0000-0000-000000000000",
        bootID: "00000000-0000-0000-0000-000000000000",
        kernelVersion: "6.8.0-45-generic",
        osImage: "Ubuntu 24.04.1 LTS",
        containerRuntimeVersion: "containerd://2.0.0",
        kubeletVersion: "v1.34.0",
        kubeProxyVersion: "",
        operatingSystem: "linux",
        architecture: "amd64",
      },
    },
  };
}

export interface WorkloadSpec {
  namespace: string;
  name: string;
  replicas: number;
  image: string;
  /** Selector labels; pods also get `pod-template-hash`. */
  labels: Record<string, string>;
  port?: number;
}

/** A deployment plus the shared parts of its pods (one ReplicaSet generation). */
export class Workload {
  readonly spec: WorkloadSpec;
  readonly templateHash: string;
  readonly replicaSetName: string;
  readonly replicaSetUid: string;
  private readonly time: string;
  private readonly podLabels: Record<string, string>;
  private readonly ownerReferences: unknown[];
  private readonly containers: unknown[];
  private readonly managedFields: unknown[];
  private readonly tolerations: unknown[];
  private readonly containerName: string;
  private readonly generateName: string;
  private readonly statusCache = new Map<string, { conditions: unknown[]; containerStatuses: unknown[] }>();

  constructor(spec: WorkloadSpec, rng: Prng, time: string) {
    this.spec = spec;
    this.time = time;
    this.templateHash = rng.suffix(9).replace(/^[^b-z]/, "7");
    this.replicaSetName = `${spec.name}-${this.templateHash}`;
    this.replicaSetUid = rng.uuid();
    this.containerName = spec.name;
    this.generateName = `${this.replicaSetName}-`;
    const port = spec.port ?? 8080;
    this.podLabels = { ...spec.labels, "pod-template-hash": this.templateHash };
    this.ownerReferences = [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: this.replicaSetName, uid: this.replicaSetUid, controller: true, blockOwnerDeletion: true },
    ];
    this.containers = [
      {
        name: this.containerName,
        image: spec.image,
        ports: [{ containerPort: port, protocol: "TCP" }],
        resources: { limits: { memory: "256Mi" }, requests: { cpu: "100m", memory: "128Mi" } },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent",
      },
    ];
    this.tolerations = [
      { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
      { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
    ];
    const labelFields: Record<string, unknown> = { ".": {} };
    for (const key of Object.keys(this.podLabels)) labelFields[`f:${key}`] = {};
    this.managedFields = [
      {
        manager: "kube-controller-manager",
        operation: "Update",
        apiVersion: "v1",
        time,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": {
            "f:generateName": {},
            "f:labels": labelFields,
            "f:ownerReferences": { ".": {}, [`k:{"uid":"${this.replicaSetUid}"}`]: {} },
          },
          "f:spec": {
            "f:containers": {
              [`k:{"name":"${this.containerName}"}`]: {
                ".": {},
                "f:image": {},
                "f:imagePullPolicy": {},
                "f:name": {},
                "f:ports": { ".": {}, [`k:{"containerPort":${port},"protocol":"TCP"}`]: { ".": {}, "f:containerPort": {}, "f:protocol": {} } },
                "f:resources": { ".": {}, "f:limits": { ".": {}, "f:memory": {} }, "f:requests": { ".": {}, "f:cpu": {}, "f:memory": {} } },
                "f:terminationMessagePath": {},
                "f:terminationMessagePolicy": {},
              },
            },
            "f:dnsPolicy": {},
            "f:enableServiceLinks": {},
            "f:restartPolicy": {},
            "f:schedulerName": {},
            "f:securityContext": {},
            "f:terminationGracePeriodSeconds": {},
          },
        },
      },
      {
        manager: "kubelet",
        operation: "Update",
        apiVersion: "v1",
        time,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:status": {
            "f:conditions": {
              'k:{"type":"ContainersReady"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} },
              'k:{"type":"Initialized"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} },
              'k:{"type":"PodReadyToStartContainers"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} },
              'k:{"type":"Ready"}': { ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} },
            },
            "f:containerStatuses": {},
            "f:hostIP": {},
            "f:hostIPs": {},
            "f:phase": {},
            "f:podIP": {},
            "f:podIPs": {},
            "f:startTime": {},
          },
        },
        subresource: "status",
      },
    ];
  }

  deployment(): FakeObject {
    const { namespace, name, replicas, labels } = this.spec;
    const t = this.time;
    return {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, labels: { ...labels }, annotations: { "deployment.kubernetes.io/revision": "1" } },
      spec: {
        replicas,
        selector: { matchLabels: { ...labels } },
        template: {
          metadata: { labels: { ...labels } },
          spec: {
            containers: this.containers,
            restartPolicy: "Always",
            terminationGracePeriodSeconds: 30,
            dnsPolicy: "ClusterFirst",
            securityContext: {},
            schedulerName: "default-scheduler",
          },
        },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: {
        observedGeneration: 1,
        replicas,
        updatedReplicas: replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        conditions: [
          { type: "Available", status: "True", lastUpdateTime: t, lastTransitionTime: t, reason: "MinimumReplicasAvailable", message: "Deployment has minimum availability." },
          { type: "Progressing", status: "True", lastUpdateTime: t, lastTransitionTime: t, reason: "NewReplicaSetAvailable", message: `ReplicaSet "${this.replicaSetName}" has successfully progressed.` },
        ],
      },
    };
  }

  /**
   * A pod of this workload; `padding` (a shared string) pads its JSON toward a target size.
   * `lean` 0-3 drops bulk for small targets: 1 the kubelet's managedFields entry, 2 also all but the
   * Ready/PodScheduled conditions, 3 also the tolerations (managedFields itself always stays).
   */
  pod(p: { suffix: string; nodeName: string; phase: string; podIP: string; hostIP: string; padding?: string; lean?: number }): FakeObject {
    const lean = p.lean ?? 0;
    const scheduled = p.nodeName !== "";
    const running = p.phase === "Running";
    const metadata: FakeObject["metadata"] = {
      name: `${this.replicaSetName}-${p.suffix}`,
      generateName: this.generateName,
      namespace: this.spec.namespace,
      labels: this.podLabels,
    };
    if (p.padding !== undefined) metadata.annotations = { [PADDING_ANNOTATION]: p.padding };
    metadata.ownerReferences = this.ownerReferences;
    metadata.managedFields = lean >= 1 ? this.managedFields.slice(0, 1) : this.managedFields;
    const spec: Record<string, unknown> = {
      containers: this.containers,
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "default",
      serviceAccount: "default",
    };
    if (scheduled) spec.nodeName = p.nodeName;
    spec.securityContext = {};
    spec.schedulerName = "default-scheduler";
    if (lean < 3) spec.tolerations = this.tolerations;
    spec.priority = 0;
    spec.enableServiceLinks = true;
    spec.preemptionPolicy = "PreemptLowerPriority";
    const parts = this.statusParts(p.phase, scheduled, lean >= 2);
    const status: Record<string, unknown> = { phase: p.phase, conditions: parts.conditions };
    if (scheduled) {
      status.hostIP = p.hostIP;
      status.hostIPs = [{ ip: p.hostIP }];
      if (running && p.podIP) {
        status.podIP = p.podIP;
        status.podIPs = [{ ip: p.podIP }];
      }
      status.startTime = this.time;
      status.containerStatuses = parts.containerStatuses;
    }
    status.qosClass = "Burstable";
    return { apiVersion: "v1", kind: "Pod", metadata, spec, status };
  }

  /** Conditions and container statuses depend only on phase and scheduling: built once, shared. */
  private statusParts(phase: string, scheduled: boolean, lean: boolean): { conditions: unknown[]; containerStatuses: unknown[] } {
    const key = `${phase}/${scheduled}/${lean}`;
    let parts = this.statusCache.get(key);
    if (parts) return parts;
    const t = this.time;
    const running = phase === "Running";
    const ready = running ? "True" : "False";
    const condition = (type: string, status: string) => ({ type, status, lastProbeTime: null, lastTransitionTime: t });
    let conditions: unknown[];
    if (!scheduled) {
      conditions = [{ ...condition("PodScheduled", "False"), reason: "Unschedulable", message: "0/3 nodes are available: 3 Insufficient cpu." }];
    } else if (lean) {
      conditions = [condition("Ready", ready), condition("PodScheduled", "True")];
    } else {
      conditions = [
        condition("PodReadyToStartContainers", ready),
        condition("Initialized", "True"),
        condition("Ready", ready),
        condition("ContainersReady", ready),
        condition("PodScheduled", "True"),
      ];
    }
    const containerStatuses = [
      {
        name: this.containerName,
        state: running ? { running: { startedAt: t } } : phase === "Pending" ? { waiting: { reason: "ContainerCreating" } } : { terminated: { exitCode: phase === "Failed" ? 1 : 0, reason: phase === "Failed" ? "Error" : "Completed", startedAt: t, finishedAt: t } },
        lastState: {},
        ready: running,
        restartCount: 0,
        image: this.spec.image,
        imageID: "",
        started: running,
      },
    ];
    parts = { conditions, containerStatuses };
    this.statusCache.set(key, parts);
    return parts;
  }
}

export function realisticConfigMap(namespace: string, name: string, data: Record<string, string>): FakeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

export function realisticWidget(namespace: string, name: string, color: string, size: number): FakeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name, namespace, labels: { color } },
    spec: { color, size },
    status: { ready: true },
  };
}
