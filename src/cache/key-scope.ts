/**
 * What a watcher's namespace and its `metadata.namespace=` / `metadata.name=` field selectors say
 * about a log event's key (`namespace/name`, or `name` when cluster-scoped), so that events they
 * exclude are dropped without parsing their bodies (review F12: `kubectl get pod x -w` and `kubectl
 * wait` send `metadata.name=x`, and a namespaced watch sees every namespace's events otherwise).
 * Sound because an object's namespace and name never change, and a name holds no '/'. The full
 * selectors are still applied to what passes. Where both are fixed, one key is all there is to read
 * (`exactKey`): a list looks it up instead of scanning.
 */
import type { FieldSelector } from "../kube/selectors.ts";

/** A test of keys, or undefined when neither the namespace nor the name is fixed. */
export function keyScope(namespace: string | undefined, fields: FieldSelector | undefined): ((key: string) => boolean) | undefined {
  const { ns, name } = fixedParts(namespace, fields);
  if (ns === undefined && name === undefined) return undefined;
  return (key) => {
    const slash = key.indexOf("/");
    if (ns !== undefined && (slash === -1 ? "" : key.slice(0, slash)) !== ns) return false;
    return name === undefined || key.slice(slash + 1) === name;
  };
}

/**
 * The one key of a namespaced object that a namespace and a `metadata.name=` selector admit, or
 * undefined when either is open. (A cluster-scoped object's key is its name, but an open namespace
 * admits `name` in every namespace as well, so only namespaced lookups are exact.)
 */
export function exactKey(namespace: string | undefined, fields: FieldSelector | undefined): string | undefined {
  const { ns, name } = fixedParts(namespace, fields);
  return ns !== undefined && ns !== "" && name !== undefined ? `${ns}/${name}` : undefined;
}

function fixedParts(namespace: string | undefined, fields: FieldSelector | undefined): { ns?: string; name?: string } {
  const fixed = (path: string) => fields?.requirements.find((r) => r.path === path && r.operator === "=")?.value;
  const ns = namespace ?? fixed("metadata.namespace");
  const name = fixed("metadata.name");
  return { ...(ns === undefined ? {} : { ns }), ...(name === undefined ? {} : { name }) };
}
