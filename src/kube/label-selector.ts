/**
 * Kubernetes label selectors (apimachinery labels.Parse, labels.Requirement.Matches); selectors.ts
 * states what every selector guarantees.
 *
 * Guarantees:
 * - Parsing is apimachinery's: `x in ()` is `x in ("")`, `in` and `notin` are ordinary keys where a
 *   key stands, `>`/`<` bounds are label values that fit an int64; keys are qualified names and
 *   values label values, checked as the apiserver checks them.
 * - `!=`/`notin` match objects WITHOUT the key; `>`/`<` match only a label that holds an int64.
 */
import { SelectorError } from "./selector-error.ts";

/** Label operators; `=` also covers `==` (they mean the same). `gt`/`lt` are the apiserver's `>`/`<`. */
export type LabelOperator = "exists" | "!" | "=" | "!=" | "in" | "notin" | "gt" | "lt";

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** One value for `=`/`!=`/`gt`/`lt`, one or more for `in`/`notin`, none for `exists`/`!`. */
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
}

// Characters that end an identifier in the label lexer, as in apimachinery's labels lexer.
const SPECIAL = new Set(["=", "!", "(", ")", ",", ">", "<"]);
// labels.isWhitespace: only these four; any other character (a vertical tab, NBSP) belongs to a word.
const WHITESPACE = /[ \t\r\n]/;

type TokenType = "id" | "!" | "=" | "==" | "!=" | "(" | ")" | "," | ">" | "<" | "in" | "notin" | "end";

interface Token {
  type: TokenType;
  text: string;
  /** 1-based column of the token's first character. */
  column: number;
}

function lexLabels(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (WHITESPACE.test(ch)) {
      i++;
      continue;
    }
    const column = i + 1;
    const two = text.slice(i, i + 2);
    if (two === "==" || two === "!=") {
      tokens.push({ type: two, text: two, column });
      i += 2;
      continue;
    }
    if (SPECIAL.has(ch)) {
      tokens.push({ type: ch as TokenType, text: ch, column });
      i++;
      continue;
    }
    let end = i;
    while (end < text.length && !SPECIAL.has(text[end]!) && !WHITESPACE.test(text[end]!)) end++;
    const word = text.slice(i, end);
    // Lexed as keywords; the parser reads them as identifiers where a key or value stands
    // (labels.Parser.lookahead(Values)), as operators only right after a key.
    tokens.push({ type: word === "in" || word === "notin" ? word : "id", text: word, column });
    i = end;
  }
  tokens.push({ type: "end", text: "", column: text.length + 1 });
  return tokens;
}

function describe(token: Token): string {
  return token.type === "end" ? "end of input" : `'${token.text}'`;
}

/** Parses a label selector such as `app=web,tier in (fe,be),!canary`. */
export function parseLabelSelector(text: string): LabelSelector {
  const tokens = lexLabels(text);
  let pos = 0;
  const peek = (): Token => tokens[pos]!;
  const next = (): Token => tokens[pos++]!;
  function fail(token: Token, what: string): never {
    throw new SelectorError(`label selector "${text}": ${what} at column ${token.column}, found ${describe(token)}`);
  }
  // Where a key or value stands the keywords are ordinary words (`in=x`, `tier=in`, `x in (notin)`).
  const isWord = (t: Token): boolean => t.type === "id" || t.type === "in" || t.type === "notin";

  const requirements: LabelRequirement[] = [];
  if (peek().type === "end") return { requirements };

  for (;;) {
    let requirement: LabelRequirement;
    const first = next();
    if (first.type === "!") {
      const key = next();
      if (!isWord(key)) fail(key, "expected a label key after '!'");
      validateLabelKey(text, key);
      requirement = { key: key.text, operator: "!", values: [] };
    } else {
      if (!isWord(first)) fail(first, "expected a label key or '!'");
      validateLabelKey(text, first);
      const op = peek();
      switch (op.type) {
        case "end":
        case ",":
          requirement = { key: first.text, operator: "exists", values: [] };
          break;
        case "=":
        case "==":
        case "!=": {
          next();
          const valueToken = peek();
          let value = "";
          // `key=` (end or comma right after) means "equals the empty string", as the apiserver parses it.
          if (valueToken.type !== "end" && valueToken.type !== ",") {
            if (!isWord(valueToken)) fail(valueToken, `expected a value after '${op.text}'`);
            next();
            validateLabelValue(text, valueToken.text, valueToken.column);
            value = valueToken.text;
          }
          requirement = { key: first.text, operator: op.type === "!=" ? "!=" : "=", values: [value] };
          break;
        }
        case ">":
        case "<": {
          next();
          const valueToken = next();
          if (!isWord(valueToken)) fail(valueToken, `expected an integer after '${op.text}'`);
          // NewRequirement: a bound is a label value (so no sign) and parses as an int64.
          validateLabelValue(text, valueToken.text, valueToken.column);
          if (!/^[0-9]+$/.test(valueToken.text)) fail(valueToken, `expected an integer after '${op.text}'`);
          if (parseInt64(valueToken.text) === undefined) {
            throw new SelectorError(
              `label selector "${text}": value '${valueToken.text}' at column ${valueToken.column} is not a 64-bit integer`,
            );
          }
          requirement = { key: first.text, operator: op.type === ">" ? "gt" : "lt", values: [valueToken.text] };
          break;
        }
        case "in":
        case "notin": {
          next();
          const open = next();
          if (open.type !== "(") fail(open, `expected '(' after '${op.text}'`);
          // Entries may be empty (`in (a,)` includes ""), and `in ()` is `in ("")`: labels.parseValues.
          const values: string[] = [];
          for (;;) {
            const t = peek();
            if (isWord(t)) {
              next();
              validateLabelValue(text, t.text, t.column);
              values.push(t.text);
            } else if (t.type === "," || t.type === ")") {
              values.push("");
            } else {
              fail(t, "expected a value, ',' or ')'");
            }
            const sep = next();
            if (sep.type === ")") break;
            if (sep.type !== ",") fail(sep, "expected ',' or ')'");
          }
          requirement = { key: first.text, operator: op.type, values: [...new Set(values)] };
          break;
        }
        default:
          fail(op, "expected an operator (=, ==, !=, in, notin, >, <), ',' or end of input");
      }
    }
    requirements.push(requirement);
    const sep = next();
    if (sep.type === "end") break;
    if (sep.type !== ",") fail(sep, "expected ',' or end of input");
  }
  return { requirements };
}

