/**
 * networking.k8s.io/v1 and discovery.k8s.io/v1 printers (KK printers.go 1.32 printIngress,
 * printIngressClass, printNetworkPolicy, printEndpointSlice):
 *   Ingress        Name Class Hosts Address Ports Age
 *   IngressClass   Name Controller Parameters Age
 *   NetworkPolicy  Name Pod-Selector Age
 *   EndpointSlice  Name AddressType Ports Endpoints Age
 * HOSTS lists the first three non-empty rule hosts (`*` when none) then ` + N more...` counted over
 * all rules; PORTS is "80", or "80, 443" with TLS. Slice PORTS and ENDPOINTS show three entries
 * then ` + N more...`, `<unset>` when empty; a port without number shows its name, else `*`.
 */
import { ageCell, formatLabelSelector, listWithMore, loadBalancerIngress, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, record, records, strings, text } from "./json.ts";
import { nameAgePrinter } from "./name-age-printer.ts";
import { cellPrinter, type Printer } from "./printer.ts";

const MAX_LISTED = 3;

/** formatHosts: collection stops at three hosts; the "more" count is over all rules. */
function hostsCell(rules: Record<string, unknown>[]): string {
  const hosts: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (hosts.length === MAX_LISTED) more = true;
    if (!more && text(rule.host) !== "") hosts.push(text(rule.host));
  }
  if (hosts.length === 0) return "*";
  return more ? `${hosts.join(",")} + ${rules.length - MAX_LISTED} more...` : hosts.join(",");
}

const INGRESS_COLUMNS = [
  column("Class", "string", "The name of the IngressClass resource that should be used for additional configuration"),
  column("Hosts", "string", "Hosts that incoming requests are matched against before the ingress rule"),
  column("Address", "string", "Address is a list containing ingress points for the load-balancer"),
  column("Ports", "string", "Ports of TLS configurations that open"),
];

export const INGRESS_PRINTER: Printer = nameAgePrinter(INGRESS_COLUMNS, [], (ingress) => {
  const spec = at(ingress, "spec");
  const className = typeof spec.ingressClassName === "string" ? spec.ingressClassName : "<none>";
  const ports = records(spec.tls).length > 0 ? "80, 443" : "80";
  return { own: [className, hostsCell(records(spec.rules)), loadBalancerIngress(at(ingress, "status", "loadBalancer")), ports] };
});

export const INGRESS_CLASS_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Controller", "string", "Controller that is responsible for handling this class"),
    column("Parameters", "string", "A reference to a resource with additional parameters"),
    AGE_COLUMN,
  ],
  (ingressClass, now) => {
    const spec = at(ingressClass, "spec");
    const parameters = record(spec.parameters);
    let parametersCell = "<none>";
    if (parameters) {
      const kind = typeof parameters.apiGroup === "string" ? `${text(parameters.kind)}.${parameters.apiGroup}` : text(parameters.kind);
      parametersCell = `${kind}/${text(parameters.name)}`;
    }
    return [nameCell(ingressClass), text(spec.controller), parametersCell, ageCell(ingressClass, now)];
  },
);

export const NETWORK_POLICY_PRINTER: Printer = cellPrinter([NAME_COLUMN, fieldColumn("Pod-Selector", "string", "extensionsv1beta1.NetworkPolicySpec.podSelector"), AGE_COLUMN], (policy, now) => [
  nameCell(policy),
  // podSelector is a value, not a pointer: absent is the empty selector.
  formatLabelSelector(at(policy, "spec").podSelector ?? {}),
  ageCell(policy, now),
]);

/** listWithMoreString: `<unset>` for an empty list. */
function sliceListCell(items: string[]): string {
  return items.length === 0 ? "<unset>" : listWithMore(items, MAX_LISTED);
}

export const ENDPOINT_SLICE_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("AddressType", "string", "discoveryv1beta1.EndpointSlice.addressType"),
    fieldColumn("Ports", "string", "discoveryv1beta1.EndpointSlice.ports"),
    fieldColumn("Endpoints", "string", "discoveryv1beta1.EndpointSlice.endpoints"),
    AGE_COLUMN,
  ],
  (slice, now) => {
    const ports = records(slice.ports).map((port) => (typeof port.port === "number" ? String(port.port) : typeof port.name === "string" ? port.name : "*"));
    const addresses = records(slice.endpoints).flatMap((endpoint) => strings(endpoint.addresses));
    return [nameCell(slice), text(slice.addressType), sliceListCell(ports), sliceListCell(addresses), ageCell(slice, now)];
  },
);
