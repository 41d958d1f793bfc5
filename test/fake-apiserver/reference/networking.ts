/**
 * The reference Ingress printer (networking.k8s.io/v1; printers.go 1.32 printIngress):
 *   Name Class Hosts Address Ports Age
 * CLASS is `<none>` without ingressClassName. HOSTS walks the rules: once three hosts are listed it
 * stops listing and says ` + N more...`, N being the rules past the third (hostless ones count);
 * `*` when no rule has a host. ADDRESS is the load balancer's points, unclipped (the server prints
 * wide). PORTS is "80, 443" with any TLS entry, else "80".
 */
import { ageOf, type Json, list, loadBalancerPoints, nameOf, parts, type ReferencePrinter, str } from "./cells.ts";

function hosts(rules: Json[]): string {
  const listed: string[] = [];
  let more = false;
  for (const rule of rules) {
    if (listed.length === 3) more = true;
    if (!more && rule.host) listed.push(rule.host);
  }
  if (listed.length === 0) return "*";
  return more ? `${listed.join(",")} + ${rules.length - 3} more...` : listed.join(",");
}

export const ingress: ReferencePrinter = (obj, now) => {
  const { o, spec } = parts(obj);
  return [
    nameOf(obj),
    str("Class", spec.ingressClassName ?? "<none>"),
    str("Hosts", hosts(list(spec.rules))),
    str("Address", loadBalancerPoints(o.status?.loadBalancer)),
    str("Ports", list(spec.tls).length ? "80, 443" : "80"),
    ageOf(obj, now),
  ];
};
