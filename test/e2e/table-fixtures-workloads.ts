/** apps/v1 and batch/v1 fixtures of the Table comparisons (see table-fixtures.ts). */
import { at, object, OTHER_NAMESPACE, template, TEN_DAYS_AGO, TEN_DAYS_AGO_MS, type Json, type KindFixture } from "./table-fixtures.ts";

const workload = (kind: string, name: string, spec: Json, status: Json, namespace?: string) => object("apps/v1", kind, name, { spec, status }, {}, namespace);

const DEPLOYMENTS: KindFixture = {
  resource: "deployments.apps",
  objects: [
    workload(
      "Deployment",
      "web",
      {
        replicas: 3,
        selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "track", operator: "NotIn", values: ["canary", "beta"] }] },
        template: template({ app: "web" }),
      },
      { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 },
    ),
    workload("Deployment", "idle", { replicas: 0, selector: { matchLabels: { app: "idle" } }, template: template({ app: "idle" }) }, {}, OTHER_NAMESPACE),
  ],
  watched: workload("Deployment", "new-deploy", { replicas: 1, selector: { matchLabels: { app: "n" } }, template: template({ app: "n" }) }, {}),
  header: ["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
  cells: {
    web: { READY: "2/3", "UP-TO-DATE": "3", AVAILABLE: "2", CONTAINERS: "app,log", IMAGES: "registry.example.com/app:1.4,fluent-bit:3.0", SELECTOR: "app=web,track notin (beta,canary)" },
    idle: { READY: "0/0", "UP-TO-DATE": "0", AVAILABLE: "0", SELECTOR: "app=idle" },
  },
};

