/**
 * Configuration, validated once at the edge of the system (DESIGN invariant 8): the informer spec
 * of API.md, the `INFORMERS` variable, and the environment. Everything past this module receives
 * parsed, defaulted values; bad input is a ValidationError naming the field and the problem.
 */
import { z } from "zod";
import { ValidationError } from "./errors.ts";
import { parseFieldPath } from "./cache/field-path.ts";
import { NAMESPACE_INDEX } from "./cache/indexer.ts";
import type { InformerSettings } from "./cache/informer.ts";
import { resolveResource } from "./kube/resources.ts";
import { parseFieldSelector, parseLabelSelector } from "./kube/selectors.ts";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const INDEX_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,62}$/;

export const DEFAULT_RETENTION = { maxEvents: 100_000, maxAgeSeconds: 2 * 24 * 3600 };
export const DEFAULT_PAGE_SIZE = 500;

function check(ctx: z.RefinementCtx, path: (string | number)[], fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    ctx.addIssue({ code: "custom", path, message: error instanceof Error ? error.message : String(error) });
  }
}

export const informerSpecSchema = z
  .strictObject({
    name: z.string().max(63).regex(DNS_LABEL, "must be a lower-case DNS label (a-z, 0-9, '-')").optional(),
    resource: z.string().min(1).max(253),
    apiVersion: z.string().min(1).max(253).optional(),
    namespace: z.string().max(63).regex(DNS_LABEL, "must be a Kubernetes namespace name").optional(),
    labelSelector: z.string().max(4096).optional(),
    fieldSelector: z.string().max(4096).optional(),
    resyncPeriodSeconds: z.number().int().min(0).max(7 * 24 * 3600).default(0),
    indexers: z
      .record(z.string().regex(INDEX_NAME, "index names are letters, digits, '_' and '-'"), z.string().min(1).max(512))
      .refine((r) => Object.keys(r).length <= 20, "at most 20 indexers")
      .default({}),
    transform: z
      .strictObject({
        dropManagedFields: z.boolean().default(true),
        dropFields: z.array(z.string().min(1).max(512)).max(50).default([]),
      })
      .prefault({}),
    retention: z
      .strictObject({
        maxEvents: z.number().int().min(1_000).max(10_000_000).default(DEFAULT_RETENTION.maxEvents),
        maxAgeSeconds: z.number().int().min(60).max(30 * 24 * 3600).default(DEFAULT_RETENTION.maxAgeSeconds),
      })
      .prefault({}),
    /** Server-side watch timeout; default random in [300, 600) s, like client-go. */
    watchTimeoutSeconds: z.number().int().min(1).max(1800).optional(),
    pageSize: z.number().int().min(1).max(10_000).default(DEFAULT_PAGE_SIZE),
  })
  .superRefine((spec, ctx) => {
    check(ctx, ["resource"], () => {
      const ref = resolveResource(spec.resource, spec.apiVersion);
      if (spec.namespace !== undefined && ref.namespaced === false) {
        throw new Error(`'${spec.resource}' is cluster-scoped: it has no namespace to watch`);
      }
    });
    if (spec.labelSelector !== undefined) check(ctx, ["labelSelector"], () => parseLabelSelector(spec.labelSelector!));
    if (spec.fieldSelector !== undefined) check(ctx, ["fieldSelector"], () => parseFieldSelector(spec.fieldSelector!));
    for (const [index, path] of Object.entries(spec.indexers)) {
      if (index === NAMESPACE_INDEX) {
        ctx.addIssue({ code: "custom", path: ["indexers", index], message: "the namespace index always exists" });
      }
      check(ctx, ["indexers", index], () => parseFieldPath(path));
    }
    spec.transform.dropFields.forEach((path, i) => check(ctx, ["transform", "dropFields", i], () => parseFieldPath(path)));
  });

export type InformerSpecInput = z.input<typeof informerSpecSchema>;
/** A validated, defaulted informer spec with its name. */
export type InformerSpec = z.output<typeof informerSpecSchema> & { name: string };

/** Renders zod issues as one message: `field: problem; field: problem`. */
export function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : ""}${issue.message}`)
    .join("; ");
}

/** The default informer name: the resource's kubectl name with dots made URL-safe. */
export function defaultName(resource: string): string {
  return resource.replace(/\./g, "-").slice(0, 63).replace(/-+$/, "");
}

/** Validates a spec; `name` from the URL wins over a missing body name and must match a present one. */
export function parseInformerSpec(input: unknown, name?: string): InformerSpec {
  const parsed = informerSpecSchema.safeParse(input);
  if (!parsed.success) throw new ValidationError(`invalid informer spec: ${describeIssues(parsed.error)}`);
  const spec = parsed.data;
  if (name !== undefined && spec.name !== undefined && spec.name !== name) {
    throw new ValidationError(`the spec's name '${spec.name}' does not match the URL's '${name}'`);
  }
  const finalName = name ?? spec.name ?? defaultName(spec.resource);
  if (!DNS_LABEL.test(finalName) || finalName.length > 63) {
    throw new ValidationError(`informer name '${finalName}' must be a lower-case DNS label (a-z, 0-9, '-')`);
  }
  return { ...spec, name: finalName };
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
      if (seen.has(spec.name)) throw new ValidationError(`duplicate informer name '${spec.name}'`);
      seen.add(spec.name);
      specs.push(spec);
    } catch (error) {
      errors.push(`INFORMERS[${i}]: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return { specs, errors };
}

/** What the informer machinery needs of a spec. */
export function informerSettings(spec: InformerSpec): InformerSettings {
  return {
    indexers: spec.indexers,
    transform: spec.transform,
    retention: spec.retention,
    reflector: {
      pageSize: spec.pageSize,
      ...(spec.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: spec.watchTimeoutSeconds }),
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

export function indexersChanged(a: InformerSpec, b: InformerSpec): boolean {
  return JSON.stringify(a.indexers) !== JSON.stringify(b.indexers);
}
