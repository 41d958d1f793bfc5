/**
 * Configuration, validated once at the edge of the system (DESIGN invariant 8): the informer spec
 * of API.md, the `INFORMERS` variable, and the environment. Everything past this module receives
 * parsed, defaulted values; bad input is a ValidationError naming the field and the problem.
 */
import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";
import { describeIssues, ValidationError } from "../errors.ts";
import { parseFieldPath } from "../cache/field-path.ts";
import { NAMESPACE_INDEX } from "../cache/indexer.ts";
import type { InformerSettings } from "../cache/informer.ts";
import { meantBuiltIn } from "../k8s/catalog.ts";
import { checkResourcePattern, resolveResource } from "../kube/resources.ts";
import { parseFieldSelector, parseLabelSelector } from "../kube/selectors.ts";
import { declaredSubscriptionSchema } from "../delivery/subscription-spec.ts";
import { DEFAULT_CLUSTER, informerObjectName } from "../clusters/cluster.ts";
import { isSensitive, sensitiveRefusal } from "../cache/sensitive-resources.ts";

// zod/mini keeps the bundle small by shipping no messages; load the English ones once.
z.config(en());

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const INDEX_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

export const DEFAULT_RETENTION = { maxEvents: 100_000, maxAgeSeconds: 2 * 24 * 3600 };
export const DEFAULT_PAGE_SIZE = 500;
/** Indexers one informer declares at most (defaults included: a default is left out of a full set). */
export const MAX_INDEXERS = 20;
/** An hour: longer is a periodic list rather than an informer (an RV that old is compacted, so each window relists). */
export const MAX_LAG_SECONDS = 3600;

type IssueSink = { addIssue(issue: { code: "custom"; path: (string | number)[]; message: string }): void };

function check(ctx: IssueSink, path: (string | number)[], fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    ctx.addIssue({ code: "custom", path, message: error instanceof Error ? error.message : String(error) });
  }
}

const str = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));
const int = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));
const dnsLabel = (message: string) => z.string().check(z.maxLength(63), z.regex(DNS_LABEL, message));

export const informerSpecSchema = z
  .strictObject({
    name: z.optional(dnsLabel("must be a lower-case DNS label (a-z, 0-9, '-')")),
    /** The cluster the informer watches (clusters/cluster.ts); informer names are unique within one. */
    cluster: z._default(dnsLabel("must name a cluster: a lower-case DNS label (a-z, 0-9, '-')"), DEFAULT_CLUSTER),
    resource: str(1, 253),
    apiVersion: z.optional(str(1, 253)),
    namespace: z.optional(dnsLabel("must be a Kubernetes namespace name")),
    labelSelector: z.optional(str(0, 4096)),
    fieldSelector: z.optional(str(0, 4096)),
    /** Default resync period of subscriptions (webhook delivery); 0 = never. */
    resyncPeriodSeconds: z._default(int(0, 7 * 24 * 3600), 0),
    indexers: z._default(
      z
        .record(z.string().check(z.regex(INDEX_NAME, "index names are letters, digits, '_' and '-'")), str(1, 512))
        .check(z.refine((r) => Object.keys(r).length <= MAX_INDEXERS, `at most ${MAX_INDEXERS} indexers`)),
      {},
    ),
    transform: z.prefault(
      z.strictObject({
        dropManagedFields: z._default(z.boolean(), true),
        dropFields: z._default(z.array(str(1, 512)).check(z.maxLength(50)), []),
        /** Secrets: keep `data` and `stringData` (dropped by default). Optional, so specs of other resources stay as stored. */
        keepSecretData: z.optional(z.boolean()),
      }),
      {},
    ),
    retention: z.prefault(
      z.strictObject({
        maxEvents: z._default(int(1_000, 10_000_000), DEFAULT_RETENTION.maxEvents),
        maxAgeSeconds: z._default(int(60, 30 * 24 * 3600), DEFAULT_RETENTION.maxAgeSeconds),
      }),
      {},
    ),
    /** Server-side watch timeout; default random in [300, 600) s, like client-go. */
    watchTimeoutSeconds: z.optional(int(1, 1800)),
    /**
     * How late a change may reach the cache, in seconds: > 0 lets the informer sleep between watch
     * windows (cache/watch-windows.ts); absent or 0, it always watches. Optional, so stored specs
     * stay as they were.
     */
    maxLagSeconds: z.optional(int(0, MAX_LAG_SECONDS)),
    pageSize: z._default(int(1, 10_000), DEFAULT_PAGE_SIZE),
    /** Required (true) to mirror a sensitive resource, `secrets` (cache/sensitive-resources.ts). */
    allowSensitive: z.optional(z.boolean()),
    /** Webhook subscriptions declared with the informer (INFORMERS only; the API has its own routes). */
    subscriptions: z._default(z.array(declaredSubscriptionSchema).check(z.maxLength(50)), []),
  })
  .check(
    z.superRefine((spec, ctx) => {
      check(ctx, ["resource"], () => {
        checkResourceName(spec.resource);
        const ref = resolveResource(spec.resource, spec.apiVersion);
        if (spec.namespace !== undefined && ref.namespaced === false) {
          throw new Error(`'${spec.resource}' is cluster-scoped: it has no namespace to watch`);
        }
      });
      const sensitive = isSensitiveSpec(spec);
      if (sensitive && spec.allowSensitive !== true) ctx.addIssue({ code: "custom", path: ["allowSensitive"], message: sensitiveRefusal(spec.resource) });
      if (!sensitive && spec.transform.keepSecretData !== undefined) {
        ctx.addIssue({ code: "custom", path: ["transform", "keepSecretData"], message: "only informers of secrets have secret data to keep" });
      }
      if (spec.labelSelector !== undefined) check(ctx, ["labelSelector"], () => parseLabelSelector(spec.labelSelector!));
      if (spec.fieldSelector !== undefined) check(ctx, ["fieldSelector"], () => parseFieldSelector(spec.fieldSelector!));
      for (const [index, path] of Object.entries(spec.indexers)) {
        if (index === NAMESPACE_INDEX) {
          ctx.addIssue({ code: "custom", path: ["indexers", index], message: "the namespace index always exists" });
        }
        check(ctx, ["indexers", index], () => parseFieldPath(path));
      }
      spec.transform.dropFields.forEach((path, i) => check(ctx, ["transform", "dropFields", i], () => parseFieldPath(path)));
      const names = spec.subscriptions.map((s) => s.name);
      names.forEach((name, i) => {
        if (names.indexOf(name) !== i) ctx.addIssue({ code: "custom", path: ["subscriptions", i, "name"], message: `duplicate subscription name '${name}'` });
      });
    }),
  );

