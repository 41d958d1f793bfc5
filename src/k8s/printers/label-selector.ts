/**
 * metav1.LabelSelectorAsSelector(...).String(): the text of a LabelSelector as the printers show
 * it. Validation follows apimachinery (qualified-name keys, label values, operator arity); an
 * invalid selector gives "<invalid>" so callers can print their own error marker.
 */
import { record, records, text } from "./json.ts";

const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** validation.IsQualifiedName: `[prefix/]name`, prefix a DNS-1123 subdomain (≤253), name ≤63. */
function isQualifiedName(key: string): boolean {
  const parts = key.split("/");
  let name: string;
  if (parts.length === 1) {
    name = parts[0] ?? "";
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? "";
    name = parts[1] ?? "";
    if (prefix === "" || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) return false;
  } else {
    return false;
  }
  return name !== "" && name.length <= 63 && QUALIFIED_NAME_PART.test(name);
}

function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

interface SelectorRequirement {
  key: string;
  text: string;
}

/**
 * The selector text the Deployment printer shows: requirements sorted by key (stable: matchLabels
 * before matchExpressions on a tie), `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, values
 * sorted, joined by ",". An absent or empty selector gives "", an invalid one "<invalid>".
 */
export function labelSelectorString(selector: unknown): string {
  const sel = record(selector);
  if (!sel) return "";
  const matchLabels = record(sel.matchLabels) ?? {};
  const matchExpressions = records(sel.matchExpressions);
  const requirements: SelectorRequirement[] = [];
  for (const [key, value] of Object.entries(matchLabels)) {
    const v = text(value);
    if (!isQualifiedName(key) || !isLabelValue(v)) return "<invalid>";
    requirements.push({ key, text: `${key}=${v}` });
  }
  for (const expression of matchExpressions) {
    const key = text(expression.key);
    const values = Array.isArray(expression.values) ? expression.values.map(text) : [];
    if (!isQualifiedName(key) || !values.every(isLabelValue)) return "<invalid>";
    switch (expression.operator) {
      case "In":
      case "NotIn": {
        if (values.length === 0) return "<invalid>";
        const op = expression.operator === "In" ? "in" : "notin";
        requirements.push({ key, text: `${key} ${op} (${[...values].sort().join(",")})` });
        break;
      }
      case "Exists":
      case "DoesNotExist":
        if (values.length !== 0) return "<invalid>";
        requirements.push({ key, text: expression.operator === "Exists" ? key : `!${key}` });
        break;
      default:
        return "<invalid>";
    }
  }
  return requirements
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((r) => r.text)
    .join(",");
}
