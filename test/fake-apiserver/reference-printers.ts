/**
 * The fake API server's own Table printers: what kube-apiserver 1.32 prints for the kinds the fake
 * serves, written from the documented behaviour of `kubectl get` (column names, wide columns, cell
 * texts), independently of src/k8s/printers, so that comparing the two means something.
 *
 * A printer returns the whole row as labelled cells; the column definitions are the labels of a
 * row printed from an empty object. Descriptions are left empty (kubectl never shows them).
 * Kinds: ConfigMap, Secret, Namespace, Node, and custom resources without printer columns
 * (Name, Age of type date). Pods and Deployments have no reference printer here: their Table
 * requests are answered with plain JSON, as before.
 */
import type { FakeObject } from "./types.ts";

export type ReferenceCell = string | number | boolean | null;

export interface LabelledCell {
  column: string;
  type: string;
  /** 1 for the columns `kubectl get -o wide` adds. */
  priority: 0 | 1;
  format?: "name";
  value: ReferenceCell;
}

export type ReferencePrinter = (obj: FakeObject, nowMs: number) => LabelledCell[];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form test objects

/** kubectl's short age: 45s, 3m20s, 12m, 5h10m, 20h, 3d4h, 30d, 2y10d, 9y. */
export function shortAge(ms: number): string {
  const s = Math.trunc(ms / 1000);
  if (s < -1) return "<invalid>";
  if (s < 120) return `${Math.max(s, 0)}s`;
  const m = Math.trunc(s / 60);
  const h = Math.trunc(m / 60);
  const d = Math.trunc(h / 24);
  const y = Math.trunc(d / 365);
  const pair = (big: number, bigUnit: string, small: number, smallUnit: string) => (small === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${small}${smallUnit}`);
  if (m < 10) return pair(m, "m", s % 60, "s");
  if (h < 3) return `${m}m`;
  if (h < 8) return pair(h, "h", m % 60, "m");
  if (h < 48) return `${h}h`;
  if (d < 8) return pair(d, "d", h % 24, "h");
  if (d < 730) return `${d}d`;
  if (y < 8) return pair(y, "y", d % 365, "d");
  return `${y}y`;
}

function age(timestamp: unknown, nowMs: number): string {
  return typeof timestamp === "string" && timestamp !== "" ? shortAge(nowMs - Date.parse(timestamp)) : "<unknown>";
}

const str = (column: string, value: string, priority: 0 | 1 = 0): LabelledCell => ({ column, type: "string", priority, value });
const nameOf = (obj: FakeObject): LabelledCell => ({ column: "Name", type: "string", priority: 0, format: "name", value: obj.metadata.name ?? "" });
const ageOf = (obj: FakeObject, nowMs: number): LabelledCell => str("Age", age(obj.metadata.creationTimestamp, nowMs));
const keys = (value: unknown): number => (value && typeof value === "object" ? Object.keys(value).length : 0);

const configMap: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  // The count is an integer in the JSON, though the column says string.
  return [nameOf(obj), { ...str("Data", ""), value: keys(o.data) + keys(o.binaryData) }, ageOf(obj, now)];
};

const secret: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  return [nameOf(obj), str("Type", o.type ?? ""), { ...str("Data", ""), value: keys(o.data) }, ageOf(obj, now)];
};

const namespace: ReferencePrinter = (obj, now) => [nameOf(obj), str("Status", (obj as Json).status?.phase ?? ""), ageOf(obj, now)];

const node: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  const ready = ((o.status?.conditions ?? []) as Json[]).filter((c) => c.type === "Ready").pop();
  let status = ready ? (ready.status === "True" ? "Ready" : "NotReady") : "Unknown";
  if (o.spec?.unschedulable) status += ",SchedulingDisabled";
  const roles = new Set<string>();
  for (const [k, v] of Object.entries((o.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k.startsWith("node-role.kubernetes.io/") && k.length > "node-role.kubernetes.io/".length) roles.add(k.split("/")[1]!);
    if (k === "kubernetes.io/role" && v) roles.add(v);
  }
  const address = (type: string) => ((o.status?.addresses ?? []) as Json[]).find((a) => a.type === type)?.address || "<none>";
  const info = (o.status?.nodeInfo ?? {}) as Json;
  return [
    nameOf(obj),
    str("Status", status),
    str("Roles", roles.size ? [...roles].sort().join(",") : "<none>"),
    ageOf(obj, now),
    str("Version", info.kubeletVersion ?? ""),
    str("Internal-IP", address("InternalIP"), 1),
    str("External-IP", address("ExternalIP"), 1),
    str("OS-Image", info.osImage || "<unknown>", 1),
    str("Kernel-Version", info.kernelVersion || "<unknown>", 1),
    str("Container-Runtime", info.containerRuntimeVersion || "<unknown>", 1),
  ];
};

/** A custom resource whose CRD has no additionalPrinterColumns. */
const customResource: ReferencePrinter = (obj, now) => [nameOf(obj), { ...ageOf(obj, now), type: "date" }];

const BY_KIND: Record<string, ReferencePrinter> = { ConfigMap: configMap, Secret: secret, Namespace: namespace, Node: node };

/** The reference printer of a kind, or undefined when the fake has none (Pod, Deployment). */
export function referencePrinter(kind: string, builtIn: boolean): ReferencePrinter | undefined {
  return builtIn ? BY_KIND[kind] : customResource;
}
