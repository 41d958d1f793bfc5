/**
 * A small typed client for the edge-informer HTTP API (../shared/API.md), on Web-standard `fetch`
 * only: it runs in Node ≥ 18, Workers, Deno and browsers.
 *
 * @example
 * ```ts
 * const client = new EdgeInformerClient({ baseUrl: "https://informers.example.com", token: process.env.ADMIN_TOKEN });
 * await client.putInformer("pods", { resource: "pods", indexers: { byNode: "spec.nodeName" } });
 * for await (const pod of client.listAllObjects("pods", { namespace: "default" })) console.log(pod.metadata.name);
 * ```
 */
import type {
  Cluster,
  ClusterSpec,
  CreatedSubscription,
  DeadLetter,
  DeliveryAttempt,
  InformerSpec,
  InformerStatus,
  ObjectList,
  ObjectQuery,
  PageQuery,
  PutInformerResult,
  RedeliverResult,
  SearchPage,
  SearchQuery,
  SigningKey,
  SubscriptionSpec,
  SubscriptionStatus,
} from "./api-types.ts";
import type { KubernetesObject } from "./types.ts";

/** The slice of `fetch` the client calls: `globalThis.fetch`, a Worker's service binding, a test stub. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface EdgeInformerClientOptions {
  /** Where the Worker is served, e.g. "https://informers.example.com" (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`: the ADMIN_TOKEN for mutations, READ_TOKEN (or ADMIN_TOKEN) for reads when set. */
  token?: string;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** The cluster whose informers this client addresses (default `default`, i.e. KUBE_API_URL); see `forCluster`. */
  cluster?: string;
}

/** Error codes the server uses (docs/api.md); others may appear, and non-JSON answers get one from their status. */
export type EdgeInformerErrorCode =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "Conflict"
  | "Gone"
  | "PayloadTooLarge"
  | "ServiceUnavailable"
  | "Internal"
  | "InvalidResponse"
  | (string & {});

const CODE_OF_STATUS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  410: "Gone",
  413: "PayloadTooLarge",
  429: "TooManyRequests",
  500: "Internal",
  502: "BadGateway",
  503: "Unavailable",
  504: "GatewayTimeout",
};

const MAX_FALLBACK_MESSAGE = 200;

/** A non-2xx answer (or a 2xx one that is not the JSON expected). Never carries the client's token. */
export class EdgeInformerApiError extends Error {
  override readonly name = "EdgeInformerApiError";
  /** The HTTP status. */
  readonly status: number;
  /** The `error.code` of the body, e.g. "NotFound"; derived from the status when the body is not an API error. */
  readonly code: EdgeInformerErrorCode;
  readonly method: string;
  /** The request's path and query, relative to the base URL. */
  readonly path: string;
  /** Other fields of a JSON error body, e.g. the failed `attempt` of a redelivery's 502. */
  readonly details: Record<string, unknown> | undefined;

  constructor(status: number, code: string, message: string, method: string, path: string, details?: Record<string, unknown>) {
    super(message);
    this.status = status;
    this.code = code;
    this.method = method;
    this.path = path;
    this.details = details;
  }
}

export class EdgeInformerClient {
  readonly baseUrl: string;
  /** The cluster this client's informer, query and subscription methods address. */
  readonly cluster: string;
  readonly #token: string | undefined;
  readonly #fetch: FetchLike;
  /** `/informers`, or `/clusters/{cluster}/informers` outside the default cluster. */
  readonly #informers: string;

