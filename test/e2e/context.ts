/**
 * What test/e2e/global-setup.ts hands to the end-to-end tests (vitest `provide` / `inject`): where the
 * Worker and the fake cluster listen, the tokens, and ready-made kubeconfigs for kubectl.
 */
import { inject } from "vitest";
import { FakeCluster } from "../fake-apiserver/client.ts";

export interface E2eContext {
  /** The Worker, e.g. http://127.0.0.1:40123. */
  workerUrl: string;
  /** Its Kubernetes-compatible API root: `${workerUrl}/k8s`. */
  k8sUrl: string;
  /** The fake API server cluster the Worker mirrors (its Kubernetes API root). */
  clusterUrl: string;
  readToken: string;
  adminToken: string;
  /** A TOKENS credential that may read only `cluster` (a run-time cluster no test adds but access.e2e.test.ts). */
  restricted: { cluster: string; readToken: string; user: string; groups: string[] };
  /** Read credentials (scoped to every cluster) of the Kubernetes users alice and bob, for clusters whose authorization is rbac. */
  rbacReaders: Record<"alice" | "bob", { token: string; user: string }>;
  /** Informer names, as declared in INFORMERS. */
  informers: { pods: string; deployments: string };
  /**
   * kubeconfig files: `edge` points at /k8s with READ_TOKEN through an HTTPS front (kubectl sends a
   * token only over TLS: tls-proxy.ts), `fake` at the fake cluster.
   */
  kubeconfigs: { edge: string; fake: string };
  /** A scratch directory that lives as long as the run (kubectl caches go here). */
  scratchDir: string;
  /** wrangler dev's output: the Worker's log lines (the tests grep it for secrets). */
  workerLog: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    e2e: E2eContext;
  }
}

export function e2e(): E2eContext {
  return inject("e2e");
}

export function fakeCluster(): FakeCluster {
  return new FakeCluster(e2e().clusterUrl);
}

/** A request to the Worker's own API (not /k8s) with the admin token. */
export async function workerJson<T>(path: string): Promise<T> {
  const { workerUrl, adminToken } = e2e();
  const response = await fetch(`${workerUrl}${path}`, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(10_000) });
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A call to the Worker's own API with the admin token and an optional JSON body; the answer's JSON, or undefined for a 204. */
export async function workerAdmin<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const { workerUrl, adminToken } = e2e();
  const response = await fetch(`${workerUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(15_000),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (response.status === 204 ? undefined : await response.json()) as T;
}
