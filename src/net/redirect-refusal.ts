/**
 * Requests to API servers never follow redirects (issue 17, reviews A4 and F22): they carry the
 * bearer token and Cloudflare Access service-token headers, and a redirect — from a misconfigured
 * ingress or tunnel, or an aggregated API server (the CVE-2022-3172 class) — would hand them to
 * another origin (fetch strips only `Authorization` across origins, never `cf-access-client-*`) or
 * send them in clear after https → http. Callers fetch with `redirect: "manual"` and turn a 3xx
 * into an error naming where it pointed, as client-go users do with `CheckRedirect`.
 */

/** Why a 3xx answer to `requestUrl` is an error, naming the redirect's target host; undefined for any other status. */
export function redirectRefusal(response: Response, requestUrl: string): string | undefined {
  if (response.status < 300 || response.status > 399) return undefined;
  const location = response.headers.get("location");
  const target = location === null ? undefined : URL.parse(location, requestUrl);
  const where = target ? `to ${target.host}` : "without a usable Location";
  return `the API server answered ${response.status}, a redirect ${where}: not followed (credentials never go to another origin); point the cluster's URL at the API server itself`;
}