  constructor(options: EdgeInformerClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl '${options.baseUrl}' is not an absolute URL`);
    }
    if (url.search || url.hash) throw new TypeError("baseUrl must not have a query or a fragment");
    this.baseUrl = url.href.replace(/\/+$/, "");
    this.#token = options.token || undefined;
    // Bound in a closure: Workers throw "Illegal invocation" when fetch is called detached from globalThis.
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.cluster = options.cluster ?? "default";
    this.#informers = this.cluster === "default" ? "/informers" : `/clusters/${segment(this.cluster)}/informers`;
    this.#options = options;
  }

  readonly #options: EdgeInformerClientOptions;

  /** The same client, addressing the informers of another cluster. */
  forCluster(cluster: string): EdgeInformerClient {
    return new EdgeInformerClient({ ...this.#options, cluster });
  }

  // ---- Clusters ---------------------------------------------------------------------------------

  /** `GET /clusters`: every cluster with its health, `default` first. */
  async listClusters(): Promise<Cluster[]> {
    return (await this.#json<{ items: Cluster[] }>("GET", "/clusters")).items;
  }

  /** `GET /clusters/{name}`. */
  async getCluster(name: string): Promise<Cluster> {
    return this.#json("GET", `/clusters/${segment(name)}`);
  }

  /** `PUT /clusters/{name}` (admin): adds or changes a cluster; the token is stored write-only. */
  async putCluster(name: string, spec: ClusterSpec): Promise<{ created: boolean; cluster: Omit<Cluster, "health"> }> {
    const path = `/clusters/${segment(name)}`;
    const response = await this.#send("PUT", path, spec);
    return { created: response.status === 201, cluster: await this.#body<Omit<Cluster, "health">>(response, "PUT", path) };
  }

  /** `DELETE /clusters/{name}` (admin); `cascade` deletes its informers too. */
  async deleteCluster(name: string, options: { cascade?: boolean } = {}): Promise<void> {
    await discard(await this.#send("DELETE", `/clusters/${segment(name)}${options.cascade ? "?cascade=true" : ""}`));
  }

  // ---- Informers --------------------------------------------------------------------------------

  /** `GET /informers`: every registered informer's status. */
  async listInformers(): Promise<InformerStatus[]> {
    return (await this.#json<{ items: InformerStatus[] }>("GET", this.#informers)).items;
  }

  /** `GET /informers/{name}`. */
  async getInformer(name: string): Promise<InformerStatus> {
    return this.#json("GET", `${this.#informers}/${segment(name)}`);
  }

  /** `PUT /informers/{name}` (admin): creates (`created: true`) or updates the informer. */
  async putInformer(name: string, spec: InformerSpec): Promise<PutInformerResult> {
    const path = `${this.#informers}/${segment(name)}`;
    const response = await this.#send("PUT", path, spec);
    return { created: response.status === 201, status: await this.#body<InformerStatus>(response, "PUT", path) };
  }

  /** `DELETE /informers/{name}` (admin): stops the loop and deletes its state. */
  async deleteInformer(name: string): Promise<void> {
    await discard(await this.#send("DELETE", `${this.#informers}/${segment(name)}`));
  }

  // ---- Search -----------------------------------------------------------------------------------

  /** `GET /search/{resource}`: one page of a resource across clusters; pass `continue` back for the next. */
  async search<T = KubernetesObject>(resource: string, query: SearchQuery = {}): Promise<SearchPage<T>> {
    const { clusters, ...rest } = query;
    return this.#json("GET", `/search/${segment(resource)}${queryString({ ...rest, ...(clusters ? { clusters: clusters.join(",") } : {}) })}`);
  }

  // ---- Queries ----------------------------------------------------------------------------------

  /** `GET /informers/{name}/objects`: one page; pass `continue` back for the next. */
  async listObjects<T = KubernetesObject>(informer: string, query: ObjectQuery = {}): Promise<ObjectList<T>> {
    return this.#list("GET", `${this.#informers}/${segment(informer)}/objects${queryString(query)}`);
  }

  /** Every object matching `query`, page by page (`limit` sets the page size), following `continue`. */
  async *listAllObjects<T = KubernetesObject>(informer: string, query: Omit<ObjectQuery, "continue"> = {}): AsyncGenerator<T, void, undefined> {
    let token: string | undefined;
    do {
      const page: ObjectList<T> = await this.listObjects<T>(informer, { ...query, ...(token === undefined ? {} : { continue: token }) });
      yield* page.items;
      token = page.continue;
    } while (token !== undefined);
  }

  /** `GET /informers/{name}/objects/{key}`: `key` is "namespace/name", or "name" for cluster-scoped objects. */
  async getObject<T = KubernetesObject>(informer: string, key: string): Promise<T> {
    const parts = key.split("/");
    if (parts.length > 2 || parts.some((part) => part === "")) {
      throw new TypeError(`'${key}' is not an object key ("namespace/name" or "name")`);
    }
    return this.#json("GET", `${this.#informers}/${segment(informer)}/objects/${parts.map(segment).join("/")}`);
  }

  /** `GET /informers/{name}/indexes/{index}`: all the index's values, following `continue` across pages. */
  async indexValues(informer: string, index: string): Promise<string[]> {
    const values: string[] = [];
    let token: string | undefined;
    do {
      const path = `${this.#informers}/${segment(informer)}/indexes/${segment(index)}${queryString(token === undefined ? {} : { continue: token })}`;
      const page: { values: string[]; continue?: string } = await this.#json("GET", path);
      values.push(...page.values);
      token = page.continue;
    } while (token !== undefined);
    return values;
  }

  /** `GET /informers/{name}/indexes/{index}/{value}`: the objects whose index holds `value` (ByIndex), one page. */
  async byIndex<T = KubernetesObject>(informer: string, index: string, value: string, page: PageQuery = {}): Promise<ObjectList<T>> {
    return this.#list("GET", `${this.#informers}/${segment(informer)}/indexes/${segment(index)}/${segment(value)}${queryString(page)}`);
  }

  // ---- Subscriptions ----------------------------------------------------------------------------

  /** `POST /informers/{name}/subscriptions` (admin). Keep the returned `secret`: it is shown only once. */
  async createSubscription(informer: string, spec: SubscriptionSpec): Promise<CreatedSubscription> {
    return this.#json("POST", `${this.#informers}/${segment(informer)}/subscriptions`, spec);
  }

  /** `GET /informers/{name}/subscriptions`: all of them, following `continue` across pages. */
  async listSubscriptions(informer: string): Promise<SubscriptionStatus[]> {
    const items: SubscriptionStatus[] = [];
    let token: string | undefined;
    do {
      const path = `${this.#informers}/${segment(informer)}/subscriptions${queryString(token === undefined ? {} : { continue: token })}`;
      const page: { items: SubscriptionStatus[]; continue?: string } = await this.#json("GET", path);
      items.push(...page.items);
      token = page.continue;
    } while (token !== undefined);
    return items;
  }

  /** `GET /subscriptions/{id}`. */
  async getSubscription(id: string): Promise<SubscriptionStatus> {
    return this.#json("GET", `/subscriptions/${segment(id)}`);
  }

  /** `GET /subscriptions/{id}/signing-key`: an `ed25519` subscription's public key (409 for an `hmac` one). */
  async getSigningKey(id: string): Promise<SigningKey> {
    return this.#json("GET", `/subscriptions/${segment(id)}/signing-key`);
  }

  /** `DELETE /subscriptions/{id}` (admin). */
  async deleteSubscription(id: string): Promise<void> {
    await discard(await this.#send("DELETE", `/subscriptions/${segment(id)}`));
  }

  /** `POST /subscriptions/{id}/enable` (admin): re-enables a disabled subscription. */
  async enableSubscription(id: string): Promise<SubscriptionStatus> {
    return this.#json("POST", `/subscriptions/${segment(id)}/enable`);
  }

  /** `GET /subscriptions/{id}/deliveries`: recent delivery attempts. */
  async deliveries(id: string, options: { limit?: number } = {}): Promise<DeliveryAttempt[]> {
    const path = `/subscriptions/${segment(id)}/deliveries${queryString(options)}`;
    return (await this.#json<{ items: DeliveryAttempt[] }>("GET", path)).items;
  }

  /** `GET /subscriptions/{id}/dead-letters`. */
  async deadLetters<T = KubernetesObject>(id: string, options: { limit?: number } = {}): Promise<DeadLetter<T>[]> {
    const path = `/subscriptions/${segment(id)}/dead-letters${queryString(options)}`;
    return (await this.#json<{ items: DeadLetter<T>[] }>("GET", path)).items;
  }

  /**
   * `POST /subscriptions/{id}/dead-letters/{eventId}/redeliver` (admin): one attempt, now. A failed
   * attempt throws an EdgeInformerApiError with status 502 (and the attempt in `details.attempt`).
   */
  async redeliver(id: string, eventId: string): Promise<RedeliverResult> {
    return this.#json("POST", `/subscriptions/${segment(id)}/dead-letters/${segment(eventId)}/redeliver`);
  }

  // ---- Plumbing ---------------------------------------------------------------------------------

  async #json<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.#body<T>(await this.#send(method, path, body), method, path);
  }

  async #list<T>(method: string, path: string): Promise<ObjectList<T>> {
    const response = await this.#send(method, path);
    const page = await this.#body<Omit<ObjectList<T>, "synced">>(response, method, path);
    return { ...page, synced: response.headers.get("x-synced") === "true" };
  }

  /** Sends a request; resolves to a 2xx response, throws EdgeInformerApiError for anything else. */
  async #send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.#token !== undefined) headers.authorization = `Bearer ${this.#token}`;
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await this.#fetch(`${this.baseUrl}${path}`, init);
    if (response.ok) return response;
    throw await this.#error(response, method, path);
  }

  async #body<T>(response: Response, method: string, path: string): Promise<T> {
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new EdgeInformerApiError(
        response.status,
        "InvalidResponse",
        this.#redact(`expected a JSON answer, got ${describeText(text) || "an empty body"}`),
        method,
        path,
      );
    }
  }

  async #error(response: Response, method: string, path: string): Promise<EdgeInformerApiError> {
    let text = "";
    try {
      text = await response.text();
    } catch {
      // the body could not be read: fall back to the status
    }
    let code: string | undefined;
    let message: string | undefined;
    let details: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        const { error, ...rest } = parsed as { error?: { code?: unknown; message?: unknown } };
        if (typeof error?.code === "string" && error.code !== "") code = error.code;
        if (typeof error?.message === "string" && error.message !== "") message = error.message;
        if (Object.keys(rest).length > 0) details = rest;
      }
    } catch {
      // not JSON: a proxy's or a platform's page
    }
    code ??= CODE_OF_STATUS[response.status] ?? `HTTP${response.status}`;
    message ??= describeText(text) || response.statusText || `HTTP ${response.status}`;
    return new EdgeInformerApiError(response.status, code, this.#redact(message), method, path, details);
  }

  /** Belt and braces: the server never echoes tokens, but a proxy in between might. */
  #redact(message: string): string {
    return this.#token === undefined ? message : message.split(this.#token).join("[redacted]");
  }
}

/** One path segment. */
function segment(value: string): string {
  if (value === "") throw new TypeError("path segments must not be empty");
  return encodeURIComponent(value);
}

/** `?a=1&b=2` from the defined entries, or "". */
function queryString(query: object): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** The start of a non-JSON body, on one line. */
function describeText(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > MAX_FALLBACK_MESSAGE ? `${line.slice(0, MAX_FALLBACK_MESSAGE)}…` : line;
}

/** Releases an answer whose body is not read (a 204's, usually empty). */
async function discard(response: Response): Promise<void> {
  await response.body?.cancel();
}
