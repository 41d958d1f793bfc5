/**
 * `/k8s[/clusters/{cluster}]/version`: the cluster's own API server's `/version`, as clients of it
 * see it (Argo CD records it per cluster and renders Helm charts for its KubeVersion; `kubectl
 * version` warns of skew against it). The factory reads it from the upstream and keeps it
 * (FactoryClusters.serverVersion: once per 10 min per connection, the last answer kept while the
 * cluster is unreachable); each isolate keeps the factory's answer ISOLATE_VERSION_TTL_MS, so a
 * call costs neither an upstream request nor, mostly, a factory call. Concurrent misses share one
 * factory call.
 *
 * A cluster that never answered `/version` (unreachable since this deployment first asked) gets
 * FALLBACK_VERSION_INFO: the Kubernetes version whose read API `/k8s` follows, marked as this
 * deployment's by `compiler: "edge-informer"` and `platform: "cloudflare/workers"` (an API server
 * says `gc` and `linux/…`), and kept only UNKNOWN_VERSION_TTL_MS.
 */
import type { VersionInfo } from "../clusters/health.ts";

/** The stand-in for a cluster that never answered: the Kubernetes version `/k8s` follows, marked as ours. */
export const FALLBACK_VERSION_INFO: VersionInfo = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0",
  gitCommit: "",
  gitTreeState: "clean",
  buildDate: "",
  goVersion: "",
  compiler: "edge-informer",
  platform: "cloudflare/workers",
};

/** How long an isolate keeps a cluster's version before it asks the factory again. */
export const ISOLATE_VERSION_TTL_MS = 60_000;
/** How long an isolate keeps the stand-in for a cluster that has not answered yet. */
export const UNKNOWN_VERSION_TTL_MS = 15_000;

const kept = new Map<string, { until: number; value: Promise<VersionInfo> }>();

/** The version `/k8s` answers for `cluster`; `load` asks the factory (undefined: never reachable). */
export function serverVersion(cluster: string, load: () => Promise<VersionInfo | undefined>, now = Date.now()): Promise<VersionInfo> {
  const cached = kept.get(cluster);
  if (cached && cached.until > now) return cached.value;
  for (const [name, entry] of kept) if (entry.until <= now) kept.delete(name);
  const entry = { until: now + ISOLATE_VERSION_TTL_MS, value: Promise.resolve(FALLBACK_VERSION_INFO) };
  entry.value = load().then(
    (info) => {
      if (info) return info;
      entry.until = Date.now() + UNKNOWN_VERSION_TTL_MS;
      return FALLBACK_VERSION_INFO;
    },
    () => {
      // The factory could not be asked: the stand-in for this request only.
      entry.until = 0;
      return FALLBACK_VERSION_INFO;
    },
  );
  kept.set(cluster, entry);
  return entry.value;
}