/**
 * Throws an Error saying what is wrong with a resource name informer specs refuse: kubectl's
 * shorthand for a built-in (`po`, `deployment`), or not of the form plural[.group]. Searches name
 * their resource the same way (src/http/search.ts).
 */
export function checkResourceName(resource: string): void {
  const meant = meantBuiltIn(resource);
  if (meant !== undefined) {
    throw new ValidationError(
      `'${resource}' is kubectl's shorthand for the built-in resource '${meant}': write "resource": "${meant}" (informer specs name a resource as plural.group)`,
    );
  }
  checkResourcePattern(resource);
}

export type InformerSpecInput = z.input<typeof informerSpecSchema>;
/** A validated, defaulted informer spec with its name. */
export type InformerSpec = z.output<typeof informerSpecSchema> & { name: string };


/** The default informer name: the resource's kubectl name with dots made URL-safe. */
export function defaultName(resource: string): string {
  return resource.replace(/\./g, "-").slice(0, 63).replace(/-+$/, "");
}

/**
 * Validates a spec; `name` (and `cluster`) from the URL win over missing body fields and must match
 * present ones.
 */
export function parseInformerSpec(input: unknown, name?: string, cluster?: string): InformerSpec {
  const parsed = informerSpecSchema.safeParse(
    cluster !== undefined && input !== null && typeof input === "object" && !("cluster" in input) ? { ...input, cluster } : input,
  );
  if (!parsed.success) throw new ValidationError(`invalid informer spec: ${describeIssues(parsed.error)}`);
  const spec = parsed.data;
  if (name !== undefined && spec.name !== undefined && spec.name !== name) {
    throw new ValidationError(`the spec's name '${spec.name}' does not match the URL's '${name}'`);
  }
  if (cluster !== undefined && spec.cluster !== cluster) {
    throw new ValidationError(`the spec's cluster '${spec.cluster}' does not match the URL's '${cluster}'`);
  }
  const finalName = name ?? spec.name ?? defaultName(spec.resource);
  if (!DNS_LABEL.test(finalName) || finalName.length > 63) {
    throw new ValidationError(`informer name '${finalName}' must be a lower-case DNS label (a-z, 0-9, '-')`);
  }
  return { ...spec, indexers: withDefaultIndexers(spec), name: finalName };
}

