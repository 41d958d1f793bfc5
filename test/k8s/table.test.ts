// The server-side Table printer. Expected values are worked out by hand from kube-apiserver 1.32's
// rules (printers.go printPod/printDeployment, apimachinery duration.HumanDuration, response.go asTable),
// not taken from this code's output.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.ts";
import { humanDuration, timestampAge } from "../../src/k8s/duration.ts";
import {
  columnDefinitions,
  parseIncludeObject,
  table,
  tableRow,
  type TableOptions,
} from "../../src/k8s/table.ts";
import { labelSelectorString } from "../../src/k8s/printers/label-selector.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const NOW = Date.parse("2025-06-01T12:00:00Z");
const ago = (ms: number): string => new Date(NOW - ms).toISOString().replace(".000Z", "Z");
const options: TableOptions = { now: NOW, includeObject: "Metadata", apiVersion: "meta.k8s.io/v1" };
const POD = { group: "", kind: "Pod" };
const DEPLOYMENT = { group: "apps", kind: "Deployment" };
const WIDGET = { group: "example.com", kind: "Widget" };

const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

describe("humanDuration", () => {
  it.each([
    ["2 s in the future is invalid", -2 * SECOND, "<invalid>"],
    ["1.999 s in the future truncates to -1 s: now", -1999, "0s"],
    ["1 s in the future is now", -SECOND, "0s"],
    ["1 ms in the future is now", -1, "0s"],
    ["zero", 0, "0s"],
    ["under a second", 999, "0s"],
    ["one second", SECOND, "1s"],
    ["just under 2 minutes, still seconds", 2 * MINUTE - 1, "119s"],
    ["2 minutes drops the zero seconds", 2 * MINUTE, "2m"],
    ["2 minutes 1 second", 2 * MINUTE + SECOND, "2m1s"],
    ["just under 10 minutes", 10 * MINUTE - 1, "9m59s"],
    ["10 minutes switches to minutes only", 10 * MINUTE + 59 * SECOND, "10m"],
    ["just under 3 hours, still minutes", 3 * HOUR - 1, "179m"],
    ["3 hours drops the zero minutes", 3 * HOUR, "3h"],
    ["3 hours 30 minutes", 3 * HOUR + 30 * MINUTE + 59 * SECOND, "3h30m"],
    ["just under 8 hours", 8 * HOUR - 1, "7h59m"],
    ["8 hours switches to hours only", 8 * HOUR + 59 * MINUTE, "8h"],
    ["just under 48 hours", 48 * HOUR - 1, "47h"],
    ["48 hours is 2 days", 48 * HOUR, "2d"],
    ["2 days 1 hour", 49 * HOUR, "2d1h"],
    ["just under 8 days", 8 * DAY - 1, "7d23h"],
    ["8 days switches to days only", 8 * DAY + 23 * HOUR, "8d"],
    ["just under 2 years, still days", 730 * DAY - 1, "729d"],
    ["2 years (of 365 days) drops the zero days", 730 * DAY, "2y"],
    ["2 years 1 day", 731 * DAY, "2y1d"],
    ["just under 8 years", 2920 * DAY - 1, "7y364d"],
    ["8 years switches to years only", 2920 * DAY, "8y"],
    ["3000 days", 3000 * DAY, "8y"],
  ])("%s", (_name, ms, expected) => {
    expect(humanDuration(ms)).toBe(expected);
  });

  it("gives <unknown> for an absent or unreadable timestamp", () => {
    expect(timestampAge(undefined, NOW)).toBe("<unknown>");
    expect(timestampAge(null, NOW)).toBe("<unknown>");
    expect(timestampAge("not a time", NOW)).toBe("<unknown>");
    expect(timestampAge(ago(5 * DAY), NOW)).toBe("5d");
  });
});

// ----------------------------------------------------------------------------------------------
// Pods
// ----------------------------------------------------------------------------------------------

