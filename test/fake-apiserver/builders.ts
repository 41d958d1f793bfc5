/**
 * Small, valid objects for tests: `pod({name, namespace})` and friends. Each carries kind/apiVersion
 * and only the fields given (plus what the type needs to be valid); the server stamps uid,
 * resourceVersion, creationTimestamp and generation. Pure data, usable from Node and workerd.
 */
import type { FakeObject } from "./types.ts";

interface Named {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface NamespacedOptions extends Named {
  /** Default "default". */
  namespace?: string;
}

function meta(o: Named, namespace?: string): FakeObject["metadata"] {
  const m: FakeObject["metadata"] = { name: o.name };
  if (namespace !== undefined) m.namespace = namespace;
  if (o.labels) m.labels = { ...o.labels };
  if (o.annotations) m.annotations = { ...o.annotations };
  return m;
}

export interface PodOptions extends NamespacedOptions {
  nodeName?: string;
  /** Default "Running". */
  phase?: string;
  image?: string;
}

export function pod(o: PodOptions): FakeObject {
  const spec: Record<string, unknown> = { containers: [{ name: "main", image: o.image ?? "nginx:1.27" }] };
  if (o.nodeName !== undefined) spec.nodeName = o.nodeName;
  return { apiVersion: "v1", kind: "Pod", metadata: meta(o, o.namespace ?? "default"), spec, status: { phase: o.phase ?? "Running" } };
}

export function configMap(o: NamespacedOptions & { data?: Record<string, string> }): FakeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: meta(o, o.namespace ?? "default"), data: { ...o.data } };
}

export function namespace(o: Named): FakeObject {
  const labels = { "kubernetes.io/metadata.name": o.name, ...o.labels };
  return { apiVersion: "v1", kind: "Namespace", metadata: meta({ ...o, labels }), spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } };
}

export function node(o: Named & { unschedulable?: boolean }): FakeObject {
  const spec: Record<string, unknown> = {};
  if (o.unschedulable !== undefined) spec.unschedulable = o.unschedulable;
  return { apiVersion: "v1", kind: "Node", metadata: meta(o), spec, status: { conditions: [{ type: "Ready", status: "True" }] } };
}

export function deployment(o: NamespacedOptions & { replicas?: number; image?: string }): FakeObject {
  const selector = o.labels && Object.keys(o.labels).length > 0 ? o.labels : { app: o.name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta({ ...o, labels: selector }, o.namespace ?? "default"),
    spec: {
      replicas: o.replicas ?? 1,
      selector: { matchLabels: { ...selector } },
      template: { metadata: { labels: { ...selector } }, spec: { containers: [{ name: "main", image: o.image ?? "nginx:1.27" }] } },
    },
  };
}

/** The custom resource `widgets.example.com/v1` (namespaced; `spec.color` is a selectable field). */
export function widget(o: NamespacedOptions & { color?: string; size?: number }): FakeObject {
  return {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: meta(o, o.namespace ?? "default"),
    spec: { color: o.color ?? "blue", size: o.size ?? 1 },
  };
}
