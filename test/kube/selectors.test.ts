// Label and field selectors: the apiserver's grammar, its matching rules, and clear errors for bad input.
import { describe, expect, it } from "vitest";
import {
  fieldSelectorToString,
  isEverything,
  labelSelectorToString,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from "../../src/kube/selectors.ts";
import { fieldValue } from "../../src/kube/field-selector.ts";

const web = { app: "web", tier: "frontend", "example.com/owner": "team-a", replicas: "3" };

describe("label selectors", () => {
  it.each([
    ["the empty selector", "", true],
    ["a blank selector", "   ", true],
    ["key=value on an equal value", "app=web", true],
    ["key=value on a different value", "app=db", false],
    ["key==value on an equal value", "app==web", true],
    ["key!=value on a different value", "app!=db", true],
    ["key!=value on an equal value", "app!=web", false],
    ["key!=value when the key is absent", "missing!=x", true],
    ["an existence check on a present key", "app", true],
    ["an existence check on an absent key", "missing", false],
    ["a non-existence check on an absent key", "!missing", true],
    ["a non-existence check on a present key", "!app", false],
    ["in with the value in the set", "tier in (frontend,backend)", true],
    ["in with the value outside the set", "tier in (backend)", false],
    ["in when the key is absent", "missing in (a)", false],
    ["notin with the value outside the set", "tier notin (backend,cache)", true],
    ["notin with the value in the set", "tier notin (frontend)", false],
    ["notin when the key is absent", "missing notin (a)", true],
    ["a prefixed key", "example.com/owner=team-a", true],
    ["an AND of requirements that all hold", "app=web,tier in (frontend),!canary", true],
    ["an AND with one failing requirement", "app=web,tier=backend", false],
    ["whitespace around tokens", "  app = web ,  tier  in ( frontend , backend )  ", true],
    ["key= on an absent key", "missing=", false],
    ["greater-than on an integer label", "replicas>2", true],
    ["less-than on an integer label", "replicas<3", false],
    ["greater-than on a non-integer label", "app>1", false],
  ])("matches %s: %j → %s", (_name, text, expected) => {
    expect(matchesLabels(parseLabelSelector(text), web)).toBe(expected);
  });

  it.each([
    ["app=web", false],
    ["!app", true],
    ["app!=web", true],
    ["app notin (web)", true],
    ["app", false],
    ["", true],
  ])("treats missing labels as an empty label set for %j → %s", (text, expected) => {
    expect(matchesLabels(parseLabelSelector(text), undefined)).toBe(expected);
  });

  it("parses key= as equality with the empty string", () => {
    const sel = parseLabelSelector("tier=");
    expect(sel.requirements).toEqual([{ key: "tier", operator: "=", values: [""] }]);
    expect(matchesLabels(sel, { tier: "" })).toBe(true);
    expect(matchesLabels(sel, { tier: "x" })).toBe(false);
  });

  it("accepts empty entries inside a value set", () => {
    const sel = parseLabelSelector("tier in (a,)");
    expect(sel.requirements[0]!.values).toEqual(["a", ""]);
    expect(matchesLabels(sel, { tier: "" })).toBe(true);
  });

  it("treats in and notin as plain values after an operator", () => {
    expect(matchesLabels(parseLabelSelector("mode=in"), { mode: "in" })).toBe(true);
    expect(matchesLabels(parseLabelSelector("mode in (notin)"), { mode: "notin" })).toBe(true);
  });

  // apimachinery labels/selector_test.go TestSetSelectorParser: "x in ()" is In {""}, not an error.
  it.each([
    ["x in ()", "in"],
    ["x notin ( )", "notin"],
  ])("parses an empty value set %j as the set holding the empty string", (text, operator) => {
    const sel = parseLabelSelector(text);
    expect(sel.requirements).toEqual([{ key: "x", operator, values: [""] }]);
    const cases: Record<string, string>[] = [{ x: "" }, { x: "a" }, {}];
    expect(cases.map((labels) => matchesLabels(sel, labels))).toEqual(
      operator === "in" ? [true, false, false] : [false, true, true],
    );
  });

  // The parser reads `in`/`notin` as identifiers wherever a key may stand (lookahead(Values)).
  it.each([
    ["in=x", { in: "x" }, true],
    ["notin=in", { notin: "in" }, true], // selector_test.go TestSelectorMatches
    ["in", { in: "" }, true],
    ["!in", { in: "" }, false],
    ["!notin", {}, true],
    ["app=web,in in (a,b)", { app: "web", in: "b" }, true],
    ["notin notin (in)", { notin: "in" }, false],
  ])("takes %j with a key named in or notin", (text, labels, expected) => {
    expect(matchesLabels(parseLabelSelector(text), labels)).toBe(expected);
  });

  it("matches Gt/Lt only on labels holding a 64-bit integer", () => {
    const sel = parseLabelSelector("n>1");
    expect([{ n: "2" }, { n: "99999999999999999999" }, { n: "-5" }].map((labels) => matchesLabels(sel, labels))).toEqual([
      true,
      false, // strconv.ParseInt fails: no match
      false,
    ]);
  });

  it("knows the everything selector", () => {
    expect(isEverything(parseLabelSelector(""))).toBe(true);
    expect(isEverything(parseLabelSelector("a"))).toBe(false);
  });

  it.each(["app=web", "!canary", "tier in (a,b)", "tier notin (x)", "a,b!=c,d>1,e<2", "example.com/owner=team-a"])(
    "round-trips %j through its canonical string",
    (text) => {
      const sel = parseLabelSelector(text);
      expect(parseLabelSelector(labelSelectorToString(sel))).toEqual(sel);
    },
  );

  it.each([
    ["a dangling comma", "app=web,", /expected a label key or '!' at column 9, found end of input/],
    ["a leading comma", ",app", /expected a label key or '!' at column 1/],
    ["an unclosed set", "tier in (a,b", /expected ',' or '\)' at column 13, found end of input/],
    ["a set without parentheses", "tier in a", /expected '\(' after 'in'/],
    ["values separated by blanks", "tier in (a b)", /expected ',' or '\)' at column 12, found 'b'/],
    ["two keys without a comma", "app web", /expected an operator .* at column 5, found 'web'/],
    ["a bad key character", "ap$p=web", /invalid key 'ap\$p' at column 1/],
    ["a key ending in a dash", "app-=x", /invalid key 'app-'/],
    ["an upper-case prefix", "Example.com/owner=x", /prefix must be a lower-case DNS subdomain/],
    ["an empty prefix", "/owner=x", /prefix before '\/' is empty/],
    ["two slashes in a key", "a/b/c=x", /at most one '\/'/],
    ["a name longer than 63 characters", `${"k".repeat(64)}=x`, /at most 63 characters/],
    ["a bad value", "app=we$b", /invalid value 'we\$b' at column 5/],
    ["a value longer than 63 characters", `app=${"v".repeat(64)}`, /longer than 63 characters/],
    ["a bad value inside a set", "tier in (ok,-bad)", /invalid value '-bad' at column 13/],
    ["a non-integer bound", "replicas>two", /expected an integer after '>'/],
    ["a bare operator", "=web", /expected a label key or '!' at column 1, found '='/],
    ["a doubled negation", "!!app", /expected a label key after '!'/],
    ["an operator after a negation", "!app=web", /expected ',' or end of input at column 5, found '='/],
    // NewRequirement validates a Gt/Lt bound as a label value and as an int64 (strconv.ParseInt).
    ["a negative bound", "replicas>-1", /invalid value '-1'/],
    ["a bound beyond int64", "replicas<9223372036854775808", /not a 64-bit integer/],
    // The lexer's blanks are ' ', '\t', '\r', '\n' only; anything else is part of a word.
    ["a vertical tab after a value", "app=web\v", /invalid value 'web\v'/],
  ])("rejects %s (%j) with a message saying where", (_name, text, message) => {
    expect(() => parseLabelSelector(text)).toThrowError(SelectorError);
    expect(() => parseLabelSelector(text)).toThrowError(message);
  });

  it("names its error class SelectorError", () => {
    try {
      parseLabelSelector("(");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(SelectorError);
      expect((error as Error).name).toBe("SelectorError");
    }
  });
});

describe("field selectors", () => {
  const pod = {
    metadata: { name: "web-1", namespace: "shop" },
    spec: { nodeName: "node-a", hostNetwork: false, priority: 10 },
    status: { phase: "Running" },
  };

  it.each([
    ["the empty selector", "", true],
    ["path=value on an equal value", "metadata.name=web-1", true],
    ["path==value on an equal value", "metadata.namespace==shop", true],
    ["path=value on a different value", "spec.nodeName=node-b", false],
    ["path!=value on a different value", "status.phase!=Pending", true],
    ["path!=value on an equal value", "status.phase!=Running", false],
    ["an AND of terms", "metadata.namespace=shop,spec.nodeName=node-a,status.phase=Running", true],
    ["an AND with one failing term", "metadata.namespace=shop,status.phase=Failed", false],
    ["a missing field compared with the empty string", "spec.schedulerName=", true],
    ["a missing field compared with a value", "spec.schedulerName=default", false],
    ["a missing field with !=", "spec.schedulerName!=default", true],
    ["a path through a missing object", "status.conditions.ready=", true],
    ["a boolean field as text", "spec.hostNetwork=false", true],
    ["a number field as text", "spec.priority=10", true],
    ["empty terms between commas", "metadata.name=web-1,,status.phase=Running", true],
    ["blanks around the path", " metadata.name =web-1", true],
  ])("matches %s: %j → %s", (_name, text, expected) => {
    expect(matchesFields(parseFieldSelector(text), pod)).toBe(expected);
  });

  it.each([
    ["an escaped comma", "metadata.name=a\\,b", "a,b"],
    ["an escaped equals sign", "metadata.name=a\\=b", "a=b"],
    ["an escaped backslash", "metadata.name=a\\\\b", "a\\b"],
    ["all three escapes", "metadata.name=\\\\\\,\\=", "\\,="],
  ])("unescapes %s (%j)", (_name, text, value) => {
    const sel = parseFieldSelector(text);
    expect(sel.requirements).toEqual([{ path: "metadata.name", operator: "=", value }]);
    expect(matchesFields(sel, { metadata: { name: value } })).toBe(true);
  });

  it("does not split on an escaped comma", () => {
    const sel = parseFieldSelector("metadata.name=a\\,b,status.phase=Running");
    expect(sel.requirements.map((r) => r.value)).toEqual(["a,b", "Running"]);
  });

  it.each(["metadata.name=a\\,b\\=c\\\\d", "spec.nodeName!=node-1,status.phase=Running", "metadata.name="])(
    "round-trips %j through its canonical string",
    (text) => {
      const sel = parseFieldSelector(text);
      expect(parseFieldSelector(fieldSelectorToString(sel))).toEqual(sel);
    },
  );

  // The API server matches a field selector against the resource's selectable fields, built from
  // the typed object: a field the JSON omits has its Go zero value (node/strategy.go
  // NodeToSelectableFields: fmt.Sprint(node.Spec.Unschedulable)), and a few fields are derived.
  it.each([
    ["a Node without spec.unschedulable", { apiVersion: "v1", kind: "Node", metadata: { name: "n1" }, spec: {} }, "spec.unschedulable=false", true],
    ["a Node without spec", { apiVersion: "v1", kind: "Node", metadata: { name: "n1" } }, "spec.unschedulable!=true", true],
    ["a Node without spec.unschedulable", { apiVersion: "v1", kind: "Node", metadata: { name: "n1" } }, "spec.unschedulable=", false],
    ["a cordoned Node", { apiVersion: "v1", kind: "Node", metadata: { name: "n1" }, spec: { unschedulable: true } }, "spec.unschedulable=true", true],
    ["a Pod without spec.hostNetwork", { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {} }, "spec.hostNetwork=false", true],
    ["a Job without status.succeeded", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, status: {} }, "status.successful=0", true],
    ["a Job with status.succeeded", { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, status: { succeeded: 3 } }, "status.successful=3", true],
    ["a ReplicaSet without status.replicas", { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "r" } }, "status.replicas=0", true],
    ["an Event's source from reportingController", { apiVersion: "v1", kind: "Event", metadata: { name: "e" }, reportingController: "kubelet" }, "source=kubelet,reportingComponent=kubelet", true],
    ["an Event's source.component first", { apiVersion: "v1", kind: "Event", metadata: { name: "e" }, source: { component: "sched" }, reportingController: "kubelet" }, "source=sched", true],
    // Only those kinds: elsewhere a missing field is "".
    ["a ConfigMap without spec.unschedulable", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, "spec.unschedulable=false", false],
    ["a custom Node kind in another group", { apiVersion: "example.com/v1", kind: "Node", metadata: { name: "c" } }, "spec.unschedulable=false", false],
  ])("matches %s as the API server does: %j", (_name, object, text, expected) => {
    expect(matchesFields(parseFieldSelector(text), object)).toBe(expected);
  });

  it("reads dotted paths as strings", () => {
    expect(fieldValue(pod, "spec.nodeName")).toBe("node-a");
    expect(fieldValue(pod, "spec")).toBe("");
    expect(fieldValue(null, "metadata.name")).toBe("");
  });

  it("knows the everything selector", () => {
    expect(isEverything(parseFieldSelector(" "))).toBe(true);
    expect(isEverything(parseFieldSelector("metadata.name=x"))).toBe(false);
  });

  it.each([
    ["a term without an operator", "metadata.name", /term 'metadata.name' at column 1 has no operator/],
    ["a term without a path", "=x", /has no field path/],
    ["an invalid path", "spec..nodeName=x", /invalid field path 'spec..nodeName'/],
    ["an unknown escape", "metadata.name=a\\nb", /invalid escape sequence '\\n' at column 16/],
    ["a lone trailing backslash", "metadata.name=a\\", /lone '\\' at column 16/],
    ["an unescaped equals sign in the value", "metadata.name=a=b", /unescaped '=' in a value at column 16/],
    ["a second term without an operator", "a=b,c", /term 'c' at column 5 has no operator/],
  ])("rejects %s (%j) with a message saying where", (_name, text, message) => {
    expect(() => parseFieldSelector(text)).toThrowError(SelectorError);
    expect(() => parseFieldSelector(text)).toThrowError(message);
  });
});
