/**
 * The Kubernetes side of the reflector: paged lists and watch streams over `fetch`, as a
 * `ListerWatcher` (client-go listwatch.go). Selectors and namespace are applied identically to every
 * list page and every watch (reference §1.1.3). Lists stream item by item (list-decoder.ts) and
 * hand items over in small batches, so the caller can write each batch before more is read.
 * Errors are always KubeApiError (HTTP status, Status body, or code 0 for no answer). Redirects are
 * never followed (net/redirect-refusal.ts), and no upstream body is buffered past a bound: a watch
 * line or list member over MAX_UPSTREAM_ITEM_BYTES, an error body over its own bound (errors.ts).
 */
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { redirectRefusal } from "../net/redirect-refusal.ts";
import { KubeApiError } from "./errors.ts";
import { ListDecodeError, ListDecoder, parseListItem } from "./list-decoder.ts";
import { collectionPath, type ResourceRef } from "./resources.ts";
import type { KubeObject, WatchEvent } from "./types.ts";
import { WatchDecoder } from "./watch-decoder.ts";

export interface ListRequest {
  resourceVersion?: string;
  /** Absent: no `limit` parameter (a list at a specific RV must not carry one, reference §1.2.4). */
  limit?: number;
  continue?: string;
}

export interface ListPage {
  resourceVersion: string;
  /** Present when more pages follow. */
  continue?: string;
  items: number;
}

export interface WatchRequest {
  resourceVersion: string;
  timeoutSeconds: number;
}

/** An open watch: `next()` yields the events each network chunk completed; null at a clean end of body. */
export interface WatchStream {
  next(): Promise<WatchEvent[] | null>;
  cancel(): void;
}

export interface ListerWatcher {
  /** Lists one page, handing its items to `onItems` in batches as they are decoded. */
  listPage(request: ListRequest, onItems: (items: KubeObject[]) => void, signal?: AbortSignal): Promise<ListPage>;
  /** Opens a watch; resolves once the response head arrived (an HTTP error rejects). */
  watch(request: WatchRequest, signal?: AbortSignal): Promise<WatchStream>;
}

export interface KubeClientOptions {
  /** Base URL of the API server; may carry a path prefix (a proxy, a fake cluster). */
  apiUrl: string;
  token?: string;
  /** Extra headers on every request, e.g. Cloudflare Access service-token headers. */
  headers?: Record<string, string>;
  resource: ResourceRef;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Items handed to `onItems` at a time. */
  itemBatchSize?: number;
  /**
   * Listed items and watched objects lose `metadata.managedFields` before they are parsed
   * (list-decoder.ts, kube/object-text.ts): only for a caller whose transform drops them anyway.
   */
  dropManagedFields?: boolean;
  /** How long a list or watch request may wait for the response head. */
  headTimeoutMs?: number;
  /** How long a list body may go without sending a byte (a watch has its own idle timer, reflector.ts). */
  bodyIdleTimeoutMs?: number;
  fetch?: typeof fetch;
}

const DEFAULT_ITEM_BATCH = 100;
/**
 * Client-side deadlines, so a half-open connection cannot hold an alarm until the platform kills
 * it. Generous: the server may take long to start a large unpaginated list (reference §6.6), but
 * once it streams, a minute of silence means the connection is gone.
 */
export const DEFAULT_HEAD_TIMEOUT_MS = 60_000;
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 60_000;

/** Resolves as `promise` does, or rejects with `onTimeout()` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  promise.catch(() => {}); // once the deadline won, a late failure of `promise` is nobody's business
  let timer!: ReturnType<typeof setTimeout>;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * List items of built-in types come without kind/apiVersion while watch events carry them
 * (kubernetes#3030, reference §6.12): filling them from the list keeps the cache uniform.
 */
function withTypeMeta(object: KubeObject, apiVersion: string, listKind: string | undefined): KubeObject {
  if (object.apiVersion === undefined) object.apiVersion = apiVersion;
  if (object.kind === undefined && listKind?.endsWith("List")) object.kind = listKind.slice(0, -"List".length);
  return object;
}

function groupVersion(ref: ResourceRef): string {
  return ref.group === "" ? ref.version : `${ref.group}/${ref.version}`;
}

/**
 * Reads a response body into one reused buffer (a BYOB reader). A default reader hands out a new
 * ArrayBuffer for every network chunk, and those stay allocated until a garbage collection: on a
 * 300 MB list that was most of the runtime's memory growth. A returned view is valid until the
 * next read; callers decode it at once. A broken connection becomes a KubeApiError with code 0.
 */
class BodyReader {
  static readonly BUFFER_BYTES = 64 * 1024;
  /** BYOB when the body is a byte stream (fetch bodies are); a default reader otherwise. */
  readonly #reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  #buffer = new ArrayBuffer(BodyReader.BUFFER_BYTES);

  readonly #idleTimeoutMs: number | undefined;

  /** With `idleTimeoutMs`, a read that brings nothing for that long fails (and cancels the body). */
  constructor(body: ReadableStream<Uint8Array>, idleTimeoutMs?: number) {
    this.#idleTimeoutMs = idleTimeoutMs;
    let reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
    try {
      reader = body.getReader({ mode: "byob" });
    } catch {
      reader = body.getReader();
    }
    this.#reader = reader;
  }

  /** The next bytes, or null at the end of the body. */
  async read(): Promise<Uint8Array | null> {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      const read =
        this.#reader instanceof ReadableStreamBYOBReader ? this.#reader.read(new Uint8Array(this.#buffer)) : this.#reader.read();
      const idle = this.#idleTimeoutMs;
      result =
        idle === undefined
          ? await read
          : await within(read, idle, () => new Error(`the API server stopped sending for ${idle / 1000} s`));
    } catch (error) {
      this.cancel();
      throw KubeApiError.connectionFailed(error);
    }
    if (result.done || !result.value) return null;
    if (this.#reader instanceof ReadableStreamBYOBReader) this.#buffer = result.value.buffer as ArrayBuffer;
    return result.value;
  }

  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

export class KubeClient implements ListerWatcher {
  readonly #options: KubeClientOptions;
  readonly #fetch: typeof fetch;

