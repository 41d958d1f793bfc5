/**
 * Drives real InformerObjects against the fake API server: create one on a fresh fake cluster, wait
 * for conditions, read its cache and its event log, and check both against the cluster.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { type InformerSpecInput, parseInformerSpec } from "../../src/config/informer-spec.ts";
import { unwrap } from "../../src/errors.ts";
import { FACTORY_NAME } from "../../src/objects/informer-factory.ts";
import type { LogEvent } from "../../src/cache/event-log.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";

export type InformerStub = DurableObjectStub<import("../../src/objects/informer-object.ts").InformerObject>;

export async function newCluster(settings: Parameters<typeof FakeCluster.create>[1] = {}): Promise<FakeCluster> {
  return FakeCluster.create(env.FAKE_APISERVER_URL, settings);
}

/** Configures a new informer (fresh name) on `cluster`; short watches keep tests quick. */
export async function startInformer(
  cluster: FakeCluster,
  spec: Partial<InformerSpecInput> = {},
  name = `i-${crypto.randomUUID().slice(0, 8)}`,
): Promise<{ name: string; stub: InformerStub }> {
  const parsed = parseInformerSpec({ resource: "pods", watchTimeoutSeconds: 3, ...spec }, name);
  // Through the factory, as the API creates informers: the HTTP routes answer only registered ones (#7.17).
  unwrap(await env.FACTORY.getByName(FACTORY_NAME).put(parsed, "api", cluster.url));
  return { name, stub: env.INFORMER.getByName(name) };
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last instanceof Error ? last.message : String(last)}` : ""}`);
}

/** An informer of pods on a new fake cluster, synced. */
export async function syncedInformer() {
  const cluster = await newCluster();
  const informer = await startInformer(cluster);
  await waitSynced(informer.stub);
  return { cluster, ...informer };
}

export async function status(stub: InformerStub) {
  return unwrap(await stub.status());
}

export async function waitSynced(stub: InformerStub) {
  return waitFor("the informer to sync", async () => {
    const s = await status(stub);
    return s.synced && s.queueDepth === 0 && s;
  });
}

/** Waits until the informer sleeps between watch windows (maxLagSeconds); answers its status then. */
export async function waitSleeping(stub: InformerStub) {
  return waitFor("the informer to sleep", async () => {
    const s = await status(stub);
    return s.watch.state === "sleeping" && s;
  });
}

/** Every cached object, through the query API, as key → resourceVersion. */
export async function cacheVersions(stub: InformerStub): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = unwrap(await stub.listObjects({ limit: 500, ...(token ? { continue: token } : {}) })).value;
    for (const text of page.items) {
      const object = JSON.parse(text) as KubeObject;
      versions.set(keyOf(object), object.metadata.resourceVersion ?? "");
    }
    token = page.continue;
  } while (token);
  return versions;
}

function keyOf(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name!;
}

/** The cluster's current state of a resource as key → resourceVersion. */
export async function clusterVersions(cluster: FakeCluster, resource = "pods"): Promise<Map<string, string>> {
  const state = await cluster.state(resource);
  return new Map(state.items.map((object: KubeObject) => [keyOf(object), object.metadata.resourceVersion ?? ""]));
}

/** Waits until the cache holds exactly the cluster's objects at their resourceVersions. */
export async function waitConverged(stub: InformerStub, cluster: FakeCluster, resource = "pods", timeoutMs = 30_000) {
  let cache = new Map<string, string>();
  let truth = new Map<string, string>();
  try {
    await waitFor(
      "the cache to equal the cluster",
      async () => {
        truth = await clusterVersions(cluster, resource);
        cache = await cacheVersions(stub);
        const s = await status(stub);
        return s.queueDepth === 0 && sameMap(cache, truth);
      },
      timeoutMs,
    );
  } catch (error) {
    expect(Object.fromEntries(cache)).toEqual(Object.fromEntries(truth));
    throw error;
  }
}

export function sameMap(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}

export async function readWholeLog(stub: InformerStub, after = 0): Promise<LogEvent[]> {
  const events: LogEvent[] = [];
  for (;;) {
    const read = unwrap(await stub.readLog(after, 1_000));
    if (read.expired) throw new Error(`log expired before ${read.bounds.head}`);
    if (read.events.length === 0) return events;
    events.push(...read.events);
    after = read.events[read.events.length - 1]!.seq;
  }
}

/**
 * Checks the log tells a consistent story (no event lost or applied twice): replayed in order it
 * rebuilds exactly `expected`; per key, adds only follow absence, updates and deletes only follow
 * presence, and resourceVersions never repeat or go back.
 */
export function expectLogReplaysTo(events: LogEvent[], expected: Map<string, string>): void {
  const { state, problems } = replayLog(events);
  expect(problems).toEqual([]);
  expect(Object.fromEntries(state)).toEqual(Object.fromEntries(expected));
}

/** Replays `events` in order into key → resourceVersion, noting every step that breaks the story. */
export function replayLog(events: LogEvent[]): { state: Map<string, string>; problems: string[] } {
  const state = new Map<string, string>();
  const problems: string[] = [];
  for (const event of events) {
    const had = state.get(event.key);
    if (event.type === "add" && had !== undefined) problems.push(`#${event.seq} add of present ${event.key}`);
    if (event.type === "update" && had === undefined) problems.push(`#${event.seq} update of absent ${event.key}`);
    if (event.type === "delete" && had === undefined && !event.finalStateUnknown) {
      problems.push(`#${event.seq} delete of absent ${event.key}`);
    }
    if ((event.type === "update" || event.type === "add") && had !== undefined && compareRv(event.resourceVersion, had) <= 0) {
      problems.push(`#${event.seq} ${event.key} went from rv ${had} to ${event.resourceVersion}`);
    }
    if (event.type === "delete") state.delete(event.key);
    else if (event.type !== "sync") state.set(event.key, event.resourceVersion);
  }
  return { state, problems };
}

/** Resource versions compare by length, then text (reference §1.7.2); never as JS numbers. */
export function compareRv(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
