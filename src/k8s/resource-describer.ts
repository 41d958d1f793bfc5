/**
 * What `/k8s` says about one informer's custom resource (kube/resource-description.ts), as its
 * object answers discovery (served.ts DescriptionOf): its CRD, read from the API server once and
 * kept durably (cache/resource-description-store.ts), so discovery lists it with no object cached;
 * while the CRD cannot be read, what a cached object shows (its kind and scope).
 *
 * Guarantees:
 * - A built-in resource is described by the catalog: null here, and nothing is read.
 * - A stored description of the resource the spec names is answered without asking the server; one
 *   of another resource or version is not (it reads the CRD anew).
 * - The CRD is asked for at most once every CRD_RETRY_MS while it cannot be read (discovery asks
 *   about once a second). The wait is memory only: a restarted object may ask at once.
 * - Null while nothing tells (no CRD, no cached object).
 */
import { storeDescription, storedDescription } from "../cache/resource-description-store.ts";
import type { Clock } from "../clock.ts";
import type { ClusterConnection } from "../clusters/cluster.ts";
import { readCrdDescription } from "../clusters/upstream-crd.ts";
import { ok, type Result } from "../errors.ts";
import { describeFromObject, type ResourceDescription } from "../kube/resource-description.ts";
import { resolveResource } from "../kube/resources.ts";
import type { Db } from "../sql.ts";
import type { CacheReads, WithInformer } from "./cache-reads.ts";

/** How long a CRD that could not be read is not asked for again: discovery asks about once a second. */
const CRD_RETRY_MS = 60_000;

/** What the describer reads of the informer's spec. */
export interface DescribedSpec {
  cluster: string;
  resource: string;
  apiVersion?: string | undefined;
}

export interface ResourceDescriberDeps {
  db: Db;
  clock: Clock;
  at: WithInformer<DescribedSpec>;
  /** The cache, for a sample object while the CRD cannot be read. */
  reads: Pick<CacheReads, "sampleObject">;
  /** How to reach the informer's cluster now (its stored connection, opened, or the default one). */
  connection: (cluster: string) => Promise<ClusterConnection>;
  /** The Worker's environment: the cluster's credentials (clusters/upstream-request.ts). */
  env: object;
}

export class ResourceDescriber {
  readonly #deps: ResourceDescriberDeps;
  /** When the CRD may be asked for again after it could not be read (memory only: a restart may ask at once). */
  #crdRetryAt = 0;

  constructor(deps: ResourceDescriberDeps) {
    this.#deps = deps;
  }

  async describe(): Promise<Result<ResourceDescription | null>> {
    const { db, clock } = this.#deps;
    const current = this.#deps.at((spec) => spec);
    if (!current.ok) return current;
    const spec = current.value;
    const ref = resolveResource(spec.resource, spec.apiVersion);
    if (ref.namespaced !== undefined) return ok(null);
    const key = `${ref.resource}.${ref.group}/${ref.version}`;
    const known = storedDescription(db, key);
    if (known) return ok(known);
    if (clock.now() >= this.#crdRetryAt) {
      this.#crdRetryAt = clock.now() + CRD_RETRY_MS;
      const fromCrd = await readCrdDescription(spec.cluster, await this.#deps.connection(spec.cluster), this.#deps.env, ref);
      if (fromCrd) {
        storeDescription(db, key, fromCrd, clock.now());
        return ok(fromCrd);
      }
    }
    const sample = this.#deps.reads.sampleObject();
    return sample.ok ? ok(sample.value && describeFromObject(sample.value)) : sample;
  }
}
