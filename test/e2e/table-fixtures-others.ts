/**
 * Fixtures of the Table comparisons (see table-fixtures.ts) for storage, networking and autoscaling,
 * custom resources (with every type of printer column; and one named Pod in its own group, which must
 * not print as a core Pod) and Secrets (the informer drops their data; DATA still counts it).
 */
import { object, OTHER_NAMESPACE, TEN_DAYS_AGO, type Json, type KindFixture } from "./table-fixtures.ts";

const pvc = (name: string, spec: Json, status: Json, metadata: Json = {}) =>
  object("v1", "PersistentVolumeClaim", name, { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } }, volumeMode: "Filesystem", ...spec }, status }, metadata);

const PERSISTENT_VOLUME_CLAIMS: KindFixture = {
  resource: "persistentvolumeclaims",
  objects: [
    pvc("data-db-0", { storageClassName: "standard", volumeName: "pvc-0a1b" }, { phase: "Bound", accessModes: ["ReadWriteMany", "ReadWriteOnce"], capacity: { storage: "10Gi" } }),
    pvc("pending", { storageClassName: "standard" }, { phase: "Pending" }, { annotations: { "volume.beta.kubernetes.io/storage-class": "slow" } }),
    pvc("leaving", { storageClassName: "fast", volumeName: "pvc-9z8y", volumeMode: "Block", volumeAttributesClassName: "gold" }, { phase: "Bound", accessModes: ["ReadWriteOncePod"] }, {
      deletionTimestamp: TEN_DAYS_AGO,
      finalizers: ["kubernetes.io/pvc-protection"],
    }),
  ],
  watched: pvc("new-pvc", { storageClassName: "standard" }, { phase: "Pending" }),
  header: ["NAMESPACE", "NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE", "VOLUMEMODE"],
  cells: {
    "data-db-0": { STATUS: "Bound", VOLUME: "pvc-0a1b", CAPACITY: "10Gi", "ACCESS MODES": "RWO,RWX", STORAGECLASS: "standard", VOLUMEATTRIBUTESCLASS: "<unset>", VOLUMEMODE: "Filesystem" },
    pending: { STATUS: "Pending", VOLUME: "", CAPACITY: "", "ACCESS MODES": "", STORAGECLASS: "slow" },
    leaving: { STATUS: "Terminating", CAPACITY: "0", "ACCESS MODES": "RWOP", VOLUMEATTRIBUTESCLASS: "gold", VOLUMEMODE: "Block" },
  },
};

const ingress = (name: string, spec: Json, status: Json = {}) => object("networking.k8s.io/v1", "Ingress", name, { spec, status });
const rule = (host?: string) => ({ ...(host ? { host } : {}), http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] } });

const INGRESSES: KindFixture = {
  resource: "ingresses.networking.k8s.io",
  objects: [
    ingress("web", { ingressClassName: "nginx", rules: [rule("a.example.com"), rule("b.example.com")], tls: [{ hosts: ["a.example.com"], secretName: "a-tls" }] }, { loadBalancer: { ingress: [{ ip: "203.0.113.9" }, { hostname: "edge.example.net" }] } }),
    ingress("catch-all", { rules: [rule()] }),
    ingress("many", { ingressClassName: "nginx", rules: [rule("h1.example.com"), rule(), rule("h2.example.com"), rule("h3.example.com"), rule("h4.example.com")] }),
  ],
  watched: ingress("new-ing", { ingressClassName: "nginx", rules: [rule("new.example.com")] }),
  header: ["NAMESPACE", "NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"],
  cells: {
    web: { CLASS: "nginx", HOSTS: "a.example.com,b.example.com", ADDRESS: "203.0.113.9,edge.example.net", PORTS: "80, 443" },
    "catch-all": { CLASS: "<none>", HOSTS: "*", ADDRESS: "", PORTS: "80" },
    many: { HOSTS: "h1.example.com,h2.example.com,h3.example.com + 2 more..." },
  },
};

const hpa = (name: string, spec: Json, status: Json) =>
  object("autoscaling/v2", "HorizontalPodAutoscaler", name, { spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name }, minReplicas: 1, maxReplicas: 10, ...spec }, status });
const utilization = (name: string, averageUtilization: number) => ({ type: "Resource", resource: { name, target: { type: "Utilization", averageUtilization } } });

