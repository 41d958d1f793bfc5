/**
 * What a watcher's namespace and its `metadata.namespace=` / `metadata.name=` field selectors say
 * about a log event's key (`namespace/name`, or `name` when cluster-scoped), so that events they
 * exclude are dropped without parsing their bodies (review F12: `kubectl get pod x -w` and `kubectl
 * wait` send `metadata.name=x`, and a namespaced watch sees every namespace's events otherwise).
 * Sound because an object's namespace and name never change, and a name holds no '/'. The full
 * selectors are still applied to what passes.
 */
import type { FieldSelector } from "../kube/selectors.ts";

/** A test of keys, or undefined when neither the namespace nor the name is fixed. */
export function keyScope(namespace: string | undefined, fields: FieldSelector | undefined): ((key: string) => boolean) | undefined {
  const fixed = (path: string) => fields?.requirements.find((r) => r.path === path && r.operator === "=")?.value;
  const ns = namespace ?? fixed("metadata.namespace");
  const name = fixed("metadata.name");
  if (ns === undefined && name === undefined) return undefined;
  return (key) => {
    const slash = key.indexOf("/");
    if (ns !== undefined && (slash === -1 ? "" : key.slice(0, slash)) !== ns) return false;
    return name === undefined || key.slice(slash + 1) === name;
  };
}
