/**
 * Typed client of the fake webhook receiver's control API, built on `fetch` alone so tests running
 * inside workerd can drive the Node server:
 *   const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { script: [{ status: 503 }], default: { status: 200 } });
 *   … hand hook.url to the code under test …
 *   const [first] = await hook.waitForRequests(1);
 * Every method resolves once the server has applied the change, or rejects with ReceiverError carrying
 * the HTTP status and body.
 */
import type { Behaviour, CreatedEndpoint, CreateEndpointOptions, EndpointInfo, RecordedRequest, RequestsResult } from "./types.ts";

export type * from "./types.ts";

export class ReceiverError extends Error {
  override readonly name = "ReceiverError";
  readonly status: number;
  readonly body: unknown;
  constructor(status: number, body: unknown, what: string) {
    const message = (body as { message?: unknown } | null)?.message;
    const detail = typeof message === "string" ? message : typeof body === "string" ? body : JSON.stringify(body);
    super(`receiver: ${what} failed with ${status}${detail ? `: ${detail}` : ""}`);
    this.status = status;
    this.body = body;
  }
}

export interface WaitOptions {
  /** Default 5000. */
  timeoutMs?: number;
  /** How often to ask; default 20. */
  intervalMs?: number;
}

const trim = (url: string): string => url.replace(/\/+$/, "");
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function call<T>(url: string, what: string, method = "GET", body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    // keep the text
  }
  if (!response.ok) throw new ReceiverError(response.status, parsed, what);
  return parsed as T;
}

/**
 * Whether Node's crypto.verify (OpenSSL, in the receiver's process) accepts `signature` (base64) of
 * `message` by the Ed25519 public key `publicKey` (`whpk_…`): a check independent of WebCrypto.
 */
export async function nodeVerifiesEd25519(baseUrl: string, publicKey: string, message: string, signature: string): Promise<boolean> {
  const answer = await call<{ valid: boolean }>(`${trim(baseUrl)}/_control/verify-ed25519`, "verifying with Node", "POST", { publicKey, message, signature });
  return answer.valid;
}

export class ReceiverEndpoint {
  readonly id: string;
  /** Where webhooks go: http://127.0.0.1:<port>/hooks/<id>. */
  readonly url: string;
  private readonly control: string;

  /** Wraps an endpoint that exists on the receiver at `baseUrl`. */
  constructor(baseUrl: string, created: CreatedEndpoint) {
    this.id = created.id;
    this.url = created.url;
    this.control = `${trim(baseUrl)}/_control/endpoints/${encodeURIComponent(created.id)}`;
  }

  /** Creates an endpoint; by default it answers every request 204. */
  static async create(baseUrl: string, options: CreateEndpointOptions = {}): Promise<ReceiverEndpoint> {
    const created = await call<CreatedEndpoint>(`${trim(baseUrl)}/_control/endpoints`, "creating an endpoint", "POST", options);
    return new ReceiverEndpoint(baseUrl, created);
  }

  /** Requests recorded so far, in arrival order; with `since`, only those with index ≥ since. */
  async requests(since = 0): Promise<RecordedRequest[]> {
    return (await this.requestsResult(since)).requests;
  }

  /** Like `requests`, with the total count recorded. */
  requestsResult(since = 0): Promise<RequestsResult> {
    return call<RequestsResult>(`${this.control}/requests?since=${since}`, `requests of ${this.id}`);
  }

  /** Polls until at least `count` requests were recorded; resolves to all of them. */
  async waitForRequests(count: number, options: WaitOptions = {}): Promise<RecordedRequest[]> {
    const timeoutMs = options.timeoutMs ?? 5000;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { requests, total } = await this.requestsResult();
      if (total >= count) return requests;
      if (Date.now() >= deadline) {
        throw new Error(`receiver: expected at least ${count} request(s) to ${this.url} within ${timeoutMs} ms, but ${total} arrived`);
      }
      await sleep(Math.min(options.intervalMs ?? 20, Math.max(0, deadline - Date.now())));
    }
  }

  /** Replaces script and default (default default: 204); the script starts over. */
  setBehaviour(behaviour: Behaviour): Promise<EndpointInfo> {
    return call<EndpointInfo>(`${this.control}/behaviour`, `setting the behaviour of ${this.id}`, "PUT", behaviour);
  }

  info(): Promise<EndpointInfo> {
    return call<EndpointInfo>(this.control, `info of ${this.id}`);
  }

  /** Dedicated port only: stops listening and drops open connections; requests then get connection refused. */
  down(): Promise<EndpointInfo> {
    return call<EndpointInfo>(`${this.control}/down`, `taking ${this.id} down`, "POST", {});
  }

  /** Dedicated port only: listens again on the same port. */
  up(): Promise<EndpointInfo> {
    return call<EndpointInfo>(`${this.control}/up`, `bringing ${this.id} up`, "POST", {});
  }

  /** Removes the endpoint (its URL answers 404 afterwards, or connection refused with a dedicated port). */
  async remove(): Promise<void> {
    await call(this.control, `removing ${this.id}`, "DELETE");
  }
}