type Json = Record<string, unknown>;

function pod(fields: { spec?: Json; status?: Json; metadata?: Json } = {}): KubeObject {
  return {
    metadata: { name: "web-1", namespace: "ns1", uid: "u1", resourceVersion: "42", creationTimestamp: ago(5 * DAY), ...fields.metadata },
    spec: { containers: [{ name: "app", image: "nginx" }], ...fields.spec },
    status: { phase: "Running", ...fields.status },
  };
}

const running = { running: { startedAt: ago(5 * DAY) } };
const ready = (name: string, restartCount = 0): Json => ({ name, ready: true, started: true, restartCount, state: running });
const waiting = (name: string, reason: string, extra: Json = {}): Json => ({
  name,
  ready: false,
  restartCount: 0,
  state: { waiting: { reason } },
  ...extra,
});
const terminated = (name: string, t: Json, extra: Json = {}): Json => ({
  name,
  ready: false,
  restartCount: 0,
  state: { terminated: t },
  ...extra,
});
const lastFinished = (msAgo: number): Json => ({ lastState: { terminated: { exitCode: 1, finishedAt: ago(msAgo) } } });

/** READY, STATUS, RESTARTS. */
function summary(p: KubeObject): [unknown, unknown, unknown] {
  const cells = tableRow(POD, p, options).cells;
  return [cells[1], cells[2], cells[3]];
}

