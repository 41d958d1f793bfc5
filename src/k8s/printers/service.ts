/**
 * core/v1 Service and Endpoints printers (KK printers.go 1.32 printService, printEndpoints):
 *   Service    Name Type Cluster-IP External-IP Port(s) Age | wide: Selector
 *   Endpoints  Name Endpoints Age
 * Printed as the server does, always wide, so a LoadBalancer's ingress list is never clipped.
 * PORT(S) is `port[:nodePort]/protocol` joined by ",", `<none>` without ports. ENDPOINTS lists
 * `ip:port` per address and port (a bare IP for a subset without ports), the first three then
 * ` + N more...`, `<none>` without subsets.
 */
import { ageCell, formatLabels, listWithMore, loadBalancerIngress, nameCell } from "./cells.ts";
import { AGE_COLUMN, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, int, records, strings, text, type JsonRecord } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

/** getServiceExternalIP (wide). */
function externalIpCell(spec: JsonRecord, status: JsonRecord): string {
  const externalIPs = strings(spec.externalIPs);
  switch (spec.type) {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length > 0 ? externalIPs.join(",") : "<none>";
    case "LoadBalancer": {
      const ingress = loadBalancerIngress(at(status, "loadBalancer"));
      if (externalIPs.length > 0) return [...(ingress === "" ? [] : ingress.split(",")), ...externalIPs].join(",");
      return ingress === "" ? "<pending>" : ingress;
    }
    case "ExternalName":
      return text(spec.externalName);
    default:
      return "<unknown>";
  }
}

/** makePortString; the protocol defaults to TCP (core/v1 SetDefaults_ServicePort). */
function portsCell(spec: JsonRecord): string {
  const ports = records(spec.ports).map((port) => {
    const protocol = text(port.protocol) || "TCP";
    return int(port.nodePort) > 0 ? `${int(port.port)}:${int(port.nodePort)}/${protocol}` : `${int(port.port)}/${protocol}`;
  });
  return ports.length === 0 ? "<none>" : ports.join(",");
}

export const SERVICE_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("Type", "string", "apiv1.ServiceSpec.type"),
    fieldColumn("Cluster-IP", "string", "apiv1.ServiceSpec.clusterIP"),
    fieldColumn("External-IP", "string", "apiv1.ServiceSpec.externalIPs"),
    fieldColumn("Port(s)", "string", "apiv1.ServiceSpec.ports"),
    AGE_COLUMN,
    fieldColumn("Selector", "string", "apiv1.ServiceSpec.selector", 1),
  ],
  (service, now) => {
    const spec = at(service, "spec");
    // The internal type has only clusterIPs; core/v1 conversion fills it from clusterIP.
    const clusterIP = strings(spec.clusterIPs)[0] ?? text(spec.clusterIP);
    return [
      nameCell(service),
      text(spec.type),
      clusterIP || "<none>",
      externalIpCell(spec, at(service, "status")),
      portsCell(spec),
      ageCell(service, now),
      formatLabels(spec.selector),
    ];
  },
);

/** net.JoinHostPort: brackets around an IPv6 address. */
function joinHostPort(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** formatEndpoints(endpoints, nil): every port of every subset times its addresses. */
function endpointsCell(subsets: JsonRecord[]): string {
  if (subsets.length === 0) return "<none>";
  const all: string[] = [];
  for (const subset of subsets) {
    const ips = records(subset.addresses).map((a) => text(a.ip));
    const ports = records(subset.ports);
    // A headless service's subset may have no ports: its addresses print bare.
    if (ports.length === 0) all.push(...ips);
    for (const port of ports) all.push(...ips.map((ip) => joinHostPort(ip, int(port.port))));
  }
  return listWithMore(all, 3);
}

export const ENDPOINTS_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Endpoints", "string", "apiv1.Endpoints.subsets"), AGE_COLUMN], (endpoints, now) => [
  nameCell(endpoints),
  endpointsCell(records(endpoints.subsets)),
  ageCell(endpoints, now),
]);
