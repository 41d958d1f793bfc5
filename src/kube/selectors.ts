/**
 * Kubernetes label and field selectors: parsing (with the apiserver's grammar and validation) and
 * matching. The public entry: label-selector.ts and field-selector.ts hold each kind's grammar and
 * rules. Pure and synchronous (they import only the error types) so the same code runs in workerd
 * (the informer's client-side checks) and in the Node fake API server (server-side filtering).
 *
 * Guarantees:
 * - `parse*` either returns a selector or throws SelectorError naming the problem and its column.
 * - The empty string (or only whitespace) parses to a selector that matches everything.
 * - Requirements are ANDed.
 * - `*ToString` renders a canonical form that parses back to an equivalent selector.
 */
import type { FieldSelector } from "./field-selector.ts";
import type { LabelSelector } from "./label-selector.ts";

export { SelectorError } from "./selector-error.ts";
export {
  type LabelSelector,
  labelSelectorToString,
  matchesLabels,
  parseLabelSelector,
} from "./label-selector.ts";
export {
  type FieldSelector,
  fieldSelectorToString,
  isDerivedField,
  matchesFields,
  parseFieldSelector,
} from "./field-selector.ts";

/** True when the selector has no requirements and so matches every object. */
export function isEverything(sel: LabelSelector | FieldSelector): boolean {
  return sel.requirements.length === 0;
}