// Kubernetes qualified name: optional DNS-1123 subdomain prefix + "/" + name (validation.IsQualifiedName).
const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validateLabelKey(text: string, token: Token): void {
  const problem = qualifiedNameProblem(token.text);
  if (problem) throw new SelectorError(`label selector "${text}": invalid key '${token.text}' at column ${token.column}: ${problem}`);
}

function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split("/");
  if (parts.length > 2) return "a key has at most one '/' (prefix/name)";
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return "the prefix before '/' is empty";
    if (prefix.length > 253) return "the prefix must be at most 253 characters";
    if (!DNS_SUBDOMAIN.test(prefix)) return "the prefix must be a lower-case DNS subdomain such as example.com";
  }
  if (name.length === 0) return "the name part is empty";
  if (name.length > 63) return "the name part must be at most 63 characters";
  if (!NAME_PART.test(name)) {
    return "the name part must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric";
  }
  return undefined;
}

function validateLabelValue(text: string, value: string, column: number): void {
  if (value.length > 63) {
    throw new SelectorError(`label selector "${text}": value '${value}' at column ${column} is longer than 63 characters`);
  }
  if (value !== "" && !NAME_PART.test(value)) {
    throw new SelectorError(
      `label selector "${text}": invalid value '${value}' at column ${column}: values must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric`,
    );
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(text, 10, 64): an optionally signed decimal within int64, else undefined. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

/** Whether an object with `labels` satisfies every requirement. */
export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel.requirements) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const value = has ? labels[r.key] : undefined;
    switch (r.operator) {
      case "exists":
        if (!has) return false;
        break;
      case "!":
        if (has) return false;
        break;
      case "=":
      case "in":
        if (!has || !r.values.includes(value!)) return false;
        break;
      case "!=":
      case "notin":
        if (has && r.values.includes(value!)) return false;
        break;
      case "gt":
      case "lt": {
        // The label must hold an int64; anything else does not match (labels.Requirement.Matches).
        const actual = has ? parseInt64(value!) : undefined;
        const bound = parseInt64(r.values[0]!);
        if (actual === undefined || bound === undefined) return false;
        if (r.operator === "gt" ? !(actual > bound) : !(actual < bound)) return false;
        break;
      }
    }
  }
  return true;
}

/** Canonical text: requirements in the order given, `in`/`notin` values sorted. */
export function labelSelectorToString(sel: LabelSelector): string {
  return sel.requirements
    .map((r) => {
      switch (r.operator) {
        case "exists":
          return r.key;
        case "!":
          return `!${r.key}`;
        case "=":
        case "!=":
          return `${r.key}${r.operator}${r.values[0] ?? ""}`;
        case "gt":
          return `${r.key}>${r.values[0]}`;
        case "lt":
          return `${r.key}<${r.values[0]}`;
        case "in":
        case "notin":
          return `${r.key} ${r.operator} (${[...r.values].sort().join(",")})`;
      }
    })
    .join(",");
}
