/**
 * `GET /search/{resource}` through the Worker's front door (issue 12, docs/api.md "Search across
 * clusters"), over fake API servers as clusters: the union of the clusters' objects, with
 * selectors; pages of 3 while the servers churn (per cluster no duplicate, no gap, one snapshot);
 * `partial` for a cluster whose informer is slow or gone; bad input; the cluster annotation.
 */
import { listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CLUSTER_SHARE, SEARCH_DEADLINE } from "../../src/http/search.ts";
import { informerObjectName } from "../../src/clusters/cluster.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { pod } from "../fake-apiserver/builders.ts";
import { ADMIN, addCluster, call, createSynced, send, unique } from "../helpers/clusters.ts";
import { newCluster, waitFor } from "../helpers/informer.ts";

const ANNOTATION = "edge-informer/cluster";

/** A GET, or a call with the admin token and a JSON body. */
const request = (method: string, path: string, body?: unknown) => (method === "GET" ? call(path, { headers: ADMIN }) : send(method, path, body));

interface SearchAnswer {
  items: KubeObject[];
  resourceVersions: Record<string, string>;
  continue?: string;
  partial?: string[];
}

async function search(query: string): Promise<SearchAnswer> {
  const response = await request("GET", `/search/pods?${query}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as SearchAnswer;
}

/** A fresh fake cluster registered under a fresh name, seeded, with a synced `pods` informer. */
async function mirroredCluster(seed: number): Promise<{ name: string; server: FakeCluster }> {
  const server = await newCluster();
  await server.seed({ namespaces: 2, podsPerNamespace: 6, deployments: 2, podBytes: 600, seed });
  const name = unique(`s${seed}`);
  await addCluster(name, server);
  await createSynced(`/clusters/${name}/informers/pods`);
  return { name, server };
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
const clusterOf = (o: KubeObject) => o.metadata.annotations?.[ANNOTATION];
/** `cluster key@resourceVersion` of each item: what a search answered. */
const entries = (items: KubeObject[]) => items.map((o) => `${clusterOf(o)} ${keyOf(o)}@${o.metadata.resourceVersion}`);

/** What the servers hold, as `entries` writes it, filtered by `keep`. */
async function truth(clusters: { name: string; server: FakeCluster }[], keep: (o: KubeObject) => boolean = () => true): Promise<string[]> {
  const all: string[] = [];
  for (const { name, server } of clusters) {
    for (const o of (await server.state("pods")).items as KubeObject[]) if (keep(o)) all.push(`${name} ${keyOf(o)}@${o.metadata.resourceVersion}`);
  }
  return all.sort();
}

/** Waits until each informer's cache equals its server (a search right after a change may precede its watch event). */
async function searchEquals(query: string, clusters: { name: string; server: FakeCluster }[], keep?: (o: KubeObject) => boolean): Promise<SearchAnswer> {
  let answer: SearchAnswer | undefined;
  let expected: string[] = [];
  try {
    return await waitFor("the search to equal the servers", async () => {
      answer = await search(query);
      expected = await truth(clusters, keep);
      return [...entries(answer.items)].sort().join("\n") === expected.join("\n") && answer;
    });
  } catch (error) {
    expect([...entries(answer?.items ?? [])].sort()).toEqual(expected);
    throw error;
  }
}

afterEach(() => {
  SEARCH_DEADLINE.ms = 2_000;
  CLUSTER_SHARE.minItems = 100;
});

describe("GET /search/{resource}", () => {
  it("answers the union of the named clusters' objects in (key, cluster) order, each annotated with its cluster", async () => {
    const clusters = [await mirroredCluster(1), await mirroredCluster(2), await mirroredCluster(3)];
    const names = clusters.map((c) => c.name);
    const answer = await searchEquals(`clusters=${names.join(",")}&limit=1000`, clusters);
    expect(answer.items).toHaveLength(36);
    expect(answer.continue).toBeUndefined();
    expect(answer.partial).toBeUndefined();
    expect(Object.keys(answer.resourceVersions).sort()).toEqual([...names].sort());
    for (const { name, server } of clusters) expect(answer.resourceVersions[name]).toBe((await server.state("pods")).resourceVersion);
    const order = answer.items.map((o) => [keyOf(o), clusterOf(o)!] as const);
    expect(order).toEqual([...order].sort((a, b) => (a[0] === b[0] ? (a[1] < b[1] ? -1 : 1) : a[0] < b[0] ? -1 : 1)));
    // Every cluster's objects kept their own annotations beside the cluster's.
    const server = await clusters[0]!.server.state("pods");
    const own = answer.items.find((o) => clusterOf(o) === names[0] && keyOf(o) === keyOf(server.items[0] as KubeObject))!;
    expect(own.metadata.annotations).toEqual({ ...(server.items[0] as KubeObject).metadata.annotations, [ANNOTATION]: names[0] });

    // Without `clusters`: every cluster with a pods informer, these three among them.
    const everywhere = await search("limit=5000");
    for (const name of names) expect(everywhere.resourceVersions[name]).toBeDefined();
    expect(everywhere.items.filter((o) => names.includes(clusterOf(o)!))).toHaveLength(36);
  });

  it("filters by namespace, label selector and field selector in every cluster", async () => {
    const clusters = [await mirroredCluster(4), await mirroredCluster(5)];
    const names = clusters.map((c) => c.name).join(",");
    await clusters[1]!.server.churn({ seed: 5, operations: 20 }); // phases and app labels move
    const cases: [string, (o: KubeObject) => boolean][] = [
      ["namespace=ns-1", (o) => o.metadata.namespace === "ns-1"],
      ["labelSelector=app%3Dweb", (o) => o.metadata.labels?.app === "web"],
      ["labelSelector=app%20in%20(api,worker)&namespace=ns-0", (o) => ["api", "worker"].includes(o.metadata.labels?.app ?? "") && o.metadata.namespace === "ns-0"],
      ["fieldSelector=status.phase%3DRunning", (o) => (o as { status?: { phase?: string } }).status?.phase === "Running"],
    ];
    for (const [query, keep] of cases) {
      const answer = await searchEquals(`clusters=${names}&limit=1000&${query}`, clusters, keep);
      expect(answer.items.length, query).toBeGreaterThan(0);
    }
  });

  it("pages of 3 during churn list each object present throughout exactly once per cluster, each cluster at one snapshot", async () => {
    const clusters = [await mirroredCluster(6), await mirroredCluster(7), await mirroredCluster(8)];
    const query = `clusters=${clusters.map((c) => c.name).join(",")}&limit=3`;
    const before = await truth(clusters);
    await searchEquals(`${query.replace("limit=3", "limit=1000")}`, clusters); // caches caught up
    const seen: string[] = [];
    const versions: Record<string, string>[] = [];
    let token: string | undefined;
    let round = 0;
    do {
      const page = await search(`${query}${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
      expect(page.items.length).toBeLessThanOrEqual(3);
      expect(page.partial).toBeUndefined();
      seen.push(...page.items.map((o) => `${clusterOf(o)} ${keyOf(o)}`));
      versions.push(page.resourceVersions);
      token = page.continue;
      // Creates, updates and deletes in every cluster between pages.
      await Promise.all(clusters.map(({ server }, i) => server.churn({ seed: 100 * i + round, operations: 4 })));
      round++;
    } while (token);
    const after = await truth(clusters);
    const key = (entry: string) => entry.slice(0, entry.lastIndexOf("@"));
    const throughout = before.map(key).filter((k) => after.map(key).includes(k));
    expect(new Set(seen).size, "no duplicates").toBe(seen.length);
    expect(throughout.filter((k) => !seen.includes(k)), "no gaps").toEqual([]);
    // Only objects that existed at some point: created during the paging at most.
    const existed = new Set([...before, ...after].map(key));
    expect(seen.filter((k) => !existed.has(k) && !/ ns-\d\/churn-/.test(k))).toEqual([]);
    expect(round).toBeGreaterThan(10);
    // Each cluster reports the resourceVersion of its first page until its list is complete.
    for (const [cluster, rv] of Object.entries(versions[0]!)) {
      expect(versions.map((v) => v[cluster]).filter((v) => v !== undefined).every((v) => v === rv), cluster).toBe(true);
    }
  });

  it("names a cluster whose informer does not answer in time in `partial`, and reads it on the next page", async () => {
    const [fast, slow] = [await mirroredCluster(9), await mirroredCluster(10)];
    const query = `clusters=${fast.name},${slow.name}&limit=1000`;
    await searchEquals(query, [fast, slow]);
    // The slow cluster's informer object takes no request until released, as a busy or distant
    // object would; the deadline is generous for the fast one, whose answer never depends on it.
    SEARCH_DEADLINE.ms = 3_000;
    const stub = env.INFORMER.getByName(informerObjectName({ cluster: slow.name, name: "pods" }));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = false;
    const blocked = runInDurableObject(stub, (_, state) => state.blockConcurrencyWhile(() => ((holding = true), held)));
    await waitFor("the slow cluster's object to hold its requests", async () => holding);
    const first = await search(query);
    release();
    expect(first.partial).toEqual([slow.name]);
    expect(Object.keys(first.resourceVersions)).toEqual([fast.name]);
    expect(entries(first.items).sort()).toEqual(await truth([fast]));
    expect(first.continue).toEqual(expect.any(String));
    await blocked;
    const second = await search(`${query}&continue=${encodeURIComponent(first.continue!)}`);
    expect(second.partial).toBeUndefined();
    expect(second.continue).toBeUndefined();
    expect(entries(second.items).sort()).toEqual(await truth([slow]));
  });

  it("names a cluster whose informer is gone since the first page in `partial`, and keeps paging the others", async () => {
    const [kept, gone] = [await mirroredCluster(11), await mirroredCluster(12)];
    const query = `clusters=${kept.name},${gone.name}&limit=4`;
    const first = await search(query);
    expect(first.items).toHaveLength(4);
    expect((await request("DELETE", `/clusters/${gone.name}/informers/pods`)).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the isolate's registry copy
    let token = first.continue;
    const seen = entries(first.items);
    const partials: string[][] = [];
    while (token) {
      const page = await search(`${query}&continue=${encodeURIComponent(token)}`);
      partials.push(page.partial ?? []);
      seen.push(...entries(page.items));
      token = page.continue; // must come to an end: the gone cluster is not carried on
    }
    // Named once, on the page that found it gone, then no more.
    expect(partials[0]).toEqual([gone.name]);
    expect(partials.slice(1).flat()).toEqual([]);
    expect(seen.filter((e) => e.startsWith(kept.name)).sort()).toEqual(await truth([kept]));
  });

  it("continues a cluster whose informer was deleted and re-created since the last page from its new log, not at the old log's position", async () => {
    const server = await newCluster();
    for (let i = 10; i < 22; i++) await server.create("pods", pod({ name: `p-${i}`, namespace: "ns" }));
    const name = unique("reborn");
    await addCluster(name, server);
    await createSynced(`/clusters/${name}/informers/pods`);
    const query = `clusters=${name}&limit=4`;
    const first = await search(query);
    expect(entries(first.items)).toHaveLength(4);
    // The informer is made anew over more objects: its log's positions mean other states now.
    expect((await request("DELETE", `/clusters/${name}/informers/pods`)).status).toBe(204);
    for (let i = 22; i < 30; i++) await server.create("pods", pod({ name: `p-${i}`, namespace: "ns" }));
    await createSynced(`/clusters/${name}/informers/pods`);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the isolate's registry copy
    const seen = entries(first.items);
    let token = first.continue;
    while (token) {
      const page = await search(`${query}&continue=${encodeURIComponent(token)}`);
      seen.push(...entries(page.items));
      token = page.continue;
    }
    const keys = (list: string[]) => list.map((entry) => entry.split(" ")[1]!.split("@")[0]);
    expect(keys(seen)).toEqual(keys(await truth([{ name, server }])));
  });

  it("reads each cluster's share of a page, not a whole page from each, so memory stays about one page", async () => {
    // Three clusters whose keys do not interleave: namespace a-… sorts before b-… before c-….
    const clusters: { name: string; server: FakeCluster }[] = [];
    for (const prefix of ["a", "b", "c"]) {
      const server = await newCluster();
      for (let i = 0; i < 20; i++) await server.create("pods", pod({ name: `p-${String(i).padStart(2, "0")}`, namespace: `${prefix}-share` }));
      const name = unique(`share-${prefix}`);
      await addCluster(name, server);
      await createSynced(`/clusters/${name}/informers/pods`);
      clusters.push({ name, server });
    }
    const query = `clusters=${clusters.map((c) => c.name).join(",")}&limit=30`;
    CLUSTER_SHARE.minItems = 5; // the floor, lowered so 20 pods a cluster show the share
    const first = await search(query);
    // Each cluster read 10 (30 / 3): the page ends where the first cluster's share does, since its
    // next object could sort before the others'. Reading 30 from each, it held 30 of the first's.
    expect(first.items.map((o) => [clusterOf(o), o.metadata.namespace])).toEqual(Array.from({ length: 10 }, () => [clusters[0]!.name, "a-share"]));
    const seen = entries(first.items);
    for (let token = first.continue; token; ) {
      const page = await search(`${query}&continue=${encodeURIComponent(token)}`);
      expect(page.items.length).toBeLessThanOrEqual(30);
      seen.push(...entries(page.items));
      token = page.continue;
    }
    expect(seen.sort()).toEqual(await truth(clusters));
  });

  it("streams a page in chunks of items as the client reads it, the same JSON as one answer would be", async () => {
    const clusters = [await mirroredCluster(31), await mirroredCluster(32)];
    const whole = await searchEquals(`clusters=${clusters.map((c) => c.name).join(",")}`, clusters);
    expect(whole.items.length).toBe(24);
    // More items than one chunk of the stream (64) holds.
    for (let i = 0; i < 70; i++) await clusters[0]!.server.create("pods", pod({ name: `extra-${String(i).padStart(3, "0")}`, namespace: "ns-0" }));
    const all = await searchEquals(`clusters=${clusters.map((c) => c.name).join(",")}`, clusters);
    expect(all.items.length).toBe(94);
    const response = await request("GET", `/search/pods?clusters=${clusters.map((c) => c.name).join(",")}`);
    const reader = response.body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    expect(chunks.length).toBeGreaterThan(1);
    const text = new TextDecoder().decode(Buffer.concat(chunks));
    expect(JSON.parse(text)).toEqual(all);
  });

  it("answers bad input with a 4xx naming the problem, and creates nothing", async () => {
    const { name } = await mirroredCluster(13);
    const idsBefore = (await listDurableObjectIds(env.INFORMER)).length;
    const token = (await search(`clusters=${name}&limit=2`)).continue!;
    const cases: [string, number, RegExp][] = [
      [`/search/pods?clusters=${name},nowhere-${name}`, 404, new RegExp(`cluster 'nowhere-${name}' not found`)],
      ["/search/pods?clusters=Not_A_Name", 400, /'Not_A_Name' is not a cluster name: a lower-case DNS label/],
      ["/search/pods?clusters=", 400, /clusters/],
      ["/search/po", 400, /'po' is kubectl's shorthand for the built-in resource 'pods'/],
      ["/search/Pods!", 400, /is not a kubectl resource name such as "pods"/],
      [`/search/widgets.example.com?clusters=${name}`, 404, new RegExp(`no informer in cluster '${name}' holds all of 'widgets.example.com'`)],
      [`/search/pods?clusters=${name}&limit=0`, 400, /limit/],
      [`/search/pods?clusters=${name}&limit=5001`, 400, /limit/],
      [`/search/pods?clusters=${name}&labelSelector=app%3D%3D%3D`, 400, /selector|label/],
      [`/search/pods?clusters=${name}&continue=garbage`, 400, /continue: not a continue token/],
      [`/search/pods?clusters=${name}&namespace=ns-0&continue=${encodeURIComponent(token)}`, 400, /belongs to another search/],
      [`/search/pods?clusters=${name}&watch=true`, 400, /watch/],
    ];
    for (const [path, status, message] of cases) {
      const response = await request("GET", path);
      expect(response.status, path).toBe(status);
      expect(((await response.json()) as { error: { message: string } }).error.message, path).toMatch(message);
    }
    expect((await listDurableObjectIds(env.INFORMER)).length).toBe(idsBefore);
    expect((await request("POST", `/search/pods`)).status).toBe(404);
  });
});