describe("Pod rows", () => {
  it("prints a running pod: name, ready, status, restarts, age, then the wide cells", () => {
    const p = pod({
      spec: { containers: [{ name: "app" }, { name: "log" }], nodeName: "node-1" },
      status: {
        podIP: "10.0.0.5",
        podIPs: [{ ip: "10.0.0.5" }, { ip: "fd00::5" }],
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [ready("app"), ready("log")],
      },
    });
    expect(tableRow(POD, p, options).cells).toEqual(["web-1", "2/2", "Running", "0", "5d", "10.0.0.5", "node-1", "<none>", "<none>"]);
  });

  it("shows a waiting reason: ContainerCreating", () => {
    expect(summary(pod({ status: { phase: "Pending", containerStatuses: [waiting("app", "ContainerCreating")] } }))).toEqual([
      "0/1",
      "ContainerCreating",
      "0",
    ]);
  });

  it("shows CrashLoopBackOff with restarts and how long ago the last one finished", () => {
    const status = { containerStatuses: [waiting("app", "CrashLoopBackOff", { restartCount: 3, ...lastFinished(5 * MINUTE + 2 * SECOND) })] };
    expect(summary(pod({ status }))).toEqual(["0/1", "CrashLoopBackOff", "3 (5m2s ago)"]);
  });

  it("prints bare restarts when no container has a last termination time", () => {
    expect(summary(pod({ status: { containerStatuses: [ready("app", 2)] } }))).toEqual(["1/1", "Running", "2"]);
  });

  it("takes the latest last termination across containers and sums their restarts", () => {
    const status = {
      containerStatuses: [
        { ...ready("app", 1), ...lastFinished(2 * HOUR) },
        { ...ready("log", 4), ...lastFinished(90 * SECOND) },
      ],
    };
    expect(summary(pod({ spec: { containers: [{ name: "app" }, { name: "log" }] }, status }))).toEqual(["2/2", "Running", "5 (90s ago)"]);
  });

  it("lets the first container's reason win (containers are walked last to first)", () => {
    const status = { phase: "Pending", containerStatuses: [waiting("app", "ImagePullBackOff"), waiting("log", "CrashLoopBackOff")] };
    expect(summary(pod({ spec: { containers: [{ name: "app" }, { name: "log" }] }, status }))).toEqual([
      "0/2",
      "ImagePullBackOff",
      "0",
    ]);
  });

  it("prints ExitCode:n or Signal:n for a terminated container without a reason", () => {
    expect(summary(pod({ status: { containerStatuses: [terminated("app", { exitCode: 2 })] } }))[1]).toBe("ExitCode:2");
    expect(summary(pod({ status: { containerStatuses: [terminated("app", { exitCode: 143, signal: 15 })] } }))[1]).toBe("Signal:15");
    expect(summary(pod({ status: { containerStatuses: [terminated("app", { exitCode: 1, reason: "Error" })] } }))[1]).toBe("Error");
  });

  describe("init containers", () => {
    const twoInits = { initContainers: [{ name: "migrate" }, { name: "seed" }] };

    it("shows Init:0/2 while the first of two runs", () => {
      const status = {
        phase: "Pending",
        conditions: [{ type: "Initialized", status: "False" }],
        initContainerStatuses: [
          { name: "migrate", ready: false, restartCount: 0, state: running },
          waiting("seed", "PodInitializing"),
        ],
        containerStatuses: [waiting("app", "PodInitializing")],
      };
      expect(summary(pod({ spec: twoInits, status }))).toEqual(["0/1", "Init:0/2", "0"]);
    });

    it("shows Init:1/2 once the first exited 0", () => {
      const status = {
        phase: "Pending",
        initContainerStatuses: [
          terminated("migrate", { exitCode: 0, reason: "Completed" }),
          { name: "seed", ready: false, restartCount: 0, state: running },
        ],
      };
      expect(summary(pod({ spec: twoInits, status }))[1]).toBe("Init:1/2");
    });

    it("shows Init:CrashLoopBackOff with the init container's restarts", () => {
      const status = {
        phase: "Pending",
        initContainerStatuses: [
          waiting("migrate", "CrashLoopBackOff", { restartCount: 4, ...lastFinished(30 * SECOND) }),
          waiting("seed", "PodInitializing"),
        ],
        containerStatuses: [{ ...waiting("app", "PodInitializing"), restartCount: 9 }],
      };
      expect(summary(pod({ spec: twoInits, status }))).toEqual(["0/1", "Init:CrashLoopBackOff", "4 (30s ago)"]);
    });

    it("shows Init:ExitCode:1, Init:Signal:9 and Init:<reason> for a failed init container", () => {
      const failed = (t: Json): unknown =>
        summary(
          pod({
            spec: twoInits,
            status: { phase: "Pending", initContainerStatuses: [terminated("migrate", t), waiting("seed", "PodInitializing")] },
          }),
        )[1];
      expect(failed({ exitCode: 1 })).toBe("Init:ExitCode:1");
      expect(failed({ exitCode: 137, signal: 9 })).toBe("Init:Signal:9");
      expect(failed({ exitCode: 1, reason: "Error" })).toBe("Init:Error");
    });

    it("counts a started sidecar in READY and its restarts with the containers'", () => {
      const spec = { initContainers: [{ name: "setup" }, { name: "proxy", restartPolicy: "Always" }] };
      const status = {
        initContainerStatuses: [
          terminated("setup", { exitCode: 0, reason: "Completed" }, { restartCount: 5, ...lastFinished(1 * MINUTE) }),
          { ...ready("proxy", 1), ...lastFinished(10 * MINUTE) },
        ],
        containerStatuses: [{ ...ready("app", 2), ...lastFinished(HOUR) }],
      };
      // setup's restarts do not count once initialized; proxy's (1) and app's (2) do; proxy finished last.
      expect(summary(pod({ spec, status }))).toEqual(["2/2", "Running", "3 (10m ago)"]);
    });

    it("counts a started but unready sidecar in the total only", () => {
      const spec = { initContainers: [{ name: "proxy", restartPolicy: "Always" }] };
      const status = { initContainerStatuses: [{ ...ready("proxy"), ready: false }], containerStatuses: [ready("app")] };
      expect(summary(pod({ spec, status }))).toEqual(["1/2", "Running", "0"]);
    });

    it("shows Init:i/N while a sidecar has not started", () => {
      const spec = { initContainers: [{ name: "setup" }, { name: "proxy", restartPolicy: "Always" }] };
      const status = {
        phase: "Pending",
        initContainerStatuses: [
          terminated("setup", { exitCode: 0, reason: "Completed" }),
          { name: "proxy", ready: false, started: false, restartCount: 0, state: running },
        ],
        containerStatuses: [waiting("app", "PodInitializing")],
      };
      expect(summary(pod({ spec, status }))).toEqual(["0/2", "Init:1/2", "0"]);
    });
  });

  it("turns Completed back into Running when another container still runs and the pod is Ready", () => {
    const spec = { containers: [{ name: "job" }, { name: "web" }] };
    const statuses = [terminated("job", { exitCode: 0, reason: "Completed" }), ready("web")];
    const readyPod = pod({ spec, status: { conditions: [{ type: "Ready", status: "True" }], containerStatuses: statuses } });
    const notReadyPod = pod({ spec, status: { conditions: [{ type: "Ready", status: "False" }], containerStatuses: statuses } });
    expect(summary(readyPod)).toEqual(["1/2", "Running", "0"]);
    expect(summary(notReadyPod)).toEqual(["1/2", "NotReady", "0"]);
  });

  it("keeps Completed for a succeeded pod and adds the Completed row condition", () => {
    const p = pod({ status: { phase: "Succeeded", containerStatuses: [terminated("app", { exitCode: 0, reason: "Completed" })] } });
    const row = tableRow(POD, p, options);
    expect(row.cells.slice(1, 4)).toEqual(["0/1", "Completed", "0"]);
    expect(row.conditions).toEqual([{ type: "Completed", status: "True", reason: "Succeeded", message: "The pod has completed successfully." }]);
  });

  it("shows Evicted from status.reason and marks the failed row", () => {
    const p = pod({ status: { phase: "Failed", reason: "Evicted", message: "The node was low on resource: memory." } });
    const row = tableRow(POD, p, options);
    expect(row.cells.slice(1, 4)).toEqual(["0/1", "Evicted", "0"]);
    expect(row.conditions).toEqual([{ type: "Completed", status: "True", reason: "Failed", message: "The pod failed." }]);
  });

  it("gives a running pod no conditions key at all", () => {
    expect("conditions" in tableRow(POD, pod(), options)).toBe(false);
  });

  it("shows Terminating once deletionTimestamp is set, unless the pod already finished", () => {
    const deleting = { deletionTimestamp: ago(10 * SECOND) };
    expect(summary(pod({ metadata: deleting, status: { containerStatuses: [ready("app")] } }))[1]).toBe("Terminating");
    const completed = [terminated("app", { exitCode: 0, reason: "Completed" })];
    const done = pod({ metadata: deleting, status: { phase: "Succeeded", containerStatuses: completed } });
    expect(summary(done)[1]).toBe("Completed");
  });

  it("shows Unknown for a deleted pod on a lost node", () => {
    const p = pod({ metadata: { deletionTimestamp: ago(MINUTE) }, status: { reason: "NodeLost", containerStatuses: [ready("app")] } });
    expect(summary(p)).toEqual(["1/1", "Unknown", "0"]);
  });

  it("shows NodeLost (not Unknown) while the pod is not being deleted", () => {
    expect(summary(pod({ status: { reason: "NodeLost", containerStatuses: [ready("app")] } }))[1]).toBe("NodeLost");
  });

  it("shows SchedulingGated from the PodScheduled condition", () => {
    const status = { phase: "Pending", conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }] };
    expect(summary(pod({ status }))).toEqual(["0/1", "SchedulingGated", "0"]);
  });

  it("prints the wide cells: IP from podIPs, node, nominated node, readiness gates", () => {
    const p = pod({
      spec: { nodeName: "node-1", readinessGates: [{ conditionType: "example.com/a" }, { conditionType: "example.com/b" }] },
      status: {
        podIPs: [{ ip: "10.0.0.9" }],
        nominatedNodeName: "node-2",
        conditions: [
          { type: "example.com/a", status: "True" },
          { type: "example.com/b", status: "False" },
        ],
      },
    });
    expect(tableRow(POD, p, options).cells.slice(5)).toEqual(["10.0.0.9", "node-1", "node-2", "1/2"]);
  });

  it("prints <none> for empty wide cells and <unknown> for a missing creationTimestamp", () => {
    const p: KubeObject = { metadata: { name: "bare" }, spec: { containers: [] }, status: {} };
    expect(tableRow(POD, p, options).cells).toEqual(["bare", "0/0", "", "0", "<unknown>", "<none>", "<none>", "<none>", "<none>"]);
  });
});

