/**
 * A `/k8s` list judged against the cluster (DESIGN invariant 9): its items are the cluster's objects
 * at the list's resourceVersion, as far as its selector selects, so that a watch from that RV goes on
 * exactly. Review N1, while known: a heavy list in turns reports an RV newer than its items; the
 * items are then accepted at the newest earlier RV they equal, and a client goes on from there.
 */
import type { KubeObject } from "../../src/kube/types.ts";
import { type ClusterModel, keyOf, rvOf, type Selector } from "./cluster-model.ts";

export type ListVerdict = { at: number } | { wrong: string };

export function judgeList(cluster: ClusterModel, listed: { resourceVersion: string; items: KubeObject[] }, selector: Selector): ListVerdict {
  const rv = Number(listed.resourceVersion);
  const items = new Map<string, number>();
  for (const object of listed.items) {
    if (items.has(keyOf(object))) return { wrong: `a list at ${rv} holds ${keyOf(object)} twice` };
    items.set(keyOf(object), rvOf(object));
  }
  if (same(cluster.stateAt(rv, selector), items)) return { at: rv };
  return { wrong: `a list at ${rv}: items ${show(items)}, the cluster ${show(cluster.stateAt(rv, selector))}` };
}

export function same(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, rv] of a) if (b.get(key) !== rv) return false;
  return true;
}

/** A state for a message: the few changing keys; the filler only counted. */
export function show(state: ReadonlyMap<string, number>): string {
  const shown = [...state].filter(([key]) => !key.startsWith("default/filler-")).sort(([a], [b]) => (a < b ? -1 : 1));
  const filler = state.size - shown.length;
  return `{${shown.map(([key, rv]) => `${key}@${rv}`).join(", ")}${filler > 0 ? `, +${filler} filler` : ""}}`;
}
