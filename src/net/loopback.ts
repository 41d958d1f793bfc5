/**
 * Which host names mean this machine. Local development is the one place where plain http, anonymous
 * access and loopback destinations are allowed, and these names are how the code recognises it.
 * `*.localhost` counts: browsers resolve it to loopback themselves, so DNS cannot rebind it.
 */

/** A URL's `hostname` (IPv6 in brackets, as `URL` gives it) that is loopback. */
export function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}
