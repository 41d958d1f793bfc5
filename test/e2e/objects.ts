/** Comparing Kubernetes objects as two servers return them. */

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name?: string; namespace?: string; resourceVersion?: string; managedFields?: unknown; [field: string]: unknown };
  [field: string]: unknown;
}

export interface KubeList {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: KubeObject[];
}

/** The object without `metadata.managedFields`, which our cache drops by default (transform.dropManagedFields). */
export function withoutManagedFields(object: KubeObject): KubeObject {
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** `namespace/name` (or `name`), as client-go's MetaNamespaceKeyFunc. */
export function keyOf(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : `${name}`;
}

/** key → resourceVersion, sorted by key: the identity of a cache's state. */
export function versions(objects: Iterable<KubeObject>): Record<string, string> {
  const entries = [...objects].map((o): [string, string] => [keyOf(o), o.metadata.resourceVersion ?? ""]);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
