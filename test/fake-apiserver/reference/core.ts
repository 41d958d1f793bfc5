/**
 * Reference printers of core/v1 kinds other than Pod (printers.go 1.32 printConfigMap, printSecret,
 * printNamespace, printNode, printService, printEndpoints, printEvent, printPersistentVolumeClaim).
 * Columns per kind, wide ones marked *:
 *   ConfigMap   Name Data Age
 *   Secret      Name Type Data Age
 *   Namespace   Name Status Age
 *   Node        Name Status Roles Age Version Internal-IP* External-IP* OS-Image* Kernel-Version* Container-Runtime*
 *   Service     Name Type Cluster-IP External-IP Port(s) Age Selector*
 *   Endpoints   Name Endpoints Age
 *   Event       "Last Seen" Type Reason Object Subobject* Source* Message "First Seen"* Count* Name*
 *   PVC         Name Status Volume Capacity "Access Modes" StorageClass VolumeAttributesClass Age VolumeMode*
 */
import { ageOf, firstOf, formatLabels, isTime, type Json, keys, list, loadBalancerPoints, nameOf, num, parts, type ReferencePrinter, since, str } from "./cells.ts";

export const configMap: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  return [nameOf(obj), num("Data", keys(o.data) + keys(o.binaryData)), ageOf(obj, now)];
};

/** The internal Secret has `data` only: the v1 conversion writes `stringData` into it. */
export const secret: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  const dataKeys = new Set([...Object.keys(o.data ?? {}), ...Object.keys(o.stringData ?? {})]);
  return [nameOf(obj), str("Type", o.type ?? ""), num("Data", dataKeys.size), ageOf(obj, now)];
};

export const namespace: ReferencePrinter = (obj, now) => [nameOf(obj), str("Status", (obj as Json).status?.phase ?? ""), ageOf(obj, now)];

export const node: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  const ready = list(o.status?.conditions).filter((c) => c.type === "Ready").pop();
  let status = ready ? (ready.status === "True" ? "Ready" : "NotReady") : "Unknown";
  if (o.spec?.unschedulable) status += ",SchedulingDisabled";
  const roles = new Set<string>();
  for (const [k, v] of Object.entries((o.metadata?.labels ?? {}) as Record<string, string>)) {
    if (k.startsWith("node-role.kubernetes.io/") && k.length > "node-role.kubernetes.io/".length) roles.add(k.split("/")[1]!);
    if (k === "kubernetes.io/role" && v) roles.add(v);
  }
  const address = (type: string) => list(o.status?.addresses).find((a) => a.type === type)?.address || "<none>";
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

/** getServiceExternalIP, wide. */
function externalIp(spec: Json, status: Json | undefined): string {
  const externalIPs: string[] = spec.externalIPs ?? [];
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length ? externalIPs.join(",") : "<none>";
    case "LoadBalancer": {
      const points = loadBalancerPoints(status?.loadBalancer);
      if (externalIPs.length) return [...(points ? points.split(",") : []), ...externalIPs].join(",");
      return points || "<pending>";
    }
    case "ExternalName":
      return spec.externalName ?? "";
    default:
      return "<unknown>";
  }
}

