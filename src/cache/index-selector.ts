/**
 * Which configured index answers a field selector (issue 30 item 3, review G6): the watch cache
 * serves `spec.nodeName=n1` from its pods index, so a list of one node's pods (k9s' node view,
 * `kubectl describe node`) reads that node's pods, not every pod.
 *
 * Guarantees: an index is chosen only when every object the selector matches has an entry for the
 * asked value, so reading the index's hits and then applying the whole selector (and the label
 * selector, the namespace) gives exactly a scan's answer:
 * - equality only (`=`, `==`, which parses as `=`): `!=` matches objects of every other value, or
 *   none, which no single entry holds — it stays a scan;
 * - a non-empty value: an absent field selects as "", and an absent field has no entry;
 * - not a field some built-in derives from its typed object (`spec.hostNetwork` absent selects as
 *   "false"; kube/field-selector.ts SELECTABLE_FIELDS): the index holds raw values.
 * The index's values are the field's scalar as text, the selector's value is compared with the same
 * text (kube/field-selector.ts fieldValue), so a string, number or boolean field agrees.
 */
import { type FieldSelector, isDerivedField } from "../kube/selectors.ts";
import type { Indexer } from "./indexer.ts";

/** An index and the value to read it at. */
export interface IndexLookup {
  name: string;
  value: string;
}

/** The index that answers `fields`, and the value to read, or undefined when the selector needs a scan. */
export function indexLookup(indexer: Pick<Indexer, "indexOfPath">, fields: FieldSelector | undefined): IndexLookup | undefined {
  for (const { path, operator, value } of fields?.requirements ?? []) {
    if (operator !== "=" || value === "" || isDerivedField(path)) continue;
    const name = indexer.indexOfPath(path);
    if (name !== undefined) return { name, value };
  }
  return undefined;
}
