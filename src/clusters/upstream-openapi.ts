/**
 * One OpenAPI document (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version>`) fetched from a
 * cluster's API server with the cluster's credentials, for `/k8s` to serve (k8s/openapi.ts). The
 * request is bounded in time (OPENAPI_TIMEOUT_MS) and size (MAX_OPENAPI_BYTES: a large cluster's v2
 * document with many CRDs is several MB; an answer past the bound is refused, never buffered
 * whole) and, as every request to an API server, follows no redirect (clusters/upstream-request.ts).
 */
import { readBodyBytes, readBodyStart } from "../net/bounded-body.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import type { ClusterConnection } from "./cluster.ts";
import { upstreamGet } from "./upstream-request.ts";

export const OPENAPI_TIMEOUT_MS = 20_000;
export const MAX_OPENAPI_BYTES = 24 * 1024 * 1024;
/** An error answer is read only this far: enough for its Status message. */
const MAX_ERROR_BYTES = 4 * 1024;

export type UpstreamOpenApi =
  | { ok: true; contentType: string; body: Uint8Array<ArrayBuffer> }
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
      const { bytes, exceeded } = await readBodyBytes(response, MAX_OPENAPI_BYTES);
      if (exceeded) return { ok: false, status: 502, message: `GET ${path} answered more than ${MAX_OPENAPI_BYTES / 1024 / 1024} MiB (refused, not read)` };
      return { ok: true, contentType: response.headers.get("content-type") ?? "application/json", body: bytes };
    },
    (message) => ({ ok: false, status: 502, message }),
  );
}
