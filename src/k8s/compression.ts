/**
 * gzip for large answers, as kube-apiserver compresses them (AS pkg/endpoints/handlers/
 * responsewriters/writers.go: `APIResponseCompression`, on by default, gzips a body over 128 KiB
 * when the client accepts gzip, which client-go and kubectl do by default). A list of 100k pods is
 * hundreds of MB as JSON and a tenth of that gzipped.
 *
 * The Workers runtime compresses a body whose Response says `content-encoding: gzip` (its default
 * `encodeBody: "automatic"`), so an answer only has to say so. A streamed list (more than one
 * informer page) is large by construction. Watches are never compressed: gzip holds back small
 * events until a block fills, and the runtime (and miniflare locally) would otherwise compress by
 * the request's Accept-Encoding, so a watch says `content-encoding: identity`.
 */

/** The server's threshold: `defaultGzipThresholdBytes` (writers.go). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** Whether an Accept-Encoding header accepts gzip (q=0 refuses it). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? "").split(",").some((clause) => {
    const [coding, ...params] = clause.split(";").map((part) => part.trim().toLowerCase());
    if (coding !== "gzip" && coding !== "*") return false;
    return !params.some((param) => /^q=0(\.0*)?$/.test(param));
  });
}

/** The content-encoding header of a list answer: gzip when it is large and the client accepts gzip. */
export function listEncoding(acceptEncoding: string | undefined, body: string | ReadableStream<Uint8Array>): Record<string, string> {
  const large = typeof body !== "string" || body.length > GZIP_THRESHOLD_BYTES;
  return large && acceptsGzip(acceptEncoding) ? { "content-encoding": "gzip" } : {};
}

/** A watch's content-encoding: never compressed (see above). */
export const WATCH_ENCODING = { "content-encoding": "identity" } as const;
