// The per-kind Table printers. Every expected row is worked out by hand from kube-apiserver 1.32's
// printers.go rules (column lists in AddHandlers, cells in each print function), not from our output.
// Rows list every cell, wide ones included, as the server always prints wide.
import { describe, expect, it } from "vitest";
import { columnDefinitions, printerFor, tableRow, type GroupKind, type TableOptions } from "../../../src/k8s/table.ts";
import type { KubeObject } from "../../../src/kube/types.ts";

const NOW = Date.parse("2025-06-01T12:00:00Z");
const HOUR = 3600_000;
const ago = (ms: number): string => new Date(NOW - ms).toISOString().replace(".000Z", "Z");
const options: TableOptions = { now: NOW, includeObject: "None", apiVersion: "meta.k8s.io/v1" };
const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: "ns", creationTimestamp: ago(2 * HOUR), ...extra });
const WIDGET: GroupKind = { group: "example.com", kind: "Widget" };
const template = { spec: { containers: [{ name: "app", image: "app:1" }, { name: "log", image: "log:2" }] } };

/** A kind as kubectl names it with its group: "Deployment.apps"; "Pod" is core. */
const groupKind = (name: string): GroupKind => {
  const dot = name.indexOf(".");
  return dot === -1 ? { group: "", kind: name } : { group: name.slice(dot + 1), kind: name.slice(0, dot) };
};
const cells = (kind: string, object: Omit<KubeObject, "metadata"> & { metadata?: KubeObject["metadata"] }) =>
  tableRow(groupKind(kind), { metadata: meta("x"), ...object } as KubeObject, options).cells;
const header = (kind: string) => columnDefinitions(groupKind(kind)).map((c) => (c.priority === 0 ? c.name : `${c.name}*`));

