/**
 * The official Python client (`kubernetes` 22.6.0, Debian's python3-kubernetes, run by /usr/bin/python3)
 * reads /k8s as it reads a real API server (issue 8): its typed models deserialize the Worker's lists,
 * gets and errors, and the names, namespaces and resourceVersions equal what the same calls answer
 * against the fake API server; `watch.Watch().stream` from a list's resourceVersion receives every
 * change of a churn, in order. The Python side is test/e2e/python/client.py, one process per call
 * (with a timeout). When the module is missing (.ci/run installs it where it can), the suite is
 * skipped with the reason in its name, never passed.
 *
 * The client writes booleans in query strings as Python prints them: its watch asks for `watch=True`
 * (and `allowWatchBookmarks=True`). The API server reads any value but "0" and, in any case,
 * "false" as true (apimachinery's Convert_Slice_string_To_bool), so /k8s must too, or it answers the
 * list and the client's stream ends at once with no events.
 *
 * E2E_PYTHON overrides the interpreter (default /usr/bin/python3, not the `python3` on PATH).
 * The watch churns its own namespace, PYTHON_WATCH_NAMESPACE, created here (not in fixtures.ts); its
 * pods carry the `churn` label as the other churn namespaces' do.
 */
import { spawn } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { namespace } from "../fake-apiserver/builders.ts";
import type { ObjectOp } from "../fake-apiserver/types.ts";
import { churnNamespace, type WatchedChange } from "./churn.ts";
import { e2e, fakeCluster } from "./context.ts";
import { churnSeedPods } from "./fixtures.ts";
import { versions, withoutManagedFields, type KubeList, type KubeObject } from "./objects.ts";
import { CLIENT_SCRIPT, PYTHON, PYTHON_ENV, PYTHON_MISSING, pythonSuite, runPython } from "./python.ts";
import { waitFor } from "./wait.ts";

const PYTHON_WATCH_NAMESPACE = "python-watch";
const WAIT_MS = 20_000;
const WATCH_TIMEOUT_SECONDS = 45;

type Label = "edge" | "fake";

function targets(...labels: Label[]): Record<string, { host: string; token?: string }> {
  const { k8sUrl, clusterUrl, readToken } = e2e();
  const all = { edge: { host: k8sUrl, token: readToken }, fake: { host: clusterUrl } };
  return Object.fromEntries(labels.map((label) => [label, all[label]]));
}

function python<T>(command: string, labels: Label[], args: unknown = {}): Promise<T> {
  return runPython<T>(command, targets(...labels), args);
}

interface Identity {
  namespace?: string;
  name?: string;
  resourceVersion?: string;
}

interface DescribedList {
  type: string;
  itemTypes: string[];
  resourceVersion: string;
  items: Identity[];
  objects: KubeObject[];
}

interface ListsAnswer {
  podsAllNamespaces: DescribedList;
  podsBySelector: Record<string, DescribedList>;
  reads: Record<string, { type: string; identity: Identity; containerStatusTypes: string[]; startedAtTypes: string[]; object: KubeObject }>;
  deploymentsAllNamespaces: DescribedList;
}

const SELECTORS: [string, string][] = [
  ["shop", "app=web"],
  ["ops", "tier in (a,b)"],
  ["batch", "app=worker,tier!=b"],
];
const READS: [string, string][] = [
  ["shop", "web-1"],
  ["shop", "setup-1"],
  ["ops", "evicted-1"],
];

/** A watch by client.py: every line it has printed so far, parsed, and a way to stop it. */
interface PythonWatch {
  lines(): Record<string, unknown>[];
  stderr(): string;
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  stop(): Promise<void>;
}

