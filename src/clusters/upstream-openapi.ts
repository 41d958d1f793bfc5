/**
 * One OpenAPI document (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version>`) fetched from a
 * cluster's API server with the cluster's credentials, for `/k8s` to serve (k8s/openapi.ts).
 *
 * Guarantees:
 * - The body is passed on as it comes, never buffered here: the factory, which holds the
 *   credentials and makes this request, must not hold a multi-MB document per reader (review N6);
 *   the isolate that asked reads it once into its cache (k8s/openapi-cache.ts).
 * - Bounded in time: the answer's head within OPENAPI_TIMEOUT_MS, its body within another
 *   OPENAPI_TIMEOUT_MS (a body that stalls errors, and its upstream read is cancelled).
 * - Bounded in size: a body past MAX_OPENAPI_BYTES (a large cluster's v2 document with many CRDs is
 *   several MB) errors there, the rest unread; a Content-Length past it is refused before any byte.
 *   A body that errors is never a document: its reader fails the read, not truncates it.
 * - As every request to an API server, it follows no redirect (clusters/upstream-request.ts).
 */
import { readBodyStart } from "../net/bounded-body.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import type { ClusterConnection } from "./cluster.ts";
import { upstreamGet } from "./upstream-request.ts";

export const OPENAPI_TIMEOUT_MS = 20_000;
export const MAX_OPENAPI_BYTES = 24 * 1024 * 1024;
/** An error answer is read only this far: enough for its Status message. */
const MAX_ERROR_BYTES = 4 * 1024;

export type UpstreamOpenApi =
  | { ok: true; contentType: string; body: ReadableStream<Uint8Array> }
  /** `status` is the API server's (404: it serves no such document) or 502 when it could not be read. */
  | { ok: false; status: number; message: string };

export async function fetchOpenApi(
  cluster: string,
  connection: ClusterConnection,
  env: object,
  path: string,
  accept: string,
  fetcher?: typeof fetch,
): Promise<UpstreamOpenApi> {
  const tooLarge = `GET ${path} answered more than ${MAX_OPENAPI_BYTES / 1024 / 1024} MiB (refused, not read)`;
  return upstreamGet<UpstreamOpenApi>(
    { cluster, connection, env, path, accept, timeoutMs: OPENAPI_TIMEOUT_MS, ...(fetcher ? { fetcher } : {}) },
    async (response, url) => {
      const redirect = redirectRefusal(response, url);
      if (redirect !== undefined) {
        await response.body?.cancel();
        return { ok: false, status: 502, message: `GET ${path}: ${redirect}` };
      }
      if (!response.ok) {
        const { text } = await readBodyStart(response, MAX_ERROR_BYTES);
        const message = (JSON.parse(text.startsWith("{") ? text : "{}") as { message?: unknown }).message;
        return { ok: false, status: response.status === 404 ? 404 : 502, message: `GET ${path} answered ${response.status}${typeof message === "string" ? `: ${message}` : ""}` };
      }
      if (Number(response.headers.get("content-length") ?? 0) > MAX_OPENAPI_BYTES) {
        await response.body?.cancel();
        return { ok: false, status: 502, message: tooLarge };
      }
      const body = (response.body ?? new Response("").body!).pipeThrough(boundedBody(`GET ${path}`, tooLarge));
      return { ok: true, contentType: response.headers.get("content-type") ?? "application/json", body };
    },
    (message) => ({ ok: false, status: 502, message }),
  );
}

/** Passes a body on unchanged; errors it past MAX_OPENAPI_BYTES, or OPENAPI_TIMEOUT_MS after it began. */
function boundedBody(what: string, tooLarge: string): TransformStream<Uint8Array, Uint8Array> {
  let length = 0;
  let timer!: ReturnType<typeof setTimeout>;
  return new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      timer = setTimeout(() => controller.error(new Error(`${what}: the body did not end within ${OPENAPI_TIMEOUT_MS / 1000} s`)), OPENAPI_TIMEOUT_MS);
    },
    transform(chunk, controller) {
      length += chunk.byteLength;
      if (length > MAX_OPENAPI_BYTES) {
        clearTimeout(timer);
        controller.error(new Error(tooLarge));
        return;
      }
      controller.enqueue(chunk);
    },
    flush() {
      clearTimeout(timer);
    },
  });
}
