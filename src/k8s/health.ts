/**
 * `/healthz`, `/livez` and `/readyz` as kube-apiserver answers them (AS pkg/server/healthz): `ok`
 * as `text/plain`, `?verbose` lists each check as `[+]<name> ok` and ends with
 * `<endpoint> check passed`, and `/<endpoint>/<check>` answers one check. Probes, monitors and
 * Headlamp's cluster health test read these before anything else.
 *
 * Where we differ from kube-apiserver: there is no etcd, informer or admission check to list. A
 * `/k8s` answer is made per request by a stateless Worker, so the one check that means something
 * for the endpoint itself is `ping`; each informer's own health is on `/clusters/{cluster}` and
 * `/informers`, and a cache that is not synced says so on the read it would answer wrongly.
 */

export const HEALTH_ENDPOINTS = ["healthz", "livez", "readyz"] as const;
export type HealthEndpoint = (typeof HEALTH_ENDPOINTS)[number];

const CHECKS = ["ping"] as const;

/** The server's headers: plain text, and `nosniff` as its healthz handler sets. */
const HEADERS = { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff", "cache-control": "no-cache, private" };

/** The answer to `/<endpoint>` (`verbose` when the query names it, whatever its value), or to `/<endpoint>/<check>`. */
export function healthResponse(endpoint: HealthEndpoint, verbose: boolean, check?: string): Response {
  if (check !== undefined) {
    if (!(CHECKS as readonly string[]).includes(check)) return new Response("404 page not found\n", { status: 404, headers: HEADERS });
    return new Response("ok", { headers: HEADERS });
  }
  if (!verbose) return new Response("ok", { headers: HEADERS });
  return new Response(`${CHECKS.map((name) => `[+]${name} ok\n`).join("")}${endpoint} check passed\n`, { headers: HEADERS });
}