function pythonWatch(label: Label, ns: string): PythonWatch {
  const args = { namespace: ns, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
  const child = spawn(PYTHON, ["-u", CLIENT_SCRIPT, "watch", JSON.stringify(targets(label)), JSON.stringify(args)], { env: PYTHON_ENV, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  const closed = new Promise<void>((resolve) =>
    child.once("close", (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  const timer = setTimeout(() => child.kill("SIGKILL"), (WATCH_TIMEOUT_SECONDS + 15) * 1000);
  return {
    lines: () => stdout.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Record<string, unknown>),
    stderr: () => stderr,
    exit: () => exited,
    async stop() {
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await closed;
    },
  };
}

function describeWatch(label: string, w: PythonWatch): string {
  return `${label}: exit ${JSON.stringify(w.exit())}\nstdout ${JSON.stringify(w.lines().slice(-20))}\nstderr ${w.stderr().slice(-3000)}`;
}

async function k8sList(path: string): Promise<KubeList> {
  const { k8sUrl, readToken } = e2e();
  const response = await fetch(`${k8sUrl}${path}`, { headers: { authorization: `Bearer ${readToken}` }, signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`GET /k8s${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as KubeList;
}

describe.skipIf(PYTHON_MISSING !== undefined)(pythonSuite("the Python kubernetes client on /k8s"), () => {
  let answers: Record<Label, ListsAnswer>;

  beforeAll(async () => {
    answers = await python<Record<Label, ListsAnswer>>("lists", ["edge", "fake"], { selectors: SELECTORS, reads: READS });
  });

  const lists: [string, (a: ListsAnswer) => DescribedList, string][] = [
    ["CoreV1Api.list_pod_for_all_namespaces()", (a) => a.podsAllNamespaces, "V1Pod"],
    ...SELECTORS.map(([ns, selector]): [string, (a: ListsAnswer) => DescribedList, string] => [
      `CoreV1Api.list_namespaced_pod(${JSON.stringify(ns)}, label_selector=${JSON.stringify(selector)})`,
      (a) => a.podsBySelector[`${ns} ${selector}`]!,
      "V1Pod",
    ]),
    ["AppsV1Api.list_deployment_for_all_namespaces()", (a) => a.deploymentsAllNamespaces, "V1Deployment"],
  ];

  it.each(lists)("%s deserializes and equals the API server's answer", (_title, pick, itemType) => {
    const edge = pick(answers.edge);
    const fake = pick(answers.fake);
    expect(fake.items.length, "the reference answer is not empty").toBeGreaterThan(0);
    expect(edge.type).toBe(`${itemType}List`);
    expect(edge.itemTypes).toEqual([itemType]);
    expect(edge.resourceVersion, "the list's resourceVersion").toMatch(/^\d+$/);
    expect(edge.items).toEqual(fake.items);
    // Through the typed models and back: the same objects, apart from managedFields (dropped by our cache).
    expect(edge.objects).toEqual(fake.objects.map(withoutManagedFields));
  });

  it.each(READS)("CoreV1Api.read_namespaced_pod(%j, %j) deserializes and equals the API server's answer", (ns, name) => {
    const edge = answers.edge.reads[`${ns}/${name}`]!;
    const fake = answers.fake.reads[`${ns}/${name}`]!;
    expect(edge.type).toBe("V1Pod");
    expect(edge.identity).toEqual({ namespace: ns, name, resourceVersion: fake.identity.resourceVersion });
    expect(edge.containerStatusTypes).toEqual(fake.containerStatusTypes);
    expect(edge.startedAtTypes).toEqual(fake.startedAtTypes);
    expect(edge.object).toEqual(withoutManagedFields(fake.object));
  });

  it("get_api_resources (which asks /api/v1/ with a trailing slash) lists the served resources of each group version", async () => {
    const answers = await runPython<Record<Label, { core: string[]; apps: string[] }>>("resources", targets("edge", "fake"));
    // The Worker serves what it mirrors (global-setup.ts INFORMERS), each as the API server lists it.
    expect(answers.edge).toEqual({ core: ["configmaps", "namespaces", "nodes", "pods"], apps: ["deployments"] });
    for (const resource of answers.edge.core) expect(answers.fake.core).toContain(resource);
    expect(answers.fake.apps).toContain("deployments");
  });

  it("read_namespaced_pod of a missing pod raises ApiException 404 NotFound, as from the API server", async () => {
    const answer = await python<Record<Label, { raised: string | null; status: number; reason: string; body: Record<string, unknown> }>>(
      "not-found",
      ["edge", "fake"],
      { namespace: "shop", name: "no-such-pod" },
    );
    for (const label of ["fake", "edge"] as const) {
      expect(answer[label], label).toMatchObject({
        raised: "ApiException",
        status: 404,
        body: { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message: 'pods "no-such-pod" not found' },
      });
    }
    expect(answer.edge.body.details).toEqual(answer.fake.body.details);
  });

  it("watch.Watch().stream(list_namespaced_pod, resource_version=<list rv>) receives every change of a churn in order", async () => {
    const cluster = fakeCluster();
    // Its own namespace, seeded with a few pods, and mirrored by the Worker before the watches list.
    await cluster.apply([
      { op: "upsert", resource: "namespaces", object: namespace({ name: PYTHON_WATCH_NAMESPACE }) },
      ...churnSeedPods(PYTHON_WATCH_NAMESPACE).map((object): ObjectOp => ({ op: "upsert", resource: "pods", object })),
    ]);
    const expected = versions((await cluster.state("pods", PYTHON_WATCH_NAMESPACE)).items as KubeObject[]);
    await waitFor(async () => JSON.stringify(versions((await k8sList(`/api/v1/namespaces/${PYTHON_WATCH_NAMESPACE}/pods`)).items)) === JSON.stringify(expected), {
      timeoutMs: WAIT_MS,
      what: `/k8s to hold the ${PYTHON_WATCH_NAMESPACE} pods`,
    });

    const watches = { edge: pythonWatch("edge", PYTHON_WATCH_NAMESPACE), fake: pythonWatch("fake", PYTHON_WATCH_NAMESPACE) };
    let changes: WatchedChange[] = [];
    try {
      // Each has listed (and prints the list's resourceVersion) before the churn starts; the watch
      // from that resourceVersion then owes every change after it, whenever it connects.
      for (const [label, w] of Object.entries(watches)) {
        await waitFor(() => w.lines().length > 0 || w.exit() !== undefined, { timeoutMs: WAIT_MS, what: `the list (${describeWatch(label, w)})` });
        expect(w.lines()[0], describeWatch(label, w)).toHaveProperty("listResourceVersion");
      }
      changes = await churnNamespace(cluster, { namespace: PYTHON_WATCH_NAMESPACE, seed: 31, operations: 40 });
      const last = changes.at(-1)!.resourceVersion;
      for (const [label, w] of Object.entries(watches)) {
        await waitFor(() => w.lines().some((l) => l.resourceVersion === last) || w.exit() !== undefined, {
          timeoutMs: WAIT_MS,
          what: `the last change, rv ${last} (${describeWatch(label, w)})`,
        });
      }
    } finally {
      await Promise.all([watches.edge.stop(), watches.fake.stop()]);
    }
    const events = (w: PythonWatch) => w.lines().slice(1);
    const asChanges = (w: PythonWatch) => events(w).map(({ type, name, resourceVersion, phase }) => ({ type, name, resourceVersion, phase }));
    expect(changes).toHaveLength(40);
    expect(asChanges(watches.fake), `reference: the fake API server\n${describeWatch("fake", watches.fake)}`).toEqual(changes);
    expect(asChanges(watches.edge), `/k8s (a stream that ends at once, without events, is a list answered to watch=True)\n${describeWatch("edge", watches.edge)}`).toEqual(changes);
    expect(new Set(events(watches.edge).map((e) => e.objectType)), "events deserialize to V1Pod").toEqual(new Set(["V1Pod"]));
  });
});
