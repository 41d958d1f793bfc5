/**
 * `/k8s/…/api/v1/namespaces` when namespaces are not mirrored (issue 30 item 2, review G7): the
 * list (JSON and kubectl's Table) and the watch are synthesized from the namespaces the served
 * namespaced resources hold objects in (k8s/namespace-list.ts), and discovery lists namespaces.
 * The watch's diffs over time are unit-tested with a fake clock at the bottom.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { NAMESPACE_WATCH_POLL_SECONDS, namespaceWatchFrames, type NamespaceRead } from "../../src/k8s/namespace-list.ts";
import { configMap, namespace, pod } from "../fake-apiserver/builders.ts";
import { addCluster, createSynced, unique } from "../helpers/clusters.ts";
import { newCluster } from "../helpers/informer.ts";

const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

let cluster: string;
let fake: Awaited<ReturnType<typeof newCluster>>;
beforeAll(async () => {
  fake = await newCluster({});
  await fake.apply([
    { op: "create", resource: "pods", object: pod({ name: "a", namespace: "shop" }) },
    { op: "create", resource: "pods", object: pod({ name: "b", namespace: "web" }) },
    { op: "create", resource: "configmaps", object: configMap({ name: "c", namespace: "config-only" }) },
  ]);
  cluster = unique("ns-list");
  await addCluster(cluster, fake);
  await createSynced(`/clusters/${cluster}/informers/pods`);
  await createSynced(`/clusters/${cluster}/informers/configmaps`, { resource: "configmaps" });
}, 120_000);

const k8s = (path: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster}${path}`, { headers }));

describe("the namespaces list, synthesized", () => {
  it("lists every namespace a served namespaced resource holds objects in, as Active stand-ins, at a resourceVersion", async () => {
    const response = await k8s("/api/v1/namespaces?limit=500");
    expect(response.status).toBe(200);
    const list = (await response.json()) as any;
    expect(list).toMatchObject({ kind: "NamespaceList", apiVersion: "v1" });
    expect(list.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
    expect(list.items.map((ns: any) => ns.metadata.name)).toEqual(["config-only", "shop", "web"]);
    expect(list.items[0]).toMatchObject({ metadata: { annotations: { "edge-informer.dev/stand-in": "true" } }, status: { phase: "Active" } });
  });

  it("prints a Table for kubectl (NAME, STATUS, AGE)", async () => {
    const table = (await (await k8s("/api/v1/namespaces?limit=500", { accept: TABLE })).json()) as any;
    expect(table.kind).toBe("Table");
    expect(table.columnDefinitions.map((c: any) => c.name)).toEqual(["Name", "Status", "Age"]);
    expect(table.rows.map((r: any) => r.cells.slice(0, 2))).toEqual([
      ["config-only", "Active"],
      ["shop", "Active"],
      ["web", "Active"],
    ]);
  });

  it("selects by field (`kubectl get ns x -w` watches `metadata.name=x`) and by the namespace-name label; a bad field is 400", async () => {
    const names = async (query: string) => ((await (await k8s(`/api/v1/namespaces?${query}`)).json()) as any).items.map((ns: any) => ns.metadata.name);
    expect(await names("fieldSelector=metadata.name%3Dshop")).toEqual(["shop"]);
    expect(await names("labelSelector=kubernetes.io%2Fmetadata.name%20in%20(web,config-only)")).toEqual(["config-only", "web"]);
    const bad = await k8s("/api/v1/namespaces?fieldSelector=spec.nodeName%3Dx");
    expect([bad.status, ((await bad.json()) as any).message]).toEqual([400, "field label not supported: spec.nodeName"]);
  });

  it("is in discovery, with list and watch", async () => {
    const resources = (await (await k8s("/api/v1")).json()) as any;
    const namespaces = resources.resources.find((r: any) => r.name === "namespaces");
    expect(namespaces).toMatchObject({ kind: "Namespace", namespaced: false });
    expect(namespaces.verbs).toEqual(expect.arrayContaining(["get", "list", "watch"]));
  });

  it("watches: from no resourceVersion, an ADDED for each namespace, then the initial-events-end bookmark", async () => {
    const response = await k8s("/api/v1/namespaces?watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan");
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (text.split("\n").length < 5) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    const events = text.trim().split("\n").map((line) => JSON.parse(line));
    expect(events.slice(0, 3).map((e) => [e.type, e.object.metadata.name])).toEqual([
      ["ADDED", "config-only"],
      ["ADDED", "shop"],
      ["ADDED", "web"],
    ]);
    expect(events[3]).toMatchObject({ type: "BOOKMARK", object: { kind: "Namespace", metadata: { annotations: { "k8s.io/initial-events-end": "true" } } } });
  });

  it("watches over WebSocket too, one event a message (Headlamp's namespace picker)", async () => {
    const response = await k8s("/api/v1/namespaces?watch=1", {
      upgrade: "websocket",
      connection: "Upgrade",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      "sec-websocket-protocol": "base64.binary.k8s.io",
    });
    expect(response.status).toBe(101);
    const socket = response.webSocket!;
    const messages: string[] = [];
    const three = new Promise<void>((resolve) =>
      socket.addEventListener("message", (event) => {
        messages.push(String(event.data));
        if (messages.length === 3) resolve();
      }),
    );
    socket.accept();
    await three;
    socket.close(1000);
    expect(messages.map((m) => [JSON.parse(m).type, JSON.parse(m).object.metadata.name])).toEqual([
      ["ADDED", "config-only"],
      ["ADDED", "shop"],
      ["ADDED", "web"],
    ]);
  });
});

describe("a mirrored namespaces informer", () => {
  it("wins: the list is its real objects, and discovery lists namespaces once", async () => {
    await fake.create("namespaces", namespace({ name: "real-only" }));
    await createSynced(`/clusters/${cluster}/informers/namespaces`, { resource: "namespaces" });
    const list = (await (await k8s("/api/v1/namespaces")).json()) as any;
    expect(list.items.map((ns: any) => ns.metadata.name)).toContain("real-only");
    expect(list.items.every((ns: any) => ns.metadata.annotations?.["edge-informer.dev/stand-in"] === undefined && ns.metadata.uid)).toBe(true);
    const resources = (await (await k8s("/api/v1")).json()) as any;
    expect(resources.resources.filter((r: any) => r.name === "namespaces")).toHaveLength(1);
  });
});

describe("the namespaces watch over time", () => {
  /** A fake clock: `sleep` moves it at once, and a read returns the next state of `states` (the last one for ever). */
  function clocked(states: string[][]) {
    let now = 1_000_000;
    let reads = 0;
    const read = async (): Promise<NamespaceRead> => {
      const names = states[Math.min(reads, states.length - 1)]!;
      reads++;
      return { names, resourceVersion: String(100 + reads) };
    };
    return { read, sleep: async (ms: number) => void (now += ms), now: () => now };
  }
  const json = { kind: "json" as const };

  it("sends ADDED when a namespace first holds an object and DELETED when its last object goes, from the namespaces at its start", async () => {
    const deps = clocked([["a", "b"], ["a", "b", "c"], ["a", "c"], ["a", "c"]]);
    const frames: any[] = [];
    for await (const frame of namespaceWatchFrames({ format: json, includeObject: "Metadata", initialEvents: false, bookmarks: false, timeoutSeconds: 4 * NAMESPACE_WATCH_POLL_SECONDS, maxReads: 100 }, deps)) {
      frames.push(JSON.parse(frame));
    }
    expect(frames.map((f) => [f.type, f.object.metadata.name, f.object.metadata.resourceVersion])).toEqual([
      ["ADDED", "c", "102"],
      ["DELETED", "b", "103"],
    ]);
  });

  it("ends cleanly at its timeout, and after its reads are spent (a request's calls are bounded)", async () => {
    const count = async (maxReads: number) => {
      let n = 0;
      for await (const _ of namespaceWatchFrames({ format: json, includeObject: "Metadata", initialEvents: false, bookmarks: true, timeoutSeconds: 1800, maxReads }, clocked([["a"]]))) n++;
      return n;
    };
    // 60 s between bookmarks, a read every 10 s: 7 reads see one bookmark (at the sixth poll), 1 read none.
    expect(await count(7)).toBe(1);
    expect(await count(1)).toBe(0);
  });
});
