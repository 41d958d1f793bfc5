/**
 * Where the Worker may send requests: the one set of host rules for API servers (clusters) and
 * webhook receivers (issue 17, API.md "Access"). Both kinds of URL are checked when they are
 * accepted (a 400 that changes nothing) and again before every request, so a URL stored before a
 * configuration change is refused, never contacted.
 *
 * Rules, in order:
 * - Loopback hosts (`localhost` and its subdomains, RFC 6761; 127.0.0.0/8; `[::1]`) are always allowed: a deployed Worker cannot
 *   reach them, and local development and the tests use them with the same rules as production.
 * - The Worker's own host names (the request's Host when a URL is accepted, and `ACCESS_HOSTNAMES`)
 *   are refused (review N8): a receiver or API server that is the Worker itself sends its own data
 *   back through it.
 * - Any other IP literal is refused: the allow-lists name hosts, and an address sidesteps them
 *   (a LAN, or the cloud metadata address `169.254.169.254` under `wrangler dev`).
 * - With an allow-list (`CLUSTER_ALLOWED_HOSTS` / `WEBHOOK_ALLOWED_HOSTS`, comma-separated host
 *   suffixes), the host must be one of them or a subdomain of one: `example.com` admits
 *   `example.com` and `a.example.com`, not `badexample.com`.
 * - Unset or empty, egress fails closed in a deployment (review N8: an admin credential could
 *   otherwise make the Worker POST the cache anywhere): no host name is admitted unless
 *   `ALLOW_ANY_EGRESS = "true"` says any is meant. Local development (`ALLOW_UNAUTHENTICATED =
 *   "true"`, which serves loopback Hosts only: auth/principal.ts) admits any host name, as before.
 * Ports and schemes are not this module's business, except `requireHttps`, which both callers use.
 */
import type { Env } from "../env.ts";
import { isLoopbackHostname } from "./loopback.ts";

/** The settings that hold an allow-list, as messages name them. */
export type AllowListSetting = "CLUSTER_ALLOWED_HOSTS" | "WEBHOOK_ALLOWED_HOSTS";

export interface EgressRule {
  setting: AllowListSetting;
  /** The setting's raw value; undefined or blank admits what `unsetAdmitsAny` says. */
  allowedHosts: string | undefined;
  /** Whether an unset allow-list admits any host name (local development, ALLOW_ANY_EGRESS) or none. */
  unsetAdmitsAny: boolean;
  /** The Worker's own host names, lower case: never a destination. */
  ownHosts?: readonly string[];
}

/** The settings the egress rules read. */
export type EgressSettings = Pick<Env, AllowListSetting | "ALLOW_ANY_EGRESS" | "ALLOW_UNAUTHENTICATED" | "ACCESS_HOSTNAMES">;

/**
 * The rule `env` sets for `setting`'s kind of destination. `requestHost`: the host name the
 * request that submits the URL was addressed to (the Worker's own, whatever the settings say).
 */
export function egressRule(env: EgressSettings, setting: AllowListSetting, requestHost?: string): EgressRule {
  const ownHosts = [...parseHostList(env.ACCESS_HOSTNAMES), ...(requestHost === undefined ? [] : [normalisedHost(requestHost)])];
  return {
    setting,
    allowedHosts: env[setting],
    unsetAdmitsAny: env.ALLOW_ANY_EGRESS === "true" || env.ALLOW_UNAUTHENTICATED === "true",
    ownHosts,
  };
}

const IPV4_LITERAL = /^\d{1,3}(\.\d{1,3}){3}$/;

/** An address rather than a name: `URL.hostname` turns every IPv4 spelling into dotted decimal and brackets IPv6. */
export function isIpLiteral(hostname: string): boolean {
  return IPV4_LITERAL.test(hostname) || hostname.startsWith("[");
}

const normalisedHost = (host: string) => host.trim().toLowerCase().replace(/\.+$/, "");

/** A comma-separated list of host names, normalised (lower case, no trailing dot); blanks dropped. */
export function parseHostList(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map(normalisedHost)
    .filter((entry) => entry !== "");
}

/** The suffixes of an allow-list setting, normalised; empty when the setting is unset. */
export function parseAllowedHosts(text: string | undefined): string[] {
  return parseHostList(text)
    .map((entry) => entry.replace(/^\*?\.+/, ""))
    .filter((entry) => entry !== "");
}

/** Whether `hostname` is `suffix` or a subdomain of it (a trailing root dot ignored). */
function matchesSuffix(hostname: string, suffix: string): boolean {
  const host = normalisedHost(hostname);
  return host === suffix || host.endsWith(`.${suffix}`);
}

/** Why a request to `url` is not allowed under `rule`, or undefined when it is. */
export function egressRefusal(url: URL | string, rule: EgressRule): string | undefined {
  const host = URL.parse(url)?.hostname;
  if (host === undefined) return `'${String(url)}' is not an absolute URL`;
  if (isLoopbackHostname(host)) return undefined;
  if (rule.ownHosts?.includes(normalisedHost(host))) return `${host} is this Worker's own host name: it cannot be its own destination`;
  if (isIpLiteral(host)) {
    return `${host} is an IP address: only host names may be used (loopback excepted, for local development)`;
  }
  const allowed = parseAllowedHosts(rule.allowedHosts);
  if (allowed.length === 0) {
    if (rule.unsetAdmitsAny) return undefined;
    return (
      `${host} is refused: ${rule.setting} is unset, and a deployment sends to no host until it is ` +
      `(comma-separated host suffixes, e.g. "example.com"), or until ALLOW_ANY_EGRESS = "true" says any host is meant`
    );
  }
  if (allowed.some((suffix) => matchesSuffix(host, suffix))) return undefined;
  return `${host} is not allowed by ${rule.setting} (${allowed.join(", ")})`;
}

/** Why `url` may not carry credentials or signed bodies (plain http off loopback), or undefined when it may. */
export function httpsRefusal(url: URL): string | undefined {
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && isLoopbackHostname(url.hostname)) return undefined;
  return `must be https (got ${url.protocol.replace(/:$/, "")}; plain http only for loopback hosts, in local development)`;
}
