/**
 * One GET to a cluster's API server with the cluster's credentials (bearer token, Cloudflare Access
 * service-token headers), bounded in time: `answered` reads the response while the timer still
 * runs, so a body that stalls is cut off too. It follows no redirect (`redirect: "manual"`;
 * `answered` refuses a 3xx with net/redirect-refusal.ts), so the credentials never reach another
 * origin. A connection that cannot be used (a missing secret binding) or a request that fails is
 * `failed`, described without credentials (none are in a URL: cluster-spec.ts refuses URLs that
 * carry them).
 */
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { type ClusterConnection, resolveConnection } from "./cluster.ts";

export interface UpstreamGet {
  cluster: string;
  connection: ClusterConnection;
  env: object;
  path: string;
  accept: string;
  timeoutMs: number;
  fetcher?: typeof fetch;
}

export async function upstreamGet<T>(
  request: UpstreamGet,
  answered: (response: Response, url: string) => Promise<T>,
  failed: (message: string) => T,
): Promise<T> {
  let url: string;
  let init: RequestInit;
  try {
    const { apiUrl, token, headers } = resolveConnection(request.cluster, request.connection, request.env);
    url = `${apiUrl.replace(/\/+$/, "")}${request.path}`;
    init = { headers: { accept: request.accept, ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, redirect: "manual" };
  } catch (error) {
    return failed(error instanceof Error ? error.message : String(error));
  }
  const fetcher = request.fetcher ?? ((input, options) => fetch(input, options));
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${request.timeoutMs / 1000} s`)), request.timeoutMs);
  try {
    return await answered(await fetcher(url, { ...init, signal: abort.signal }), url);
  } catch (error) {
    return failed(await describeConnectionFailure(url, abort.signal.aborted ? abort.signal.reason : error));
  } finally {
    clearTimeout(timer);
  }
}