const HORIZONTAL_POD_AUTOSCALERS: KindFixture = {
  resource: "horizontalpodautoscalers.autoscaling",
  objects: [
    hpa("web", { minReplicas: 2, metrics: [utilization("cpu", 80)] }, { currentReplicas: 3, desiredReplicas: 3, currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 45, averageValue: "450m" } } }] }),
    hpa(
      "multi",
      {
        metrics: [
          { type: "Resource", resource: { name: "memory", target: { type: "AverageValue", averageValue: "500Mi" } } },
          { type: "Pods", pods: { metric: { name: "packets" }, target: { type: "AverageValue", averageValue: "1k" } } },
          { type: "External", external: { metric: { name: "queue" }, target: { type: "Value", value: "30" } } },
          { type: "Object", object: { metric: { name: "requests" }, describedObject: { kind: "Ingress", name: "web" }, target: { type: "AverageValue", averageValue: "10" } } },
        ],
      },
      { currentReplicas: 4, currentMetrics: [{ type: "Resource", resource: { name: "memory", current: { averageValue: "300Mi" } } }, { type: "Pods", pods: { metric: { name: "packets" }, current: { averageValue: "800" } } }] },
    ),
    hpa("starting", { metrics: [utilization("cpu", 50), { type: "ContainerResource", containerResource: { name: "memory", container: "app", target: { type: "Utilization" } } }] }, {}),
    // A status that names a metric without its value: a nil quantity, which Go prints as <nil>.
    hpa(
      "stale",
      { maxReplicas: 3, metrics: [{ type: "External", external: { metric: { name: "lag" }, target: { type: "Value", value: "100" } } }] },
      { currentReplicas: 1, currentMetrics: [{ type: "External", external: { metric: { name: "lag" }, current: {} } }] },
    ),
  ],
  watched: hpa("new-hpa", { metrics: [utilization("cpu", 70)] }, {}),
  header: ["NAMESPACE", "NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"],
  cells: {
    web: { REFERENCE: "Deployment/web", TARGETS: "cpu: 45%/80%", MINPODS: "2", MAXPODS: "10", REPLICAS: "3" },
    multi: { TARGETS: "memory: 300Mi/500Mi, 800/1k + 2 more...", MINPODS: "1", REPLICAS: "4" },
    starting: { TARGETS: "cpu: <unknown>/50%, memory: <unknown>/<auto>", REPLICAS: "0" },
    stale: { TARGETS: "<nil>/100", MAXPODS: "3" },
  },
};

const gadget = (name: string, spec: Json, status: Json | undefined, labels: Record<string, string> = {}, namespace?: string) =>
  object("example.com/v1", "Gadget", name, { spec, ...(status ? { status } : {}) }, { labels }, namespace);

const GADGETS: KindFixture = {
  resource: "gadgets.example.com",
  apiVersion: "example.com/v1",
  objects: [
    gadget(
      "g1",
      { color: "red", size: 3, ratio: 0.75, enabled: true, limits: { memory: "1Gi", cpu: "500m" } },
      { conditions: [{ type: "Ready", status: "True" }], lastSeen: TEN_DAYS_AGO },
      { "app.kubernetes.io/name": "gizmo" },
    ),
    // Values of the wrong JSON type for their columns, and dates that are not times.
    gadget("g2", { color: "blue", size: 2.9, ratio: 2, enabled: "yes" }, { lastSeen: "yesterday" }),
    gadget("g3", { size: "3" }, { conditions: [], lastSeen: "" }, {}, OTHER_NAMESPACE),
  ],
  watched: gadget("new-gadget", { color: "green", size: 1 }, undefined),
  header: ["NAMESPACE", "NAME", "COLOR", "SIZE", "RATIO", "ENABLED", "READY", "SEEN", "AGE", "APP", "LIMITS", "REPLICAS"],
  cells: {
    g1: { COLOR: "red", SIZE: "3", RATIO: "0.75", ENABLED: "true", READY: "True", SEEN: "10d", APP: "gizmo", LIMITS: '{"cpu":"500m","memory":"1Gi"}', REPLICAS: "3" },
    // A null cell (no match, or a value of another type) prints as nothing.
    g2: { SIZE: "2", RATIO: "2", ENABLED: "", READY: "", SEEN: "<invalid>", APP: "", LIMITS: "", REPLICAS: "2.9" },
    g3: { COLOR: "", SIZE: "", SEEN: "<unknown>", REPLICAS: "3" },
  },
};

const IMPOSTER_PODS: KindFixture = {
  resource: "pods.example.com",
  apiVersion: "example.com/v1",
  objects: [object("example.com/v1", "Pod", "imposter", { spec: { containers: [{ name: "app", image: "app" }] }, status: { phase: "Running" } })],
  watched: object("example.com/v1", "Pod", "new-imposter", { spec: {} }),
  // A custom resource without printer columns: Name and Age only.
  header: ["NAMESPACE", "NAME", "AGE"],
  cells: { imposter: { NAME: "imposter" } },
};

const secret = (name: string, type: string, data: Record<string, string> | undefined) => object("v1", "Secret", name, { type, ...(data ? { data } : {}) });

const SECRETS: KindFixture = {
  resource: "secrets",
  objects: [
    secret("db-credentials", "Opaque", { username: "YWRtaW4=", password: "c2VjcmV0", host: "ZGI=" }),
    secret("web-tls", "kubernetes.io/tls", { "tls.crt": "Y3J0", "tls.key": "a2V5" }),
    secret("empty", "Opaque", undefined),
  ],
  watched: secret("new-secret", "Opaque", { token: "dA==" }),
  // The Worker's informer drops data (no keepSecretData): DATA comes from the count it keeps.
  header: ["NAMESPACE", "NAME", "TYPE", "DATA", "AGE"],
  cells: { "db-credentials": { TYPE: "Opaque", DATA: "3" }, "web-tls": { TYPE: "kubernetes.io/tls", DATA: "2" }, empty: { DATA: "0" } },
};

export const OTHER_FIXTURES: readonly KindFixture[] = [PERSISTENT_VOLUME_CLAIMS, INGRESSES, HORIZONTAL_POD_AUTOSCALERS, GADGETS, IMPOSTER_PODS, SECRETS];