describe("column definitions per kind (wide columns marked *)", () => {
  it.each([
    ["Service", ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector*"]],
    ["Endpoints", ["Name", "Endpoints", "Age"]],
    ["Node", ["Name", "Status", "Roles", "Age", "Version", "Internal-IP*", "External-IP*", "OS-Image*", "Kernel-Version*", "Container-Runtime*"]],
    ["Event", ["Last Seen", "Type", "Reason", "Object", "Subobject*", "Source*", "Message", "First Seen*", "Count*", "Name*"]],
    ["ConfigMap", ["Name", "Data", "Age"]],
    ["Secret", ["Name", "Type", "Data", "Age"]],
    ["Namespace", ["Name", "Status", "Age"]],
    ["ServiceAccount", ["Name", "Secrets", "Age"]],
    ["ReplicaSet.apps", ["Name", "Desired", "Current", "Ready", "Age", "Containers*", "Images*", "Selector*"]],
    ["StatefulSet.apps", ["Name", "Ready", "Age", "Containers*", "Images*"]],
    ["DaemonSet.apps", ["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age", "Containers*", "Images*", "Selector*"]],
    ["Job.batch", ["Name", "Status", "Completions", "Duration", "Age", "Containers*", "Images*", "Selector*"]],
    ["CronJob.batch", ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule", "Age", "Containers*", "Images*", "Selector*"]],
    ["PersistentVolumeClaim", ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age", "VolumeMode*"]],
    ["PersistentVolume", ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass", "VolumeAttributesClass", "Reason", "Age", "VolumeMode*"]],
    ["Ingress.networking.k8s.io", ["Name", "Class", "Hosts", "Address", "Ports", "Age"]],
    ["HorizontalPodAutoscaler.autoscaling", ["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"]],
    ["RoleBinding.rbac.authorization.k8s.io", ["Name", "Role", "Age", "Users*", "Groups*", "ServiceAccounts*"]],
    ["ClusterRole.rbac.authorization.k8s.io", ["Name", "Created At"]],
  ])("%s", (kind, expected) => {
    expect(header(kind)).toEqual(expected);
  });

  it("describes every column of every built-in kind, as the API server does", () => {
    const kinds = ["Pod", "Service", "Endpoints", "Node", "Event", "ConfigMap", "Secret", "Namespace", "ServiceAccount", "PersistentVolumeClaim", "PersistentVolume", "ReplicationController", "ResourceQuota", "PodTemplate",
      "Deployment.apps", "ReplicaSet.apps", "StatefulSet.apps", "DaemonSet.apps", "ControllerRevision.apps", "Job.batch", "CronJob.batch", "HorizontalPodAutoscaler.autoscaling", "PodDisruptionBudget.policy",
      "Ingress.networking.k8s.io", "IngressClass.networking.k8s.io", "NetworkPolicy.networking.k8s.io", "EndpointSlice.discovery.k8s.io", "Lease.coordination.k8s.io",
      "RoleBinding.rbac.authorization.k8s.io", "ClusterRoleBinding.rbac.authorization.k8s.io", "StorageClass.storage.k8s.io"];
    for (const kind of kinds) for (const c of columnDefinitions(groupKind(kind))) expect(c.description, `${kind} ${c.name}`).not.toBe("");
  });

  it.each([
    // printers.go quotes k8s.io/api swagger docs: core/v1 ServiceSpec, ObjectReference, and extensions/v1beta1 for a ReplicaSet's Desired.
    ["Service", "Type", "type determines how the Service is exposed. Defaults to ClusterIP."],
    ["Event", "Subobject", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement"],
    ["ReplicaSet.apps", "Desired", "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1."],
    ["CronJob.batch", "Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."],
  ])("describes %s %s by the swagger doc printers.go names", (kind, name, start) => {
    expect(columnDefinitions(groupKind(kind)).find((c) => c.name === name)?.description.startsWith(start)).toBe(true);
  });

  it("declares the integer columns printers.go declares", () => {
    expect(columnDefinitions(groupKind("ReplicaSet.apps")).map((c) => c.type).slice(1, 4)).toEqual(["integer", "integer", "integer"]);
    expect(columnDefinitions(groupKind("CronJob.batch"))[3]?.type).toBe("boolean");
    expect(columnDefinitions(groupKind("ClusterRole.rbac.authorization.k8s.io"))[1]?.type).toBe("date");
  });
});

describe("Service", () => {
  it("prints type, cluster IP, external IPs, ports with node ports, and the selector", () => {
    const spec = { type: "NodePort", clusterIP: "10.0.0.1", clusterIPs: ["10.0.0.1"], externalIPs: ["1.2.3.4"], ports: [{ port: 80, nodePort: 30080, protocol: "TCP" }, { port: 53, protocol: "UDP" }], selector: { b: "2", a: "1" } };
    expect(cells("Service", { spec })).toEqual(["x", "NodePort", "10.0.0.1", "1.2.3.4", "80:30080/TCP,53/UDP", "120m", "a=1,b=2"]);
  });
  it("prints <none> for a headless service with no ports and no selector", () => {
    expect(cells("Service", { spec: { type: "ClusterIP", clusterIP: "None" } })).toEqual(["x", "ClusterIP", "None", "<none>", "<none>", "120m", "<none>"]);
  });
  it.each([
    ["a pending load balancer", { type: "LoadBalancer" }, {}, "<pending>"],
    ["load balancer ingress, sorted and unclipped (the server prints wide)", { type: "LoadBalancer" }, { loadBalancer: { ingress: [{ hostname: "a-very-long-hostname.example.com" }, { ip: "9.9.9.9" }] } }, "9.9.9.9,a-very-long-hostname.example.com"],
    ["an external name", { type: "ExternalName", externalName: "db.example.com" }, {}, "db.example.com"],
  ])("EXTERNAL-IP for %s", (_what, spec, status, expected) => {
    expect(cells("Service", { spec, status })[3]).toBe(expected);
  });
});

describe("Endpoints", () => {
  it("lists ip:port for each port, three then a count of the rest", () => {
    const subsets = [{ addresses: [{ ip: "10.1.0.1" }, { ip: "10.1.0.2" }], ports: [{ port: 80 }, { port: 443 }] }];
    expect(cells("Endpoints", { subsets })[1]).toBe("10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...");
  });
  it("prints bare addresses for a subset without ports, and <none> without subsets", () => {
    expect(cells("Endpoints", { subsets: [{ addresses: [{ ip: "fd00::1" }] }] })[1]).toBe("fd00::1");
    expect(cells("Endpoints", { subsets: [{ addresses: [{ ip: "fd00::1" }], ports: [{ port: 8080 }] }] })[1]).toBe("[fd00::1]:8080");
    expect(cells("Endpoints", {})[1]).toBe("<none>");
  });
});

describe("Node", () => {
  it("prints status, roles, version and the wide node info", () => {
    const node = {
      metadata: meta("n1", { labels: { "node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "master" } }),
      spec: { unschedulable: true },
      status: {
        conditions: [{ type: "Ready", status: "True" }],
        addresses: [{ type: "InternalIP", address: "192.168.0.2" }],
        nodeInfo: { kubeletVersion: "v1.32.0", osImage: "Ubuntu", kernelVersion: "6.1", containerRuntimeVersion: "containerd://1.7" },
      },
    };
    expect(cells("Node", node)).toEqual(["n1", "Ready,SchedulingDisabled", "control-plane,master", "120m", "v1.32.0", "192.168.0.2", "<none>", "Ubuntu", "6.1", "containerd://1.7"]);
  });
  it("prints Unknown without a Ready condition and <unknown> node info", () => {
    expect(cells("Node", { status: { conditions: [{ type: "Ready", status: "False" }] } }).slice(1, 3)).toEqual(["NotReady", "<none>"]);
    expect(cells("Node", {})).toEqual(["x", "Unknown", "<none>", "120m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]);
  });
});

describe("Event", () => {
  it("prints a core/v1 event in column order, with the source and an integer count", () => {
    const event = {
      metadata: meta("web.1"),
      type: "Warning", reason: "BackOff", message: " Back-off restarting \n",
      involvedObject: { kind: "Pod", name: "web", fieldPath: "spec.containers{web}" },
      source: { component: "kubelet", host: "node-1" },
      firstTimestamp: ago(5 * HOUR), lastTimestamp: ago(HOUR), count: 7,
    };
    expect(cells("Event", event)).toEqual(["60m", "Warning", "BackOff", "pod/web", "spec.containers{web}", "kubelet, node-1", "Back-off restarting", "5h", 7, "web.1"]);
  });
  it("falls back to eventTime, a count of 1 and the reporter (a new-API singleton read as core/v1)", () => {
    // core/v1 names the internal ReportingController `reportingComponent` in JSON.
    const event = { eventTime: "2025-06-01T11:00:00.000000Z", source: {}, reportingComponent: "ctrl", reportingInstance: "ctrl-1", involvedObject: { kind: "Node" } };
    expect(cells("Event", event)).toEqual(["60m", "", "", "node", "", "ctrl, ctrl-1", "", "60m", 1, "x"]);
  });
  it("reads events.k8s.io/v1 field names", () => {
    const event = { regarding: { kind: "Pod", name: "p" }, note: "hi", series: { count: 3, lastObservedTime: ago(HOUR) }, eventTime: ago(2 * HOUR), reportingController: "kubelet" };
    expect(cells("Event", event)).toEqual(["60m", "", "", "pod/p", "", "kubelet", "hi", "120m", 3, "x"]);
  });
});

describe("configuration kinds", () => {
  it.each([
    ["ConfigMap counts data and binaryData keys", "ConfigMap", { data: { a: "1", b: "2" }, binaryData: { c: "AA==" } }, ["x", 3, "120m"]],
    ["ConfigMap without data", "ConfigMap", {}, ["x", 0, "120m"]],
    ["Secret", "Secret", { type: "kubernetes.io/tls", data: { "tls.crt": "", "tls.key": "" } }, ["x", "kubernetes.io/tls", 2, "120m"]],
    // The server's v1 conversion writes stringData into data: a key in both counts once.
    ["Secret with stringData", "Secret", { type: "Opaque", data: { a: "", b: "" }, stringData: { b: "", c: "" } }, ["x", "Opaque", 3, "120m"]],
    // An informer that drops the values keeps their number (cache/sensitive-resources.ts).
    ["Secret whose data the cache dropped", "Secret", { metadata: meta("x", { annotations: { "edge-informer.dev/secret-data-keys": "3" } }), type: "Opaque" }, ["x", "Opaque", 3, "120m"]],
    ["Namespace", "Namespace", { status: { phase: "Terminating" } }, ["x", "Terminating", "120m"]],
    ["ServiceAccount", "ServiceAccount", { secrets: [{ name: "t" }] }, ["x", 1, "120m"]],
    ["ClusterRole (default convertor)", "ClusterRole.rbac.authorization.k8s.io", {}, ["x", "2025-06-01T10:00:00Z"]],
  ])("%s", (_what, kind, object, expected) => {
    expect(cells(kind, object)).toEqual(expected);
  });
});

describe("workloads", () => {
  it("ReplicaSet: integer counts, an absent replicas is 1, selector text", () => {
    const spec = { selector: { matchLabels: { app: "web" } }, template };
    expect(cells("ReplicaSet.apps", { spec, status: { replicas: 1, readyReplicas: 1 } })).toEqual(["x", 1, 1, 1, "120m", "app,log", "app:1,log:2", "app=web"]);
  });
  it("StatefulSet: ready/desired", () => {
    expect(cells("StatefulSet.apps", { spec: { replicas: 3, template }, status: { readyReplicas: 2 } })).toEqual(["x", "2/3", "120m", "app,log", "app:1,log:2"]);
  });
  it("DaemonSet: counts, node selector, <none> for an empty selector", () => {
    const spec = { selector: {}, template: { spec: { ...template.spec, nodeSelector: { "kubernetes.io/os": "linux" } } } };
    const status = { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 };
    expect(cells("DaemonSet.apps", { spec, status })).toEqual(["x", 3, 3, 2, 3, 2, "kubernetes.io/os=linux", "120m", "app,log", "app:1,log:2", "<none>"]);
  });
  it.each([
    ["complete, with a duration from start to completion", { completions: 3 }, { succeeded: 3, startTime: ago(HOUR), completionTime: ago(HOUR - 90_000), conditions: [{ type: "Complete", status: "True" }] }, ["Complete", "3/3", "90s"]],
    ["running, no completions, parallelism 4", { parallelism: 4 }, { succeeded: 1, startTime: ago(HOUR) }, ["Running", "1/1 of 4", "60m"]],
    ["not started: no completions and no duration", {}, {}, ["Running", "0/1", ""]],
    ["suspended", { completions: 1 }, { conditions: [{ type: "Suspended", status: "True" }] }, ["Suspended", "0/1", ""]],
    ["failed", { completions: 1 }, { conditions: [{ type: "Failed", status: "True" }] }, ["Failed", "0/1", ""]],
  ])("Job %s", (_what, spec, status, expected) => {
    expect(cells("Job.batch", { spec: { ...spec, template, selector: { matchLabels: { job: "j" } } }, status })).toEqual(["x", ...expected, "120m", "app,log", "app:1,log:2", "job=j"]);
  });
  it("CronJob: schedule, timezone, suspend, active count, last schedule", () => {
    const spec = { schedule: "*/5 * * * *", suspend: false, jobTemplate: { spec: { template } } };
    expect(cells("CronJob.batch", { spec, status: { active: [{ name: "a" }], lastScheduleTime: ago(HOUR) } })).toEqual(["x", "*/5 * * * *", "<none>", "False", 1, "60m", "120m", "app,log", "app:1,log:2", "<none>"]);
    expect(cells("CronJob.batch", { spec: { schedule: "@daily", timeZone: "Etc/UTC" } }).slice(1, 6)).toEqual(["@daily", "Etc/UTC", "<unset>", 0, "<none>"]);
  });
});

describe("storage", () => {
  it("PVC: capacity and access modes only once bound", () => {
    const bound = { spec: { volumeName: "pv-1", storageClassName: "fast" }, status: { phase: "Bound", capacity: { storage: "10Gi" }, accessModes: ["ReadWriteMany", "ReadWriteOnce"] } };
    expect(cells("PersistentVolumeClaim", bound)).toEqual(["x", "Bound", "pv-1", "10Gi", "RWO,RWX", "fast", "<unset>", "120m", "<unset>"]);
    expect(cells("PersistentVolumeClaim", { spec: { volumeMode: "Filesystem" }, status: { phase: "Pending" } })).toEqual(["x", "Pending", "", "", "", "", "<unset>", "120m", "Filesystem"]);
  });
  it("PV: claim, Terminating while deleting, the beta class annotation", () => {
    const pv = {
      metadata: meta("pv-1", { deletionTimestamp: ago(0), annotations: { "volume.beta.kubernetes.io/storage-class": "old" } }),
      spec: { capacity: { storage: "5Gi" }, accessModes: ["ReadWriteOncePod"], persistentVolumeReclaimPolicy: "Retain", claimRef: { namespace: "ns", name: "data" }, storageClassName: "new" },
      status: { phase: "Bound" },
    };
    expect(cells("PersistentVolume", pv)).toEqual(["pv-1", "5Gi", "RWOP", "Retain", "Terminating", "ns/data", "old", "<unset>", "", "120m", "<unset>"]);
  });
});

describe("networking and autoscaling", () => {
  it("Ingress: class, three hosts then more, address, TLS ports", () => {
    const spec = { ingressClassName: "nginx", rules: [{ host: "a" }, {}, { host: "b" }, { host: "c" }, { host: "d" }], tls: [{}] };
    expect(cells("Ingress.networking.k8s.io", { spec, status: { loadBalancer: { ingress: [{ ip: "1.1.1.1" }] } } })).toEqual(["x", "nginx", "a,b,c + 2 more...", "1.1.1.1", "80, 443", "120m"]);
    expect(cells("Ingress.networking.k8s.io", { spec: {} })).toEqual(["x", "<none>", "*", "", "80", "120m"]);
  });
  it("HPA: reference, utilization targets, <unset> min pods", () => {
    const spec = {
      scaleTargetRef: { kind: "Deployment", name: "web" },
      maxReplicas: 10,
      metrics: [
        { type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } },
        { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "500Mi" } } },
        { type: "Pods", pods: { metric: { name: "qps" }, target: { type: "AverageValue", averageValue: "10" } } },
      ],
    };
    const status = { currentReplicas: 2, currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 42 } } }] };
    expect(cells("HorizontalPodAutoscaler.autoscaling", { spec, status })).toEqual(["x", "Deployment/web", "cpu: 42%/80%, memory: <unknown>/500Mi + 1 more...", "<unset>", 10, 2, "120m"]);
    expect(cells("HorizontalPodAutoscaler.autoscaling", { spec: { scaleTargetRef: { kind: "Deployment", name: "w" }, minReplicas: 1, maxReplicas: 3 } })[2]).toBe("<none>");
  });
  // A status metric without its value is a nil *Quantity, which Go prints <nil>; printers.go checks
  // the pointer only for an averaged External or Object metric (<unknown>).
  it.each([
    { name: "External by value", metric: { type: "External", external: { target: { type: "Value", value: "100" } } }, current: { type: "External", external: { current: {} } }, targets: "<nil>/100" },
    { name: "Pods", metric: { type: "Pods", pods: { target: { type: "AverageValue", averageValue: "1k" } } }, current: { type: "Pods", pods: { current: {} } }, targets: "<nil>/1k" },
    { name: "Resource by average value", metric: { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "1Gi" } } }, current: { type: "Resource", resource: { name: "memory", current: {} } }, targets: "memory: <nil>/1Gi" },
    { name: "External by average", metric: { type: "External", external: { target: { type: "AverageValue", averageValue: "5" } } }, current: { type: "External", external: { current: {} } }, targets: "<unknown>/5 (avg)" },
  ])("HPA: a $name metric reported without its value prints $targets", ({ metric, current, targets }) => {
    const spec = { scaleTargetRef: { kind: "Deployment", name: "w" }, maxReplicas: 3, metrics: [metric] };
    expect(cells("HorizontalPodAutoscaler.autoscaling", { spec, status: { currentMetrics: [current] } })[2]).toBe(targets);
  });
  it("RoleBinding: role ref and subjects by kind", () => {
    const binding = { roleRef: { kind: "ClusterRole", name: "view" }, subjects: [{ kind: "User", name: "ann" }, { kind: "ServiceAccount", namespace: "ns", name: "sa" }, { kind: "User", name: "bob" }] };
    expect(cells("RoleBinding.rbac.authorization.k8s.io", binding)).toEqual(["x", "ClusterRole/view", "120m", "ann, bob", "", "ns/sa"]);
  });
});

describe("printers by group and kind", () => {
  it.each([
    ["a custom resource named like a built-in", "Pod.example.com"],
    ["a built-in kind outside its own group", "Deployment"],
  ])("prints %s (%s) as a custom resource without printer columns: Name, Age", (_, kind) => {
    expect(columnDefinitions(groupKind(kind)).map((c) => [c.name, c.type])).toEqual([["Name", "string"], ["Age", "date"]]);
    expect(cells(kind, { spec: { containers: [{ name: "app" }] } })).toEqual(["x", "120m"]);
  });

  it("prints events.k8s.io/v1 Events with the core Event printer, as the server converts them to one internal type", () => {
    expect(columnDefinitions(groupKind("Event.events.k8s.io"))).toEqual(columnDefinitions(groupKind("Event")));
  });
});

describe("custom resources", () => {
  it("prints the CRD's additionalPrinterColumns from their JSONPaths, typed, null when absent", () => {
    const printer = printerFor(WIDGET, [
      { name: "Size", type: "integer", jsonPath: ".spec.size" },
      { name: "Ready", type: "string", jsonPath: ".status.conditions[0].status", priority: 1 },
      { name: "Missing", type: "string", jsonPath: ".status.nothing" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ]);
    expect(columnDefinitions({ kind: "Widget", printer }).map((c) => [c.name, c.type, c.priority])).toEqual([
      ["Name", "string", 0], ["Size", "integer", 0], ["Ready", "string", 1], ["Missing", "string", 0], ["Age", "date", 0],
    ]);
    const widget = { metadata: meta("w"), spec: { size: 3 }, status: { conditions: [{ status: "True" }] } } as KubeObject;
    expect(tableRow({ kind: "Widget", printer }, widget, options).cells).toEqual(["w", 3, "True", null, "120m"]);
  });

  it("describes a CRD column by its description, or by its JSONPath when it has none, as the CRD convertor does", () => {
    const printer = printerFor(WIDGET, [
      { name: "Color", type: "string", description: "The widget's color", jsonPath: ".spec.color" },
      { name: "Size", type: "integer", jsonPath: ".spec.size" },
    ]);
    expect(columnDefinitions({ kind: "Widget", printer }).slice(1).map((c) => c.description)).toEqual([
      "The widget's color",
      "Custom resource definition column (in JSONPath format): .spec.size",
    ]);
  });

  /** The cell of one CRD column of `type` whose JSONPath finds `value`. */
  const crdCell = (type: string, value: unknown) =>
    tableRow({ kind: "Widget", printer: printerFor(WIDGET, [{ name: "C", type, jsonPath: ".spec.v" }]) }, { metadata: meta("w"), spec: { v: value } } as KubeObject, options).cells[1];

  it.each([
    // A date column: "" is Go's zero time, a string that is not RFC 3339 does not parse.
    ["date", "", "<unknown>"],
    ["date", "yesterday", "<invalid>"],
    ["date", "2025-06-01", "<invalid>"],
    ["date", "2025-06-01T10:59:59.5+00:00", "60m"],
    ["date", 5, null],
    // A string column prints what jsonpath prints: other JSON as Go's json.Marshal writes it, keys sorted.
    ["string", { memory: "1Gi", cpu: { max: 2, min: 1 } }, '{"cpu":{"max":2,"min":1},"memory":"1Gi"}'],
    ["string", ["b", "a"], '["b","a"]'],
    ["string", 2.5, "2.5"],
    ["string", true, "true"],
  ])("prints a CRD %s column's %j as the CRD convertor does: %j", (type, value, expected) => {
    expect(crdCell(type, value)).toEqual(expected);
  });

  it("reads quoted keys, as CRDs name labels and annotations (`.metadata.labels['app.kubernetes.io/name']`)", () => {
    const printer = printerFor(WIDGET, [
      { name: "App", type: "string", jsonPath: ".metadata.labels['app.kubernetes.io/name']" },
      { name: "Tier", type: "string", jsonPath: '.metadata.labels["tier"]' },
    ]);
    const widget = { metadata: meta("w", { labels: { "app.kubernetes.io/name": "shop", tier: "web" } }) } as KubeObject;
    expect(tableRow({ kind: "Widget", printer }, widget, options).cells).toEqual(["w", "shop", "web"]);
  });
});

describe("the other cataloged kinds", () => {
  it.each([
    ["ReplicationController: a map selector, no template", "ReplicationController", { spec: { replicas: 2, selector: { app: "web" } }, status: { replicas: 2 } }, ["x", 2, 2, 0, "120m", "", "", "app=web"]],
    ["ResourceQuota: sorted names, limits.* in LIMIT", "ResourceQuota", { status: { hard: { "limits.cpu": "2", pods: "10", "requests.cpu": "1" }, used: { pods: "3", "requests.cpu": "500m" } } }, ["x", "pods: 3/10, requests.cpu: 500m/1", "limits.cpu: 0/2", "120m"]],
    ["PodTemplate: no Age", "PodTemplate", { template: { metadata: { labels: { app: "web" } }, ...template } }, ["x", "app,log", "app:1,log:2", "app=web"]],
    ["PodDisruptionBudget", "PodDisruptionBudget.policy", { spec: { minAvailable: "50%" }, status: { disruptionsAllowed: 1 } }, ["x", "50%", "N/A", 1, "120m"]],
    ["Lease", "Lease.coordination.k8s.io", { spec: { holderIdentity: "node-1" } }, ["x", "node-1", "120m"]],
    ["EndpointSlice", "EndpointSlice.discovery.k8s.io", { addressType: "IPv4", ports: [{ port: 80 }, { name: "dns" }, {}], endpoints: [{ addresses: ["10.0.0.1"] }] }, ["x", "IPv4", "80,dns,*", "10.0.0.1", "120m"]],
    ["EndpointSlice without ports or endpoints", "EndpointSlice.discovery.k8s.io", { addressType: "IPv6" }, ["x", "IPv6", "<unset>", "<unset>", "120m"]],
    ["NetworkPolicy selecting every pod", "NetworkPolicy.networking.k8s.io", { spec: { podSelector: {} } }, ["x", "<none>", "120m"]],
    ["IngressClass with parameters", "IngressClass.networking.k8s.io", { spec: { controller: "k8s.io/ingress-nginx", parameters: { apiGroup: "k8s.example.com", kind: "IngressParameters", name: "p" } } }, ["x", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/p", "120m"]],
    ["StorageClass marked default, with the defaults", "StorageClass.storage.k8s.io", { metadata: meta("std", { annotations: { "storageclass.kubernetes.io/is-default-class": "true" } }), provisioner: "csi.example.com" }, ["std (default)", "csi.example.com", "Delete", "Immediate", false, "120m"]],
    ["ControllerRevision of a StatefulSet", "ControllerRevision.apps", { metadata: meta("web-7d", { ownerReferences: [{ apiVersion: "apps/v1", kind: "StatefulSet", name: "web", controller: true }] }), revision: 3 }, ["web-7d", "statefulset.apps/web", 3, "120m"]],
    ["ClusterRoleBinding to groups", "ClusterRoleBinding.rbac.authorization.k8s.io", { roleRef: { kind: "ClusterRole", name: "admin" }, subjects: [{ kind: "Group", name: "ops" }] }, ["x", "ClusterRole/admin", "120m", "", "ops", ""]],
    ["LimitRange (default convertor)", "LimitRange", {}, ["x", "2025-06-01T10:00:00Z"]],
  ])("%s", (_what, kind, object, expected) => {
    expect(cells(kind, object)).toEqual(expected);
  });
});
