/**
 * The CustomResourceDefinition of each custom resource the fake serves, as kube-apiserver answers
 * `GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/{plural}.{group}`: names, scope and
 * the served version with its additionalPrinterColumns (the fields `/k8s` discovery and Table
 * output read). Only get is served: the fake's CRDs are fixed, like its resource table.
 */
import { RESOURCES, type ResourceDef } from "./resources.ts";

/** additionalPrinterColumns per custom resource, as its CRD would declare them. */
const PRINTER_COLUMNS: Record<string, object[]> = {
  "widgets.example.com": [
    { name: "Color", type: "string", description: "The widget's color", jsonPath: ".spec.color" },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
};

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
          ...(PRINTER_COLUMNS[name] ? { additionalPrinterColumns: PRINTER_COLUMNS[name] } : {}),
        },
      ],
    },
    status: { acceptedNames: { plural: def.name, kind: def.kind }, storedVersions: [def.version] },
  };
}