// ----------------------------------------------------------------------------------------------
// Deployments
// ----------------------------------------------------------------------------------------------

function deployment(spec: Json, status: Json = {}): KubeObject {
  return { metadata: { name: "web", namespace: "ns1", creationTimestamp: ago(10 * MINUTE) }, spec, status };
}
const template = { spec: { containers: [{ name: "nginx", image: "nginx:1.27" }, { name: "envoy", image: "envoy:1.30" }] } };

describe("Deployment rows", () => {
  it("prints ready/desired, integer up-to-date and available, age, containers, images, selector", () => {
    const d = deployment(
      { replicas: 3, selector: { matchLabels: { tier: "frontend", app: "web" } }, template },
      { replicas: 3, readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    );
    const cells = tableRow(DEPLOYMENT, d, options).cells;
    expect(cells).toEqual(["web", "2/3", 3, 2, "10m", "nginx,envoy", "nginx:1.27,envoy:1.30", "app=web,tier=frontend"]);
    expect(JSON.stringify(cells.slice(2, 4))).toBe("[3,2]");
  });

  it("reads absent status counts as 0 and an absent spec.replicas as the default 1", () => {
    expect(tableRow(DEPLOYMENT, deployment({ replicas: 3, template }), options).cells.slice(1, 4)).toEqual(["0/3", 0, 0]);
    expect(tableRow(DEPLOYMENT, deployment({ template }, { readyReplicas: 1 }), options).cells[1]).toBe("1/1");
  });

  it("prints empty container cells for a template without containers", () => {
    expect(tableRow(DEPLOYMENT, deployment({ replicas: 0 }), options).cells.slice(5)).toEqual(["", "", ""]);
  });
});

describe("labelSelectorString", () => {
  it.each([
    ["absent", undefined, ""],
    ["empty", {}, ""],
    ["matchLabels sorted by key", { matchLabels: { tier: "frontend", app: "web" } }, "app=web,tier=frontend"],
    [
      "every operator, sorted by key, values sorted",
      {
        matchLabels: { app: "web" },
        matchExpressions: [
          { key: "zone", operator: "Exists" },
          { key: "env", operator: "In", values: ["prod", "dev"] },
          { key: "canary", operator: "DoesNotExist" },
          { key: "tier", operator: "NotIn", values: ["db", "cache"] },
        ],
      },
      "app=web,!canary,env in (dev,prod),tier notin (cache,db),zone",
    ],
    ["a single In value", { matchExpressions: [{ key: "env", operator: "In", values: ["prod"] }] }, "env in (prod)"],
    ["a prefixed key", { matchLabels: { "app.kubernetes.io/name": "web" } }, "app.kubernetes.io/name=web"],
    ["an empty label value", { matchLabels: { app: "" } }, "app="],
    ["an unknown operator", { matchExpressions: [{ key: "env", operator: "Gt", values: ["1"] }] }, "<invalid>"],
    ["In without values", { matchExpressions: [{ key: "env", operator: "In", values: [] }] }, "<invalid>"],
    ["Exists with values", { matchExpressions: [{ key: "env", operator: "Exists", values: ["x"] }] }, "<invalid>"],
    ["a key with a space", { matchLabels: { "bad key": "x" } }, "<invalid>"],
    ["a value too long", { matchLabels: { app: "x".repeat(64) } }, "<invalid>"],
    ["an upper-case prefix", { matchLabels: { "Example.com/app": "x" } }, "<invalid>"],
  ])("%s", (_name, selector, expected) => {
    expect(labelSelectorString(selector)).toBe(expected);
  });
});

// ----------------------------------------------------------------------------------------------
// Columns, objects, tables
// ----------------------------------------------------------------------------------------------

describe("columnDefinitions", () => {
  it("gives pods 5 default and 4 wide columns, every field present", () => {
    const columns = columnDefinitions(POD);
    expect(columns.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ["Name", "string", "name", 0],
      ["Ready", "string", "", 0],
      ["Status", "string", "", 0],
      ["Restarts", "string", "", 0],
      ["Age", "string", "", 0],
      ["IP", "string", "", 1],
      ["Node", "string", "", 1],
      ["Nominated Node", "string", "", 1],
      ["Readiness Gates", "string", "", 1],
    ]);
    expect(columns[0]?.description).toBe(NAME_DESCRIPTION);
    expect(columns[1]?.description).toBe("The aggregate readiness state of this pod for accepting traffic.");
    expect(columns[4]?.description).toBe(AGE_DESCRIPTION);
    for (const c of columns) expect(Object.keys(c)).toEqual(["name", "type", "format", "description", "priority"]);
  });

  it("gives deployments their 5 + 3 columns", () => {
    expect(columnDefinitions(DEPLOYMENT).map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ["Name", "string", "name", 0],
      ["Ready", "string", "", 0],
      ["Up-to-date", "string", "", 0],
      ["Available", "string", "", 0],
      ["Age", "string", "", 0],
      ["Containers", "string", "", 1],
      ["Images", "string", "", 1],
      ["Selector", "string", "", 1],
    ]);
    expect(columnDefinitions(DEPLOYMENT)[1]?.description).toBe("Number of the pod with ready state");
  });

  it("gives a kind that is not built in Name and Age, as a custom resource without printer columns", () => {
    expect(columnDefinitions(WIDGET)).toEqual([
      { name: "Name", type: "string", format: "name", description: NAME_DESCRIPTION, priority: 0 },
      { name: "Age", type: "date", format: "", description: AGE_DESCRIPTION, priority: 0 },
    ]);
    const cm: KubeObject = { metadata: { name: "settings", creationTimestamp: ago(3 * HOUR + 5 * MINUTE) }, data: { a: "1" } };
    expect(tableRow(WIDGET, cm, options).cells).toEqual(["settings", "3h5m"]);
  });

  it("returns a fresh copy each call", () => {
    const columns = columnDefinitions(POD);
    columns[0]!.name = "changed";
    expect(columnDefinitions(POD)[0]?.name).toBe("Name");
  });
});

