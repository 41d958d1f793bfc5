/**
 * A custom resource's CRD, read from its cluster's API server (clusters/upstream-request.ts: the
 * cluster's credentials, no redirects, bounded in time) and turned into what `/k8s` says about the
 * resource (kube/resource-description.ts). Bounded in size: a CRD with a large schema is a few
 * hundred KB, and etcd holds none over 1.5 MB. Undefined when it cannot be read — a credential
 * without `get` on CRDs, a CRD that does not serve the version — and the caller falls back.
 */
import type { ResourceRef } from "../kube/resources.ts";
import { readBodyStart } from "../net/bounded-body.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import { crdPath, describeFromCrd, type ResourceDescription } from "../kube/resource-description.ts";
import type { ClusterConnection } from "./cluster.ts";
import { upstreamGet } from "./upstream-request.ts";

export const CRD_TIMEOUT_MS = 10_000;
export const MAX_CRD_BYTES = 4 * 1024 * 1024;

export function readCrdDescription(
  cluster: string,
  connection: ClusterConnection,
  env: object,
  ref: Pick<ResourceRef, "group" | "version" | "resource">,
  fetcher?: typeof fetch,
): Promise<ResourceDescription | undefined> {
  const path = crdPath(ref.resource, ref.group);
  return upstreamGet<ResourceDescription | undefined>(
    { cluster, connection, env, path, accept: "application/json", timeoutMs: CRD_TIMEOUT_MS, ...(fetcher ? { fetcher } : {}) },
    async (response, url) => {
      if (redirectRefusal(response, url) !== undefined || !response.ok) {
        await response.body?.cancel();
        return undefined;
      }
      const { text, exceeded } = await readBodyStart(response, MAX_CRD_BYTES);
      if (exceeded) return undefined;
      try {
        return describeFromCrd(JSON.parse(text), ref.version);
      } catch {
        return undefined;
      }
    },
    () => undefined,
  );
}