export const service: ReferencePrinter = (obj, now) => {
  const { o, spec } = parts(obj);
  const ports = list(spec.ports).map((p) => (p.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? ""}` : `${p.port}/${p.protocol ?? ""}`));
  return [
    nameOf(obj),
    str("Type", spec.type ?? ""),
    str("Cluster-IP", (spec.clusterIPs ?? [])[0] ?? "<none>"),
    str("External-IP", externalIp(spec, o.status)),
    str("Port(s)", ports.length ? ports.join(",") : "<none>"),
    ageOf(obj, now),
    str("Selector", formatLabels(spec.selector), 1),
  ];
};

/** formatEndpoints(endpoints, nil): host:port per port and address (bare addresses for a subset without ports). */
function endpointList(subsets: Json[]): string {
  if (subsets.length === 0) return "<none>";
  const all: string[] = [];
  for (const subset of subsets) {
    const ips = list(subset.addresses).map((a) => a.ip as string);
    const ports = list(subset.ports);
    if (ports.length === 0) all.push(...ips);
    for (const port of ports) all.push(...ips.map((ip) => (ip.includes(":") ? `[${ip}]:${port.port}` : `${ip}:${port.port}`)));
  }
  return firstOf(all, 3);
}

export const endpoints: ReferencePrinter = (obj, now) => [nameOf(obj), str("Endpoints", endpointList(list((obj as Json).subsets))), ageOf(obj, now)];

/** printEvent (wide) of a core/v1 Event; `reportingComponent` is the JSON name of the internal ReportingController. */
export const event: ReferencePrinter = (obj, now) => {
  const o = obj as Json;
  const firstSeen = isTime(o.firstTimestamp) ? since(o.firstTimestamp, now) : since(o.eventTime, now);
  let lastSeen = isTime(o.lastTimestamp) ? since(o.lastTimestamp, now) : firstSeen;
  let count: number = o.count ?? 0;
  if (o.series) {
    lastSeen = since(o.series.lastObservedTime, now);
    count = o.series.count ?? 0;
  } else if (count === 0) {
    count = 1;
  }
  const involved = (o.involvedObject ?? {}) as Json;
  const kind = String(involved.kind ?? "").toLowerCase();
  const component = o.source?.component || o.reportingComponent || "";
  const host = o.source?.host || o.reportingInstance || "";
  return [
    str("Last Seen", lastSeen),
    str("Type", o.type ?? ""),
    str("Reason", o.reason ?? ""),
    str("Object", involved.name ? `${kind}/${involved.name}` : kind),
    str("Subobject", involved.fieldPath ?? "", 1),
    str("Source", host ? `${component}, ${host}` : component, 1),
    str("Message", String(o.message ?? "").trim()),
    str("First Seen", firstSeen, 1),
    num("Count", count, "string", 1),
    nameOf(obj, 1),
  ];
};

const ACCESS_MODES: [string, string][] = [
  ["ReadWriteOnce", "RWO"],
  ["ReadOnlyMany", "ROX"],
  ["ReadWriteMany", "RWX"],
  ["ReadWriteOncePod", "RWOP"],
];

/** helper.GetAccessModesAsString: the abbreviations in a fixed order, each once. */
const accessModes = (modes: unknown): string =>
  ACCESS_MODES.filter(([mode]) => ((modes ?? []) as string[]).includes(mode))
    .map(([, short]) => short)
    .join(",");

export const persistentVolumeClaim: ReferencePrinter = (obj, now) => {
  const { o, spec } = parts(obj);
  const bound = Boolean(spec.volumeName);
  // GetPersistentVolumeClaimClass: the beta annotation, when present, wins over the field.
  const annotations = (obj.metadata.annotations ?? {}) as Record<string, string>;
  const storageClass = "volume.beta.kubernetes.io/storage-class" in annotations ? annotations["volume.beta.kubernetes.io/storage-class"]! : (spec.storageClassName ?? "");
  return [
    nameOf(obj),
    str("Status", obj.metadata.deletionTimestamp ? "Terminating" : (o.status?.phase ?? "")),
    str("Volume", spec.volumeName ?? ""),
    str("Capacity", bound ? (o.status?.capacity?.storage ?? "0") : ""),
    str("Access Modes", bound ? accessModes(o.status?.accessModes) : ""),
    str("StorageClass", storageClass),
    // Pointers in Go: absent is <unset>.
    str("VolumeAttributesClass", spec.volumeAttributesClassName ?? "<unset>"),
    ageOf(obj, now),
    str("VolumeMode", spec.volumeMode ?? "<unset>", 1),
  ];
};
