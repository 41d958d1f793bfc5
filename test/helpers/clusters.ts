/**
 * Clusters through the Worker's front door, for the workerd tests of issue 12: calls with and
 * without the admin token, a run-time cluster for a fake API server (`PUT /clusters/{name}`), a
 * synced informer on it, and the Durable Objects that exist (to show a refused request created none).
 */
import { listDurableObjectIds } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { informerStub } from "../../src/clusters/stubs.ts";
import type { FakeCluster } from "../fake-apiserver/client.ts";
import { newCluster, waitFor } from "./informer.ts";

export const ADMIN = { authorization: "Bearer test-admin-token-0123456789abcdef" };
const base = "http://localhost";

export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${base}${path}`, init));
}

/** A call with the admin token and, when given, a JSON body (a string is sent as it is). */
export function send(method: string, path: string, body?: unknown): Promise<Response> {
  return call(path, {
    method,
    headers: { "content-type": "application/json", ...ADMIN },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

export async function json(response: Response) {
  return (await response.json()) as any;
}

/** A name no other test uses: tests share the factory's registry. */
export const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 6)}`;

/** Every informer and subscription Durable Object that exists, sorted. */
export const objectIds = async () => [
  ...(await listDurableObjectIds(env.INFORMER)).map((id) => id.toString()),
  ...(await listDurableObjectIds(env.SUBSCRIPTION)).map((id) => id.toString()),
].sort();

/** Adds the run-time cluster `name` for the fake API server cluster `cluster`. */
export async function addCluster(name: string, cluster: FakeCluster, token?: string) {
  const response = await send("PUT", `/clusters/${name}`, { server: cluster.url, ...(token ? { token } : {}) });
  expect(response.status, await response.clone().text()).toBe(201);
  return json(response);
}

/** Creates (or updates) the informer at `path` (`/clusters/{c}/informers/{name}`) and waits for it to sync. */
export async function createSynced(path: string, spec: object = { resource: "pods" }) {
  const created = await send("PUT", path, { watchTimeoutSeconds: 3, ...spec });
  expect([200, 201], await created.clone().text()).toContain(created.status);
  await waitFor(`${path} to sync`, async () => (await json(await call(path))).synced === true);
  return json(created);
}

/**
 * A new run-time cluster (`unique(prefix)`) on a fresh fake API server cluster seeded with `pods`
 * pods (its token, if any, given to both), with a synced informer `pods` in it. `remove` deletes
 * the cluster with its informer and subscriptions.
 */
export async function startInCluster(prefix: string, settings: Parameters<typeof newCluster>[0] = {}, pods = 2) {
  const fake = await newCluster(settings);
  if (pods > 0) await fake.seed({ namespaces: 1, podsPerNamespace: pods });
  const cluster = unique(prefix);
  await addCluster(cluster, fake, settings.token ?? undefined);
  await createSynced(`/clusters/${cluster}/informers/pods`);
  const remove = async () => expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
  return { fake, cluster, stub: informerStub(env, { cluster, name: "pods" }), remove };
}