describe("parseIncludeObject", () => {
  it.each([
    [undefined, "Metadata"],
    ["", "Metadata"],
    ["Metadata", "Metadata"],
    ["Object", "Object"],
    ["None", "None"],
  ] as const)("reads %j as %s", (value, expected) => {
    expect(parseIncludeObject(value)).toBe(expected);
  });

  it.each(["bogus", "metadata", "Self"])("refuses %j with the server's message", (value) => {
    expect(() => parseIncludeObject(value)).toThrow(ValidationError);
    expect(() => parseIncludeObject(value)).toThrow(`unrecognized includeObject value: "${value}"`);
  });
});

describe("row objects", () => {
  const item = pod({ metadata: { labels: { app: "web" }, managedFields: [{ manager: "kubectl" }] } });

  it("embeds a PartialObjectMetadata with the full ObjectMeta by default", () => {
    expect(tableRow(POD, item, options).object).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: item.metadata,
    });
  });

  it("gives the PartialObjectMetadata the negotiated Table version", () => {
    const row = tableRow(POD, item, { ...options, apiVersion: "meta.k8s.io/v1beta1" });
    expect(row.object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1beta1" });
  });

  it("embeds the whole object with kind and apiVersion first for includeObject=Object", () => {
    const row = tableRow(POD, item, { ...options, includeObject: "Object", objectApiVersion: "v1" });
    expect(row.object).toEqual({ kind: "Pod", apiVersion: "v1", ...item });
    expect(Object.keys(row.object ?? {})).toEqual(["kind", "apiVersion", "metadata", "spec", "status"]);
  });

  it("keeps an object's own kind and apiVersion", () => {
    const own: KubeObject = { apiVersion: "apps/v1", kind: "Deployment", ...deployment({ replicas: 1 }) };
    expect(tableRow(DEPLOYMENT, own, { ...options, includeObject: "Object", objectApiVersion: "v9" }).object).toEqual(own);
  });

  it("writes object: null for includeObject=None, as the server's RawExtension does", () => {
    const row = tableRow(POD, item, { ...options, includeObject: "None" });
    expect(row.object).toBeNull();
    expect(JSON.stringify(row)).toBe('{"cells":["web-1","0/1","Running","0","5d","<none>","<none>","<none>","<none>"],"object":null}');
  });

  it("writes a row's keys in the server's order: cells, conditions, object", () => {
    const done = pod({ status: { phase: "Succeeded" } });
    expect(Object.keys(tableRow(POD, done, options))).toEqual(["cells", "conditions", "object"]);
  });
});

