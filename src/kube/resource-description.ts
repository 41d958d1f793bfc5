/**
 * What `/k8s` says about a custom resource — kind, scope, singular and short names, categories and
 * printer columns — taken from its CustomResourceDefinition (`spec.names`, `spec.scope`, the
 * served version's `additionalPrinterColumns`), as kube-apiserver's discovery and Table output take
 * them (KK staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/customresource_discovery_controller.go,
 * tableconvertor). Discovery then lists the resource whether or not an object is cached.
 *
 * Where the CRD cannot be read (the credential may not get CRDs), a cached object still tells the
 * kind and scope, with the singular name guessed from the kind and no short names or columns: the
 * best we can do, and what `/k8s` did before CRDs were read.
 */
import * as z from "zod/mini";

/** One `additionalPrinterColumns` entry of the served version. */
export interface PrinterColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  /** A simple JSONPath, as CRDs write them: `.spec.color`, `.status.conditions[0].type`. */
  jsonPath: string;
}

export interface ResourceDescription {
  kind: string;
  namespaced: boolean;
  singular: string;
  shortNames: string[];
  categories: string[];
  printerColumns: PrinterColumn[];
  /** Where it came from: the CRD, or a cached object when the CRD could not be read. */
  source: "crd" | "object";
}

const Crd = z.object({
  spec: z.object({
    scope: z.string(),
    names: z.object({
      kind: z.string(),
      singular: z.optional(z.string()),
      shortNames: z.optional(z.array(z.string())),
      categories: z.optional(z.array(z.string())),
    }),
    versions: z.array(
      z.object({
        name: z.string(),
        additionalPrinterColumns: z.optional(
          z.array(
            z.object({
              name: z.string(),
              type: z.string(),
              format: z.optional(z.string()),
              description: z.optional(z.string()),
              priority: z.optional(z.number()),
              jsonPath: z.string(),
            }),
          ),
        ),
      }),
    ),
  }),
});

/** The path of a CRD on the API server, by the resource's plural and group. */
export function crdPath(plural: string, group: string): string {
  return `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(`${plural}.${group}`)}`;
}

/** The description of `version` of the resource a CRD defines, or undefined when the body is not such a CRD. */
export function describeFromCrd(body: unknown, version: string): ResourceDescription | undefined {
  const parsed = Crd.safeParse(body);
  if (!parsed.success) return undefined;
  const { names, scope, versions } = parsed.data.spec;
  const served = versions.find((v) => v.name === version);
  if (!served) return undefined;
  return {
    kind: names.kind,
    namespaced: scope === "Namespaced",
    singular: names.singular || names.kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    printerColumns: (served.additionalPrinterColumns ?? []).map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? "",
      description: c.description ?? "",
      priority: c.priority ?? 0,
      jsonPath: c.jsonPath,
    })),
    source: "crd",
  };
}

/** What a cached object tells: kind and scope only. */
export function describeFromObject(sample: { kind: string; namespaced: boolean }): ResourceDescription {
  return { ...sample, singular: sample.kind.toLowerCase(), shortNames: [], categories: [], printerColumns: [], source: "object" };
}
