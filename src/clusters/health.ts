/**
 * A cluster's health, as `GET /clusters` shows it: one `GET /version` to its API server with the
 * cluster's credentials, bounded in time, so a dead cluster costs the answer at most PROBE_TIMEOUT_MS
 * and never fails it. Errors are described, never echoed with credentials (none are in a URL:
 * cluster-spec.ts refuses URLs that carry them). Like every request to an API server, the probe
 * follows no redirect (net/redirect-refusal.ts) and reads a bounded body: `/version` is a few
 * hundred bytes, so an answer over MAX_VERSION_BODY_BYTES is refused, not buffered.
 */
import { readBodyStart } from "../net/bounded-body.ts";
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import { type ClusterConnection, resolveConnection } from "./cluster.ts";

export const PROBE_TIMEOUT_MS = 5_000;
/** A real `/version` answer is about 400 bytes. */
export const MAX_VERSION_BODY_BYTES = 4 * 1024;

export interface ClusterHealth {
  /** The API server answered (even with 401/403: it is there, the credentials are the problem). */
  reachable: boolean;
  /** Its `gitVersion`, when it answered /version. */
  version?: string;
  error?: string;
}

export async function probeCluster(
  cluster: string,
  connection: ClusterConnection,
  env: object,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<ClusterHealth> {
  let url: string;
  let init: RequestInit;
  try {
    const { apiUrl, token, headers } = resolveConnection(cluster, connection, env);
    url = `${apiUrl.replace(/\/+$/, "")}/version`;
    init = { headers: { accept: "application/json", ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, redirect: "manual" };
  } catch (error) {
    return { reachable: false, error: error instanceof Error ? error.message : String(error) };
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`)), PROBE_TIMEOUT_MS);
  try {
    const response = await fetcher(url, { ...init, signal: abort.signal });
    const redirect = redirectRefusal(response, url);
    if (redirect !== undefined || !response.ok) {
      await response.body?.cancel();
      return { reachable: true, error: redirect !== undefined ? `GET /version: ${redirect}` : `GET /version answered ${response.status} ${response.statusText}`.trim() };
    }
    const { text, exceeded } = await readBodyStart(response, MAX_VERSION_BODY_BYTES);
    if (exceeded) return { reachable: true, error: `GET /version answered more than ${MAX_VERSION_BODY_BYTES / 1024} KiB: not a Kubernetes version (refused, not read)` };
    const body = parseJson(text) as { gitVersion?: unknown } | undefined;
    return typeof body?.gitVersion === "string"
      ? { reachable: true, version: body.gitVersion }
      : { reachable: true, error: "GET /version did not answer a Kubernetes version" };
  } catch (error) {
    return { reachable: false, error: await describeConnectionFailure(url, abort.signal.aborted ? abort.signal.reason : error) };
  } finally {
    clearTimeout(timer);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
