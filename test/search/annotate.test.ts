/**
 * The cluster annotation spliced into an object's JSON text (src/search/annotate.ts): the result
 * parses to the object plus the annotation, whatever the object's shape, and the splice leaves the
 * rest of the text as it was.
 */
import { describe, expect, it } from "vitest";
import { CLUSTER_ANNOTATION, withClusterAnnotation } from "../../src/search/annotate.ts";

const annotated = (object: Record<string, unknown>, cluster = "prod") => {
  const metadata = (object.metadata ?? {}) as { annotations?: Record<string, string> | null };
  return { ...object, metadata: { ...metadata, annotations: { ...metadata.annotations, [CLUSTER_ANNOTATION]: cluster } } };
};

describe("withClusterAnnotation", () => {
  it.each<[string, Record<string, unknown>]>([
    ["annotations beside labels", { apiVersion: "v1", kind: "Pod", metadata: { name: "a", labels: { x: "1" }, annotations: { y: "2" } }, spec: {} }],
    ["no annotations", { kind: "Pod", metadata: { name: "a", namespace: "n" } }],
    ["empty annotations", { metadata: { name: "a", annotations: {} } }],
    ["empty metadata", { metadata: {}, spec: { x: 1 } }],
    ["no metadata at all", { kind: "Pod" }],
    ["null annotations", { metadata: { name: "a", annotations: null } }],
    // A nested metadata before the object's own, and strings that look like members: only the top level counts.
    ["a nested metadata first", { spec: { template: { metadata: { annotations: { t: "1" } } } }, metadata: { name: "a" } }],
    ["quotes and braces in strings", { metadata: { name: "a", labels: { q: 'say "metadata":{}' }, annotations: { "b\\": '"}' } } }],
    ["managedFields before annotations", { metadata: { managedFields: [{ f: { "f:x": {} } }, []], annotations: { z: "" } } }],
    // Our annotation already there: ours wins, once.
    ["the annotation already present", { metadata: { annotations: { [CLUSTER_ANNOTATION]: "elsewhere", k: "v" } } }],
  ])("keeps every member and adds the cluster with %s", (_, object) => {
    const text = withClusterAnnotation(JSON.stringify(object), "prod");
    expect(JSON.parse(text)).toEqual(annotated(object));
    expect(text.split(`"${CLUSTER_ANNOTATION}"`)).toHaveLength(2);
  });

  it("splices without re-encoding: the rest of the text stays byte for byte", () => {
    const text = '{"kind":"Pod", "metadata" : { "name":"a","annotations": {"x":"1.0e0"}}, "spec":{"n":1.50}}';
    expect(withClusterAnnotation(text, "east")).toBe(
      '{"kind":"Pod", "metadata" : { "name":"a","annotations": {"edge-informer/cluster":"east","x":"1.0e0"}}, "spec":{"n":1.50}}',
    );
    expect(withClusterAnnotation('{"metadata":{"name":"a"},"spec":{"n":1.50}}', "east")).toBe(
      '{"metadata":{"annotations":{"edge-informer/cluster":"east"},"name":"a"},"spec":{"n":1.50}}',
    );
  });
});