/**
 * Indexes every informer of a resource has unless its spec already indexes the path: pods by
 * `spec.nodeName`, what the watch cache indexes them by (kube-apiserver's pod trigger) and what
 * k9s' node view and `kubectl describe node` select on (issue 30 item 3). A few rows: one entry
 * per scheduled pod, written when it is scheduled; an existing informer's entries are built once
 * when its spec gains the index (a deploy re-applying `INFORMERS`, or a PUT).
 */
const DEFAULT_INDEXERS: Record<string, Record<string, string>> = { "/pods": { nodeName: "spec.nodeName" } };

function withDefaultIndexers(spec: z.output<typeof informerSpecSchema>): Record<string, string> {
  let defaults: Record<string, string> | undefined;
  try {
    const ref = resolveResource(spec.resource, spec.apiVersion);
    defaults = DEFAULT_INDEXERS[`${ref.group}/${ref.resource}`];
  } catch {
    return spec.indexers; // the schema has said what is wrong with the resource
  }
  const indexers = { ...spec.indexers };
  for (const [name, path] of Object.entries(defaults ?? {})) {
    if (!Object.values(indexers).includes(path) && !(name in indexers) && Object.keys(indexers).length < MAX_INDEXERS) indexers[name] = path;
  }
  return indexers;
}

/** Parses the `INFORMERS` variable: a JSON array of specs. Invalid entries are reported, valid ones kept. */
export function parseDeclaredInformers(text: string | undefined): { specs: InformerSpec[]; errors: string[] } {
  if (text === undefined || text.trim() === "") return { specs: [], errors: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { specs: [], errors: ["INFORMERS is not valid JSON"] };
  }
  if (!Array.isArray(raw)) return { specs: [], errors: ["INFORMERS must be a JSON array of informer specs"] };
  const specs: InformerSpec[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  raw.forEach((entry, i) => {
    try {
      const spec = parseInformerSpec(entry);
      const where = informerObjectName(spec);
      if (seen.has(where)) {
        throw new ValidationError(`duplicate informer name '${spec.name}'${spec.cluster === DEFAULT_CLUSTER ? "" : ` in cluster '${spec.cluster}'`}`);
      }
      seen.add(where);
      specs.push(spec);
    } catch (error) {
      errors.push(`INFORMERS[${i}]: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return { specs, errors };
}

/** Whether the spec's resource is sensitive (false when it does not resolve: that has its own issue). */
function isSensitiveSpec(spec: { resource: string; apiVersion?: string | undefined }): boolean {
  try {
    return isSensitive(resolveResource(spec.resource, spec.apiVersion));
  } catch {
    return false;
  }
}

/** What the informer machinery needs of a spec. */
export function informerSettings(spec: InformerSpec): InformerSettings {
  const { keepSecretData, ...transform } = spec.transform;
  return {
    indexers: spec.indexers,
    // Also for a secrets informer stored by an earlier release, without allowSensitive.
    transform: { ...transform, dropSecretData: isSensitiveSpec(spec) && keepSecretData !== true },
    retention: spec.retention,
    reflector: {
      pageSize: spec.pageSize,
      ...(spec.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: spec.watchTimeoutSeconds }),
      ...(spec.maxLagSeconds === undefined ? {} : { maxLagSeconds: spec.maxLagSeconds }),
    },
  };
}

/** Whether two specs list different things (so the cache must be relisted from scratch). */
export function listingChanged(a: InformerSpec, b: InformerSpec): boolean {
  return (
    a.resource !== b.resource ||
    a.apiVersion !== b.apiVersion ||
    a.namespace !== b.namespace ||
    a.labelSelector !== b.labelSelector ||
    a.fieldSelector !== b.fieldSelector
  );
}

/** Whether cached bodies were made by a different transform (so they must be made again). */
export function transformChanged(a: InformerSpec, b: InformerSpec): boolean {
  return JSON.stringify(a.transform) !== JSON.stringify(b.transform);
}

export function indexersChanged(a: InformerSpec, b: InformerSpec): boolean {
  return JSON.stringify(a.indexers) !== JSON.stringify(b.indexers);
}

/**
 * Whether two specs are equal, whatever the order of their fields (a spec stored before clusters
 * gained `cluster` in another place than a fresh parse puts it).
 */
export function sameSpec(a: InformerSpec, b: InformerSpec): boolean {
  const canonical = (spec: InformerSpec) => JSON.stringify(Object.fromEntries(Object.entries(spec).sort(([x], [y]) => (x < y ? -1 : 1))));
  return canonical(a) === canonical(b);
}
