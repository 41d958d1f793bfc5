/**
 * The CustomResourceDefinition of each custom resource the fake serves, as kube-apiserver answers
 * `GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/{plural}.{group}`: names, scope and
 * the served version with its additionalPrinterColumns (the fields `/k8s` discovery and Table
 * output read). Only get is served: the fake's CRDs are fixed, like its resource table.
 */
import type { CrdColumn } from "./reference/custom-resource.ts";
import { RESOURCES, type ResourceDef } from "./resources.ts";

/** additionalPrinterColumns per custom resource, as its CRD would declare them. */
const PRINTER_COLUMNS: Record<string, CrdColumn[]> = {
  "widgets.example.com": [
    { name: "Color", type: "string", description: "The widget's color", jsonPath: ".spec.color" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
  // A column of each type, wide ones, one without a description, and values of other JSON types
  // under a string column (kubectl-tables-kinds.e2e.test.ts).
  "gadgets.example.com": [
    { name: "Color", type: "string", description: "The gadget's color", jsonPath: ".spec.color" },
    { name: "Size", type: "integer", jsonPath: ".spec.size" },
    { name: "Ratio", type: "number", jsonPath: ".spec.ratio" },
    { name: "Enabled", type: "boolean", jsonPath: ".spec.enabled" },
    { name: "Ready", type: "string", jsonPath: ".status.conditions[0].status" },
    { name: "Seen", type: "date", jsonPath: ".status.lastSeen" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    { name: "App", type: "string", priority: 1, jsonPath: ".metadata.labels['app.kubernetes.io/name']" },
    { name: "Limits", type: "string", priority: 1, jsonPath: ".spec.limits" },
    { name: "Replicas", type: "string", priority: 1, jsonPath: ".spec.size" },
  ],
};

/** The additionalPrinterColumns of a custom resource's served version (none for a built-in). */
export function printerColumnsOf(def: ResourceDef): CrdColumn[] {
  return PRINTER_COLUMNS[`${def.name}.${def.group}`] ?? [];
}

export function crdNamed(name: string): object | undefined {
  const def = RESOURCES.find((r: ResourceDef) => !r.builtIn && `${r.name}.${r.group}` === name);
  if (!def) return undefined;
  return {
    kind: "CustomResourceDefinition",
    apiVersion: "apiextensions.k8s.io/v1",
    metadata: { name, uid: `crd-${name}`, resourceVersion: "1", generation: 1, creationTimestamp: "2025-01-01T00:00:00Z" },
    spec: {
      group: def.group,
      names: { plural: def.name, singular: def.singularName, kind: def.kind, listKind: def.listKind, shortNames: def.shortNames, ...(def.categories.length ? { categories: def.categories } : {}) },
      scope: def.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          ...(printerColumnsOf(def).length ? { additionalPrinterColumns: printerColumnsOf(def) } : {}),
        },
      ],
    },
    status: { acceptedNames: { plural: def.name, kind: def.kind }, storedVersions: [def.version] },
  };
}
