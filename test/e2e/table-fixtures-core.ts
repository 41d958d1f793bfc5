/** core/v1 fixtures of the Table comparisons (see table-fixtures.ts): pods, services, endpoints, events. */
import { at, DAY_MS, object, TABLES_NAMESPACE, TEN_DAYS_AGO, TEN_DAYS_AGO_MS, type Json, type KindFixture } from "./table-fixtures.ts";

const running = (name: string, extra: Json = {}) => ({ name, ready: true, started: true, restartCount: 0, image: "app", imageID: "", state: { running: { startedAt: TEN_DAYS_AGO } }, ...extra });

const pod = (name: string, spec: Json, status: Json, metadata: Json = {}) => object("v1", "Pod", name, { spec: { containers: [{ name: "app", image: "app" }], ...spec }, status }, metadata);

const PODS: KindFixture = {
  resource: "pods",
  objects: [
    pod(
      "run-1",
      { nodeName: "node-a", readinessGates: [{ conditionType: "example.com/lb" }, { conditionType: "example.com/dns" }] },
      {
        phase: "Running",
        podIP: "10.244.1.7",
        podIPs: [{ ip: "10.244.1.7" }, { ip: "fd00::7" }],
        conditions: [{ type: "Ready", status: "True" }, { type: "example.com/lb", status: "True" }, { type: "example.com/dns", status: "False" }],
        containerStatuses: [running("app")],
      },
    ),
    pod("crash-1", { nodeName: "node-b" }, {
      phase: "Running",
      podIPs: [{ ip: "10.244.2.3" }],
      containerStatuses: [running("app", { ready: false, restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } }, lastState: { terminated: { exitCode: 1, reason: "Error", finishedAt: TEN_DAYS_AGO } } })],
    }),
    pod("gated-1", {}, { phase: "Pending", nominatedNodeName: "node-c", conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }] }),
    pod(
      "sidecar-1",
      { nodeName: "node-a", initContainers: [{ name: "proxy", image: "proxy", restartPolicy: "Always" }] },
      { phase: "Running", podIP: "10.244.1.9", initContainerStatuses: [running("proxy")], containerStatuses: [running("app")] },
    ),
    pod("init-1", { initContainers: [{ name: "migrate", image: "m" }] }, { phase: "Pending", initContainerStatuses: [{ name: "migrate", ready: false, restartCount: 0, state: { terminated: { exitCode: 1 } } }] }),
    pod("leaving-1", { nodeName: "node-b" }, { phase: "Running", containerStatuses: [running("app")] }, { deletionTimestamp: TEN_DAYS_AGO, deletionGracePeriodSeconds: 30 }),
  ],
  watched: pod("new-1", {}, { phase: "Pending" }),
  header: ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES"],
  cells: {
    "run-1": { READY: "1/1", STATUS: "Running", RESTARTS: "0", IP: "10.244.1.7", NODE: "node-a", "NOMINATED NODE": "<none>", "READINESS GATES": "1/2" },
    "crash-1": { READY: "0/1", STATUS: "CrashLoopBackOff", RESTARTS: "3 (10d ago)", IP: "10.244.2.3" },
    "gated-1": { READY: "0/1", STATUS: "SchedulingGated", IP: "<none>", NODE: "<none>", "NOMINATED NODE": "node-c", "READINESS GATES": "<none>" },
    "sidecar-1": { READY: "2/2", STATUS: "Running" },
    "init-1": { READY: "0/1", STATUS: "Init:ExitCode:1" },
    "leaving-1": { STATUS: "Terminating" },
  },
};

const service = (name: string, spec: Json, status: Json = {}) => object("v1", "Service", name, { spec, status });
const tcp = (port: number, nodePort?: number) => ({ port, protocol: "TCP", targetPort: port, ...(nodePort ? { nodePort } : {}) });

const SERVICES: KindFixture = {
  resource: "services",
  objects: [
    service("web", { type: "ClusterIP", clusterIP: "10.96.0.10", clusterIPs: ["10.96.0.10"], ports: [tcp(80), tcp(443)], selector: { tier: "a", app: "web" } }),
    service("node-port", {
      type: "NodePort",
      clusterIP: "10.96.0.11",
      clusterIPs: ["10.96.0.11"],
      externalIPs: ["192.0.2.5"],
      ports: [tcp(80, 30080), { port: 53, protocol: "UDP", nodePort: 30053 }],
      selector: { app: "dns" },
    }),
    service("lb-pending", { type: "LoadBalancer", clusterIP: "10.96.0.12", clusterIPs: ["10.96.0.12"], ports: [tcp(443, 30443)] }),
    service(
      "lb",
      { type: "LoadBalancer", clusterIP: "10.96.0.13", clusterIPs: ["10.96.0.13", "fd00::13"], externalIPs: ["198.51.100.1"], ports: [tcp(80, 31080)] },
      { loadBalancer: { ingress: [{ hostname: "lb.example.com" }, { ip: "203.0.113.7" }, { ip: "203.0.113.7" }] } },
    ),
    service("headless", { type: "ClusterIP", clusterIP: "None", clusterIPs: ["None"] }),
    service("db", { type: "ExternalName", externalName: "db.example.com" }),
  ],
  watched: service("new-svc", { type: "ClusterIP", clusterIP: "10.96.0.99", clusterIPs: ["10.96.0.99"], ports: [tcp(8080)] }),
  header: ["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"],
  cells: {
    web: { TYPE: "ClusterIP", "CLUSTER-IP": "10.96.0.10", "EXTERNAL-IP": "<none>", "PORT(S)": "80/TCP,443/TCP", SELECTOR: "app=web,tier=a" },
    "node-port": { "EXTERNAL-IP": "192.0.2.5", "PORT(S)": "80:30080/TCP,53:30053/UDP" },
    "lb-pending": { "EXTERNAL-IP": "<pending>", "PORT(S)": "443:30443/TCP", SELECTOR: "<none>" },
    lb: { "CLUSTER-IP": "10.96.0.13", "EXTERNAL-IP": "203.0.113.7,lb.example.com,198.51.100.1" },
    headless: { "CLUSTER-IP": "None", "PORT(S)": "<none>" },
    db: { TYPE: "ExternalName", "CLUSTER-IP": "<none>", "EXTERNAL-IP": "db.example.com" },
  },
};

