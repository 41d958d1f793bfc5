/**
 * A cluster's health, as `GET /clusters` shows it: one `GET /version` to its API server with the
 * cluster's credentials, bounded in time, so a dead cluster costs the answer at most PROBE_TIMEOUT_MS
 * and never fails it. Errors are described, never echoed with credentials (none are in a URL:
 * cluster-spec.ts refuses URLs that carry them). Like every request to an API server, the probe
 * follows no redirect (net/redirect-refusal.ts) and reads a bounded body: `/version` is a few
 * hundred bytes, so an answer over MAX_VERSION_BODY_BYTES is refused, not buffered. The same read
 * gives `/k8s/version` the upstream's whole answer (`readVersion`; kept by the factory).
 */
import { readBodyStart } from "../net/bounded-body.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import type { ClusterConnection } from "./cluster.ts";
import { upstreamGet } from "./upstream-request.ts";

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

/** An API server's `/version` answer (apimachinery version.Info): every field is a string. */
export type VersionInfo = Record<string, string> & { gitVersion: string };

/** The probe's answer with the whole `/version` document when the API server gave one. */
export type VersionRead = { reachable: boolean; info?: VersionInfo; error?: string };

export async function probeCluster(
  cluster: string,
  connection: ClusterConnection,
  env: object,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<ClusterHealth> {
  const { info, ...health } = await readVersion(cluster, connection, env, fetcher);
  return info ? { ...health, version: info.gitVersion } : health;
}

/** One `GET /version` to the cluster's API server, bounded in time and size. */
export async function readVersion(
  cluster: string,
  connection: ClusterConnection,
  env: object,
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<VersionRead> {
  return upstreamGet<VersionRead>(
    { cluster, connection, env, path: "/version", accept: "application/json", timeoutMs: PROBE_TIMEOUT_MS, fetcher },
    async (response, url) => {
      const redirect = redirectRefusal(response, url);
      if (redirect !== undefined || !response.ok) {
        await response.body?.cancel();
        return { reachable: true, error: redirect !== undefined ? `GET /version: ${redirect}` : `GET /version answered ${response.status} ${response.statusText}`.trim() };
      }
      const { text, exceeded } = await readBodyStart(response, MAX_VERSION_BODY_BYTES);
      if (exceeded) return { reachable: true, error: `GET /version answered more than ${MAX_VERSION_BODY_BYTES / 1024} KiB: not a Kubernetes version (refused, not read)` };
      const info = versionInfo(parseJson(text));
      return info ? { reachable: true, info } : { reachable: true, error: "GET /version did not answer a Kubernetes version" };
    },
    (error) => ({ reachable: false, error }),
  );
}

/** The string fields of a `/version` body that names a gitVersion; undefined for anything else. */
function versionInfo(body: unknown): VersionInfo | undefined {
  if (typeof body !== "object" || body === null || typeof (body as { gitVersion?: unknown }).gitVersion !== "string") return undefined;
  return Object.fromEntries(Object.entries(body).filter(([, value]) => typeof value === "string")) as VersionInfo;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
