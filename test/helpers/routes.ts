/**
 * Every route the Worker serves (API.md), each with a method, for walking them as an anonymous
 * caller: the workerd access test (test/http/access.test.ts) and the end-to-end one against a
 * Worker started with a deployment's settings use the same list, so a route added to one is walked
 * by both. Plain TypeScript: it runs in workerd and in Node.
 */

export interface WalkedRoute {
  method: string;
  path: string;
  status: number;
}

export type Send = (method: string, path: string) => Promise<Response>;

/** The routes, with `{cluster}` and `{informer}` filled in with ones that exist. */
export function everyRoute(cluster: string, informer: string): [method: string, path: string][] {
  const sub = "sub_0123456789abcdef0123456789abcdef";
  const informerRoutes = (prefix: string, name: string): [string, string][] => [
    ["GET", `${prefix}`],
    ["GET", `${prefix}/${name}`],
    ["PUT", `${prefix}/${name}`],
    ["DELETE", `${prefix}/${name}`],
    ["GET", `${prefix}/${name}/objects`],
    ["GET", `${prefix}/${name}/objects/default/web-1`],
    ["GET", `${prefix}/${name}/indexes/namespace`],
    ["GET", `${prefix}/${name}/indexes/namespace/default`],
    ["GET", `${prefix}/${name}/subscriptions`],
    ["POST", `${prefix}/${name}/subscriptions`],
  ];
  return [
    ["GET", "/healthz"],
    ["GET", "/"],
    ["POST", `/status/subscriptions/${sub}/redeliver`],
    ["GET", "/metrics"],
    ...informerRoutes("/informers", informer),
    ...informerRoutes(`/clusters/${cluster}/informers`, "pods"),
    ["GET", "/clusters"],
    ["GET", `/clusters/${cluster}`],
    ["PUT", "/clusters/walked"],
    ["DELETE", `/clusters/${cluster}`],
    ["GET", `/subscriptions/${sub}`],
    ["DELETE", `/subscriptions/${sub}`],
    ["GET", `/subscriptions/${sub}/deliveries`],
    ["GET", `/subscriptions/${sub}/dead-letters`],
    ["POST", `/subscriptions/${sub}/dead-letters/evt_1/redeliver`],
    ["POST", `/subscriptions/${sub}/secret`],
    ["POST", `/subscriptions/${sub}/enable`],
    ["GET", "/search/pods"],
    ["GET", `/search/pods?clusters=${cluster}`],
    ["GET", "/k8s/version"],
    ["GET", "/k8s/api"],
    ["GET", "/k8s/apis"],
    ["GET", "/k8s/api/v1"],
    ["GET", "/k8s/api/v1/pods"],
    ["GET", "/k8s/api/v1/namespaces/default/pods/web-1"],
    ["GET", "/k8s/api/v1/pods?watch=true&timeoutSeconds=1"],
    ["GET", "/k8s/api/v1/secrets"],
    ["GET", `/k8s/clusters/${cluster}/api/v1/pods`],
    ["GET", "/k8s/clusters/unknown-cluster/api/v1/pods"],
    ["GET", "/no-such-route"],
  ];
}

/** Calls every route once; the answers' bodies are read (and dropped) so no stream stays open. */
export async function anonymousWalk(send: Send, { cluster, informer }: { cluster: string; informer: string }): Promise<WalkedRoute[]> {
  const walked: WalkedRoute[] = [];
  for (const [method, path] of everyRoute(cluster, informer)) {
    const response = await send(method, path);
    await response.arrayBuffer();
    walked.push({ method, path, status: response.status });
  }
  return walked;
}
