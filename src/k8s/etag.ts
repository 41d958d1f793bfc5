/**
 * ETags of `/k8s` documents as kube-apiserver makes them for aggregated discovery
 * (pkg/endpoints/discovery/aggregated/etag.go): the quoted hex SHA-512 of the JSON body, and the
 * `If-None-Match` test that answers 304 when the client holds that body already.
 */

/** `"<hex SHA-512 of body>"`. */
export async function contentTag(body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-512", new TextEncoder().encode(body));
  return `"${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

/** Whether an `If-None-Match` header names `etag` (a list of tags, weak ones compared weakly, or `*`). */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}
