/**
 * One OpenAPI document (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/<group-version>`) fetched from a
 * cluster's API server with the cluster's credentials, for `/k8s` to serve (k8s/openapi.ts). The
 * request is bounded in time (OPENAPI_TIMEOUT_MS) and size (MAX_OPENAPI_BYTES: a large cluster's v2
 * document with many CRDs is several MB; an answer past the bound is refused, never buffered
 * whole), follows no redirect (net/redirect-refusal.ts, as every request to an API server), and
 * failures are described without credentials (none are in a URL).
 */
import { readBodyBytes, readBodyStart } from "../net/bounded-body.ts";
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import { type ClusterConnection, resolveConnection } from "./cluster.ts";

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
  fetcher: typeof fetch = (input, init) => fetch(input, init),
): Promise<UpstreamOpenApi> {
  let url: string;
  let init: RequestInit;
  try {
    const { apiUrl, token, headers } = resolveConnection(cluster, connection, env);
    url = `${apiUrl.replace(/\/+$/, "")}${path}`;
    init = { headers: { accept, ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, redirect: "manual" };
  } catch (error) {
    return { ok: false, status: 502, message: error instanceof Error ? error.message : String(error) };
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${OPENAPI_TIMEOUT_MS / 1000} s`)), OPENAPI_TIMEOUT_MS);
  try {
    const response = await fetcher(url, { ...init, signal: abort.signal });
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
  } catch (error) {
    return { ok: false, status: 502, message: await describeConnectionFailure(url, abort.signal.aborted ? abort.signal.reason : error) };
  } finally {
    clearTimeout(timer);
  }
}