  constructor(options: KubeClientOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async listPage(request: ListRequest, onItems: (items: KubeObject[]) => void, signal?: AbortSignal): Promise<ListPage> {
    const params = this.#selectorParams();
    if (request.resourceVersion !== undefined) params.set("resourceVersion", request.resourceVersion);
    if (request.limit !== undefined) params.set("limit", String(request.limit));
    if (request.continue !== undefined) params.set("continue", request.continue);
    const response = await this.#request(params, signal);
    const batchSize = this.#options.itemBatchSize ?? DEFAULT_ITEM_BATCH;
    // A batch holds the items' texts while it fills and is parsed when handed over: parsed objects
    // (several times their text in the isolate's heap) then live for one transaction, not through
    // the reading of a hundred items, and the garbage collector promotes far less of them.
    let batch: string[] = [];
    let items = 0;
    const apiVersion = groupVersion(this.#options.resource);
    const handOver = () => {
      const full = batch;
      batch = [];
      const { header } = decoder;
      onItems(full.map((text) => withTypeMeta(parseListItem(text) as KubeObject, header.apiVersion ?? apiVersion, header.kind)));
    };
    const decoder: ListDecoder = new ListDecoder(
      (text) => {
        batch.push(text as string);
        items++;
        if (batch.length >= batchSize) handOver();
      },
      { dropManagedFields: this.#options.dropManagedFields === true, itemsAsText: true },
    );
    const text = new TextDecoder();
    const reader = new BodyReader(response.body!, this.#options.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS);
    try {
      for (let chunk = await reader.read(); chunk !== null; chunk = await reader.read()) {
        decoder.push(text.decode(chunk, { stream: true }));
      }
      decoder.push(text.decode());
      const header = decoder.end();
      if (batch.length > 0) handOver();
      return {
        resourceVersion: header.metadata?.resourceVersion ?? "",
        ...(header.metadata?.continue ? { continue: header.metadata.continue } : {}),
        items,
      };
    } catch (error) {
      reader.cancel();
      if (error instanceof ListDecodeError) throw new KubeApiError(0, "InternalError", error.message);
      throw error; // a KubeApiError from reading, or the sink's own failure, as it is
    }
  }

  async watch(request: WatchRequest, signal?: AbortSignal): Promise<WatchStream> {
    const params = this.#selectorParams();
    params.set("watch", "true");
    params.set("resourceVersion", request.resourceVersion);
    params.set("allowWatchBookmarks", "true");
    params.set("timeoutSeconds", String(request.timeoutSeconds));
    const response = await this.#request(params, signal);
    const reader = new BodyReader(response.body!);
    const decoder = new WatchDecoder({ omitManagedFields: this.#options.dropManagedFields === true });
    return {
      async next(): Promise<WatchEvent[] | null> {
        for (;;) {
          const chunk = await reader.read();
          if (chunk === null) {
            // A cut mid-event is the transport's failure, not the server's: re-watch, don't relist.
            if (decoder.end()) throw KubeApiError.connectionFailed(new Error("the watch stream ended in the middle of an event"));
            return null;
          }
          const events = decoder.push(chunk);
          if (events.length > 0) return events;
        }
      },
      cancel(): void {
        reader.cancel();
      },
    };
  }

  #selectorParams(): URLSearchParams {
    const params = new URLSearchParams();
    if (this.#options.labelSelector) params.set("labelSelector", this.#options.labelSelector);
    if (this.#options.fieldSelector) params.set("fieldSelector", this.#options.fieldSelector);
    return params;
  }

  async #request(params: URLSearchParams, signal?: AbortSignal): Promise<Response> {
    const base = this.#options.apiUrl.replace(/\/+$/, "");
    const url = `${base}${collectionPath(this.#options.resource, this.#options.namespace)}?${params}`;
    const headers: Record<string, string> = { accept: "application/json", ...this.#options.headers };
    if (this.#options.token) headers.authorization = `Bearer ${this.#options.token}`;
    // Our own controller, so a missed deadline also aborts the request; the caller's signal feeds it
    // for the whole response (a reconfiguration stops a list or watch body half-way).
    const abort = new AbortController();
    const forward = () => abort.abort(signal?.reason);
    if (signal?.aborted) forward();
    signal?.addEventListener("abort", forward);
    const headTimeoutMs = this.#options.headTimeoutMs ?? DEFAULT_HEAD_TIMEOUT_MS;
    let response: Response;
    try {
      response = await within(this.#fetch(url, { headers, redirect: "manual", signal: abort.signal }), headTimeoutMs, () => {
        const error = new Error(`no response from the API server within ${headTimeoutMs / 1000} s`);
        abort.abort(error);
        return error;
      });
    } catch (error) {
      signal?.removeEventListener("abort", forward);
      throw KubeApiError.connectionFailed(error, await describeConnectionFailure(url, error));
    }
    const redirect = redirectRefusal(response, url);
    if (redirect !== undefined) {
      await response.body?.cancel();
      throw new KubeApiError(response.status, "Redirect", redirect);
    }
    // An error answer's body gets as long as its head had: one that trickles would hold the slice (review A9a).
    if (!response.ok) throw await KubeApiError.fromResponse(response, headTimeoutMs);
    if (!response.body) throw new KubeApiError(response.status, "InternalError", "the API server sent no body");
    return response;
  }
}