describe("table", () => {
  it("serializes a list Table in the server's shape", () => {
    const p = pod({ status: { phase: "Running", podIP: "10.0.0.5", containerStatuses: [ready("app")] } });
    const t = table(POD, [p], { resourceVersion: "27", continue: "abc", remainingItemCount: 12 }, { ...options, includeObject: "None" });
    const json = JSON.parse(JSON.stringify(t)) as Json;
    expect(Object.keys(json)).toEqual(["kind", "apiVersion", "metadata", "columnDefinitions", "rows"]);
    expect(json.kind).toBe("Table");
    expect(json.apiVersion).toBe("meta.k8s.io/v1");
    expect(json.metadata).toEqual({ resourceVersion: "27", continue: "abc", remainingItemCount: 12 });
    expect(json.rows).toEqual([{ cells: ["web-1", "1/1", "Running", "0", "5d", "10.0.0.5", "<none>", "<none>", "<none>"], object: null }]);
    expect((json.columnDefinitions as unknown[]).length).toBe(9);
  });

  it("drops empty list metadata but keeps a remainingItemCount of 0", () => {
    expect(table(POD, [], { resourceVersion: "", continue: "" }, options).metadata).toEqual({});
    expect(table(POD, [], { remainingItemCount: 0 }, options).metadata).toEqual({ remainingItemCount: 0 });
  });

  it("always has a rows array, empty for an empty list", () => {
    expect(JSON.stringify(table(DEPLOYMENT, [], {}, options).rows)).toBe("[]");
  });

  it("has columnDefinitions: null for watch events after the first", () => {
    const first = table(POD, [pod()], { resourceVersion: "42" }, options);
    const later = table(POD, [pod()], { resourceVersion: "43" }, options, false);
    expect(first.columnDefinitions).toHaveLength(9);
    expect(later.columnDefinitions).toBeNull();
    expect(JSON.stringify(later)).toContain('"columnDefinitions":null');
    expect(later.rows).toHaveLength(1);
    expect(later.metadata).toEqual({ resourceVersion: "43" });
  });

  it("keeps the objects' order, one row each", () => {
    const names = ["c", "a", "b"].map((name) => pod({ metadata: { name } }));
    expect(table(POD, names, {}, options).rows.map((r) => r.cells[0])).toEqual(["c", "a", "b"]);
  });
});
