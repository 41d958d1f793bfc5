import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readWatchLine, takeDecodedText } from "../../src/kube/object-text.ts";
import { WatchDecoder } from "../../src/kube/watch-decoder.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const managedFields = [{ manager: "kubelet", fieldsV1: { "f:status": { 'k:{"type":"Ready"}': { ".": {} } } } }];
const pod = (metadata: Record<string, unknown>) => ({ apiVersion: "v1", kind: "Pod", metadata, spec: { nodeName: "n1" }, status: { phase: "Running" } });
const withoutManagedFields = (object: { metadata: Record<string, unknown> }) => {
  const copy = structuredClone(object);
  delete copy.metadata.managedFields;
  return copy;
};

/** Reads `line` and checks the event against JSON.parse of the line, and the kept text against the object. */
function readsAsParsed(line: string, omitManagedFields: boolean) {
  const event = readWatchLine(line, omitManagedFields);
  expect(event).toBeDefined();
  const parsed = JSON.parse(line) as { type: string; object: { metadata: Record<string, unknown> } };
  const expected = omitManagedFields ? withoutManagedFields(parsed.object) : parsed.object;
  expect(event!.type).toBe(parsed.type);
  expect(event!.object).toEqual(expected);
  const text = takeDecodedText(event!.object);
  expect(JSON.parse(text!)).toEqual(expected);
  expect(takeDecodedText(event!.object)).toBeUndefined(); // taken once
  return text!;
}

describe("readWatchLine", () => {
  it("cuts managedFields wherever they sit in metadata, and keeps the rest of the text as received", () => {
    for (const metadata of [
      { name: "a", namespace: "ns", managedFields, resourceVersion: "5" },
      { managedFields, name: "a" },
      { name: "a", managedFields },
      { name: "a" },
      { name: "a", annotations: { note: '"managedFields":[1]', "x\\\"y": "}{][" }, managedFields },
    ]) {
      const line = JSON.stringify({ type: "MODIFIED", object: pod(metadata) });
      const text = readsAsParsed(line, true);
      expect(text).toBe(JSON.stringify(withoutManagedFields(pod(metadata))));
      readsAsParsed(line, false);
    }
  });

  it("reads whitespace between tokens, and managedFields elsewhere than in metadata are kept", () => {
    const line = '{"type":"ADDED","object":{ "kind" : "Pod" , "spec": {"managedFields": [1]}, "metadata" : { "name" : "a" , "managedFields" : [ {"m": "x"} ] , "uid": "u" } } }  \r';
    readsAsParsed(line, true);
    readsAsParsed(line, false);
  });

  it("leaves lines of another form to the whole parse", () => {
    const object = pod({ name: "a", managedFields });
    for (const line of [
      JSON.stringify({ object, type: "ADDED" }), // keys in another order
      JSON.stringify({ type: "BOOKMARK", object }),
      JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410 } }),
      `{"type": "ADDED", "object": ${JSON.stringify(object)}}`, // spaces in the envelope
      `{"type":"ADDED","object":${JSON.stringify(object)},"extra":1}`, // something after the object
      `{"type":"ADDED","object":${JSON.stringify(object)},"object":{"metadata":{"name":"b"}}}`, // duplicate object
      `{"type":"ADDED","object":{"metadata":{"managedFields":[],"name":"a","managedFields":[1]}}}`, // duplicate managedFields
      `{"type":"ADDED","object":[1]}`,
      `{"type":"ADDED","object":{"metadata":{"name":"a"},}}`, // malformed
      `{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[}}}`, // malformed
    ]) {
      expect(readWatchLine(line, true)).toBeUndefined();
    }
  });

  it("reads any object as JSON.parse does (property)", () => {
    const objects = fc.record({
      kind: fc.string(),
      metadata: fc.record(
        { name: fc.string(), managedFields: fc.array(fc.jsonValue(), { maxLength: 3 }), labels: fc.dictionary(fc.string(), fc.string()), extra: fc.jsonValue() },
        { requiredKeys: ["name"] },
      ),
      spec: fc.jsonValue(),
    });
    fc.assert(
      fc.property(objects, fc.constantFrom("ADDED", "MODIFIED", "DELETED"), fc.boolean(), (object, type, omit) => {
        readsAsParsed(JSON.stringify({ type, object }), omit);
      }),
      { numRuns: 300 },
    );
  });

  it("the decoder reads plain lines this way and refuses malformed ones as before", () => {
    const decoder = new WatchDecoder({ omitManagedFields: true });
    const object = pod({ name: "a", managedFields }) as unknown as KubeObject;
    const [event] = decoder.push(new TextEncoder().encode(`${JSON.stringify({ type: "ADDED", object })}\n`));
    expect(event!.object).toEqual(withoutManagedFields(object as never));
    expect(takeDecodedText(event!.object)).toBe(JSON.stringify(withoutManagedFields(object as never)));
    expect(() => decoder.push(new TextEncoder().encode('{"type":"ADDED","object":{"metadata":{"name":"a"},}}\n'))).toThrow(/not JSON/);
  });
});