const REPLICA_SETS: KindFixture = {
  resource: "replicasets.apps",
  objects: [
    workload(
      "ReplicaSet",
      "web-abc",
      { replicas: 3, selector: { matchLabels: { app: "web", "pod-template-hash": "abc" } }, template: template({ app: "web", "pod-template-hash": "abc" }) },
      { replicas: 3, readyReplicas: 2, availableReplicas: 2 },
    ),
    workload("ReplicaSet", "api-old", { replicas: 0, selector: { matchExpressions: [{ key: "tier", operator: "In", values: ["b", "a"] }] }, template: template({ tier: "a" }) }, { replicas: 0 }, OTHER_NAMESPACE),
  ],
  watched: workload("ReplicaSet", "new-rs", { replicas: 2, selector: { matchLabels: { app: "n" } }, template: template({ app: "n" }) }, { replicas: 1 }),
  header: ["NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
  cells: {
    "web-abc": { DESIRED: "3", CURRENT: "3", READY: "2", SELECTOR: "app=web,pod-template-hash=abc" },
    "api-old": { DESIRED: "0", CURRENT: "0", READY: "0", SELECTOR: "tier in (a,b)" },
  },
};

const STATEFUL_SETS: KindFixture = {
  resource: "statefulsets.apps",
  objects: [
    workload("StatefulSet", "db", { replicas: 3, serviceName: "db", selector: { matchLabels: { app: "db" } }, template: template({ app: "db" }) }, { replicas: 3, readyReplicas: 1 }),
    workload("StatefulSet", "cache", { replicas: 1, serviceName: "cache", selector: { matchLabels: { app: "cache" } }, template: template({ app: "cache" }) }, { replicas: 0 }),
  ],
  watched: workload("StatefulSet", "new-sts", { replicas: 2, selector: { matchLabels: { app: "n" } }, template: template({ app: "n" }) }, {}),
  header: ["NAMESPACE", "NAME", "READY", "AGE", "CONTAINERS", "IMAGES"],
  cells: { db: { READY: "1/3", CONTAINERS: "app,log" }, cache: { READY: "0/1" } },
};

const DAEMON_SETS: KindFixture = {
  resource: "daemonsets.apps",
  objects: [
    workload(
      "DaemonSet",
      "agent",
      { selector: { matchLabels: { app: "agent" } }, template: template({ app: "agent" }, { nodeSelector: { "kubernetes.io/os": "linux", "node-role.kubernetes.io/worker": "" } }) },
      { desiredNumberScheduled: 3, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2 },
    ),
    workload("DaemonSet", "gpu", { selector: { matchLabels: { app: "gpu" } }, template: template({ app: "gpu" }) }, {}),
  ],
  watched: workload("DaemonSet", "new-ds", { selector: { matchLabels: { app: "n" } }, template: template({ app: "n" }) }, {}),
  header: ["NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
  cells: {
    agent: { DESIRED: "3", CURRENT: "3", READY: "2", "UP-TO-DATE": "3", AVAILABLE: "2", "NODE SELECTOR": "kubernetes.io/os=linux,node-role.kubernetes.io/worker=", SELECTOR: "app=agent" },
    gpu: { DESIRED: "0", "NODE SELECTOR": "<none>" },
  },
};

const condition = (type: string, status = "True") => ({ type, status, lastTransitionTime: TEN_DAYS_AGO });
const job = (name: string, spec: Json, status: Json, metadata: Json = {}, namespace?: string) =>
  object("batch/v1", "Job", name, { spec: { backoffLimit: 6, template: template({ job: name }, { restartPolicy: "Never" }), ...spec }, status }, metadata, namespace);
const uidSelector = (uid: string) => ({ matchLabels: { "batch.kubernetes.io/controller-uid": uid } });

const JOBS: KindFixture = {
  resource: "jobs.batch",
  objects: [
    job(
      "done",
      { completions: 1, parallelism: 1, selector: uidSelector("1111") },
      { conditions: [condition("SuccessCriteriaMet"), condition("Complete")], startTime: TEN_DAYS_AGO, completionTime: at(TEN_DAYS_AGO_MS + 95_000), succeeded: 1 },
    ),
    job("failed", { completions: 3, parallelism: 1 }, { conditions: [condition("FailureTarget"), condition("Failed")], startTime: TEN_DAYS_AGO, succeeded: 1, failed: 7 }),
    job("queue", { parallelism: 4 }, { startTime: TEN_DAYS_AGO, active: 4 }),
    job("held", { completions: 2, parallelism: 1, suspend: true }, { conditions: [condition("Suspended")] }),
    job("stopping", { completions: 1, parallelism: 1 }, { conditions: [condition("Complete", "False")], startTime: TEN_DAYS_AGO }, { deletionTimestamp: TEN_DAYS_AGO, finalizers: ["batch.kubernetes.io/job-tracking"] }),
    job("retrying", { completions: 1, parallelism: 1 }, { conditions: [condition("FailureTarget")], startTime: TEN_DAYS_AGO }, {}, OTHER_NAMESPACE),
  ],
  watched: job("new-job", { completions: 1, parallelism: 1 }, {}),
  header: ["NAMESPACE", "NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
  cells: {
    done: { STATUS: "Complete", COMPLETIONS: "1/1", DURATION: "95s", SELECTOR: "batch.kubernetes.io/controller-uid=1111" },
    failed: { STATUS: "Failed", COMPLETIONS: "1/3", DURATION: "10d", SELECTOR: "<none>" },
    queue: { STATUS: "Running", COMPLETIONS: "0/1 of 4" },
    held: { STATUS: "Suspended", COMPLETIONS: "0/2", DURATION: "" },
    stopping: { STATUS: "Terminating" },
    retrying: { STATUS: "FailureTarget" },
  },
};

const cronJob = (name: string, spec: Json, status: Json) =>
  object("batch/v1", "CronJob", name, { spec: { concurrencyPolicy: "Allow", jobTemplate: { spec: { template: template({ cron: name }, { restartPolicy: "OnFailure" }) } }, ...spec }, status });

const CRON_JOBS: KindFixture = {
  resource: "cronjobs.batch",
  objects: [
    cronJob("nightly", { schedule: "0 3 * * *", timeZone: "Etc/UTC", suspend: false }, { active: [{ kind: "Job", name: "nightly-1", namespace: "tables" }], lastScheduleTime: TEN_DAYS_AGO }),
    cronJob("paused", { schedule: "*/5 * * * *", suspend: true }, {}),
  ],
  watched: cronJob("new-cron", { schedule: "@hourly", suspend: false }, {}),
  header: ["NAMESPACE", "NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
  cells: {
    nightly: { SCHEDULE: "0 3 * * *", TIMEZONE: "Etc/UTC", SUSPEND: "False", ACTIVE: "1", "LAST SCHEDULE": "10d", CONTAINERS: "app,log", SELECTOR: "<none>" },
    paused: { SCHEDULE: "*/5 * * * *", TIMEZONE: "<none>", SUSPEND: "True", ACTIVE: "0", "LAST SCHEDULE": "<none>" },
  },
};

export const WORKLOAD_FIXTURES: readonly KindFixture[] = [DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, DAEMON_SETS, JOBS, CRON_JOBS];