const endpoints = (name: string, subsets?: Json[]) => object("v1", "Endpoints", name, subsets ? { subsets } : {});

const ENDPOINTS: KindFixture = {
  resource: "endpoints",
  objects: [
    endpoints("web", [{ addresses: [{ ip: "10.244.1.7" }, { ip: "10.244.1.9" }], ports: [{ port: 8080, protocol: "TCP" }, { port: 8443, protocol: "TCP" }] }]),
    endpoints("headless", [{ addresses: [{ ip: "10.244.2.3" }] }]),
    endpoints("empty"),
    endpoints("v6", [{ addresses: [{ ip: "fd00::7" }], ports: [{ port: 80, protocol: "TCP" }] }]),
  ],
  watched: endpoints("new-ep", [{ addresses: [{ ip: "10.244.3.1" }], ports: [{ port: 9090, protocol: "TCP" }] }]),
  header: ["NAMESPACE", "NAME", "ENDPOINTS", "AGE"],
  cells: {
    web: { ENDPOINTS: "10.244.1.7:8080,10.244.1.9:8080,10.244.1.7:8443 + 1 more..." },
    headless: { ENDPOINTS: "10.244.2.3" },
    empty: { ENDPOINTS: "<none>" },
    v6: { ENDPOINTS: "[fd00::7]:80" },
  },
};

const event = (name: string, body: Json) => object("v1", "Event", name, body);

const EVENTS: KindFixture = {
  resource: "events",
  objects: [
    // Recorded through events.k8s.io/v1 and read as core/v1: no source, the reporter in reportingComponent.
    event("run-1.scheduled", {
      involvedObject: { kind: "Pod", namespace: TABLES_NAMESPACE, name: "run-1", apiVersion: "v1" },
      reason: "Scheduled",
      message: "Successfully assigned tables/run-1 to node-a",
      source: {},
      eventTime: `${TEN_DAYS_AGO.slice(0, -1)}.123456Z`,
      type: "Normal",
      action: "Binding",
      reportingComponent: "default-scheduler",
      reportingInstance: "default-scheduler-node-a",
    }),
    event("crash-1.backoff", {
      involvedObject: { kind: "Pod", namespace: TABLES_NAMESPACE, name: "crash-1", fieldPath: "spec.containers{app}" },
      reason: "BackOff",
      message: "  Back-off restarting failed container app\n",
      source: { component: "kubelet", host: "node-b" },
      firstTimestamp: at(TEN_DAYS_AGO_MS - DAY_MS),
      lastTimestamp: TEN_DAYS_AGO,
      count: 12,
      type: "Warning",
    }),
    event("web.series", {
      involvedObject: { kind: "Deployment", namespace: TABLES_NAMESPACE, name: "web" },
      reason: "ScalingReplicaSet",
      message: "Scaled up replica set web-abc to 3",
      source: { component: "deployment-controller" },
      eventTime: at(TEN_DAYS_AGO_MS - 2 * DAY_MS),
      series: { count: 5, lastObservedTime: `${TEN_DAYS_AGO.slice(0, -1)}.000001Z` },
      type: "Normal",
    }),
    event("node.rebooted", { involvedObject: { kind: "Node" }, reason: "Rebooted", message: "node rebooted", firstTimestamp: TEN_DAYS_AGO, count: 1, type: "Warning" }),
  ],
  watched: event("new.event", { involvedObject: { kind: "Pod", name: "new-1" }, reason: "Created", message: "created", firstTimestamp: TEN_DAYS_AGO, count: 1, type: "Normal" }),
  header: ["NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"],
  cells: {
    "run-1.scheduled": { "LAST SEEN": "10d", TYPE: "Normal", REASON: "Scheduled", OBJECT: "pod/run-1", SOURCE: "default-scheduler, default-scheduler-node-a", "FIRST SEEN": "10d", COUNT: "1" },
    "crash-1.backoff": { "LAST SEEN": "10d", OBJECT: "pod/crash-1", SUBOBJECT: "spec.containers{app}", SOURCE: "kubelet, node-b", MESSAGE: "Back-off restarting failed container app", "FIRST SEEN": "11d", COUNT: "12" },
    "web.series": { "LAST SEEN": "10d", OBJECT: "deployment/web", SOURCE: "deployment-controller", "FIRST SEEN": "12d", COUNT: "5" },
    "node.rebooted": { OBJECT: "node", SOURCE: "" },
  },
};

export const CORE_FIXTURES: readonly KindFixture[] = [PODS, SERVICES, ENDPOINTS, EVENTS];
