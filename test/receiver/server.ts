/**
 * The fake webhook receiver (node:http, no dependencies): endpoints that answer webhook requests with
 * scripted statuses, delays, headers, hangs and broken connections, and record every request.
 *   /hooks/{id}[/…]                            an endpoint (any method); recorded, then its next step applies
 *   POST   /_control/endpoints                 {script?, default?, dedicatedPort?} → 201 {id, url}
 *   GET    /_control/endpoints                 → {items: EndpointInfo[]}
 *   GET    /_control/endpoints/{id}            → EndpointInfo        DELETE → removed (closes its listener)
 *   GET    /_control/endpoints/{id}/requests?since=n → {requests (index ≥ n), total}
 *   PUT    /_control/endpoints/{id}/behaviour  {script?, default?} → EndpointInfo (script restarts)
 *   POST   /_control/endpoints/{id}/down | /up → EndpointInfo (dedicated port only; idempotent)
 *   POST   /_control/verify-ed25519            {publicKey: "whpk_…", message, signature (base64)} → {valid}
 *          Node's own crypto.verify (OpenSSL), an implementation independent of workerd's WebCrypto,
 *          for the tests of Ed25519 signatures (issue 32).
 * Control errors are JSON {error, message}; an unknown endpoint is 404, on /hooks too (not recorded).
 * A dedicated endpoint has its own listener serving only its /hooks path; `down` stops listening and
 * drops its connections (clients get connection refused), `up` listens on the same port again. The main
 * port serves every endpoint's /hooks path, dedicated or not.
 * `close()` drops hanging requests and every connection, closes dedicated listeners and stops listening.
 */
import { createPublicKey, randomBytes, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { badRequest, ControlError, Endpoint, validateBehaviour } from "./endpoint.ts";
import type { CreatedEndpoint, ReceiverErrorBody, RequestsResult, Step } from "./types.ts";

const MAX_BODY_BYTES = 16 * 1024 * 1024;

export interface FakeReceiver {
  /** e.g. http://127.0.0.1:8002 — the main port (control API and every /hooks path). */
  url: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

function hostUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

async function listen(handler: Handler, port: number, host: string): Promise<Server> {
  const server = createServer(handler);
  // Keep idle keep-alive connections longer than clients do, so a reused connection is never cut mid-request;
  // no request timeout, so a hanging request lasts until its client gives up.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}

function shut(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** An endpoint's own listening socket, which can go down and come back up on the same port. */
class DedicatedListener {
  private server: Server | undefined;
  private readonly handler: Handler;
  private readonly host: string;
  port = 0;

  constructor(handler: Handler, host: string) {
    this.handler = handler;
    this.host = host;
  }

  async up(): Promise<void> {
    if (this.server) return;
    this.server = await listen(this.handler, this.port, this.host);
    this.port = (this.server.address() as AddressInfo).port;
  }

  async down(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await shut(server);
  }
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), "cache-control": "no-store" });
  res.end(text);
}

function sendError(res: ServerResponse, error: ControlError): void {
  const body: ReceiverErrorBody = { error: error.error, message: error.message };
  sendJson(res, error.status, body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ControlError(413, "TooLarge", `request body larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  if (text.trim() === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw badRequest(`request body is not JSON: ${(error as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest("the body must be a JSON object");
  return body as Record<string, unknown>;
}

/** Header names lower-cased; repeated headers joined with ", ". */
function recordHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    const value = req.rawHeaders[i + 1]!;
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return headers;
}

/** Resolves after `ms`, or as soon as the response's connection closes. */
function pause(res: ServerResponse, ms: number): Promise<void> {
  if (ms <= 0 || res.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once("close", done);
  });
}

export async function startReceiver(options: { port: number; host?: string }): Promise<FakeReceiver> {
  const host = options.host ?? "127.0.0.1";
  const endpoints = new Map<string, Endpoint>();
  const listeners = new Map<string, DedicatedListener>();
  let mainUrl = "";
  let counter = 0;

  const notFound = (id: string): ControlError => new ControlError(404, "NotFound", `no endpoint ${JSON.stringify(id)}`);

  function endpointOf(id: string): Endpoint {
    const endpoint = endpoints.get(id);
    if (!endpoint) throw notFound(id);
    return endpoint;
  }

  async function serveHook(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const headers = recordHeaders(req);
    let body: string;
    try {
      body = await readBody(req);
    } catch (error) {
      if (error instanceof ControlError) throw error;
      return; // the client went away mid-body: nothing to record
    }
    if (endpoints.get(endpoint.id) !== endpoint) throw notFound(endpoint.id); // removed meanwhile
    const step: Step = endpoint.take({ method: req.method ?? "GET", path: req.url ?? "/", headers, body, receivedAt });
    if (step.hang) {
      endpoint.hang(res);
      return;
    }
    await pause(res, step.delayMs ?? 0);
    if (res.destroyed) return;
    if (step.destroy) {
      req.socket.destroy();
      return;
    }
    const replyHeaders: Record<string, string> = { ...step.headers };
    const text = step.body ?? "";
    if (text !== "" && !Object.keys(replyHeaders).some((name) => name.toLowerCase() === "content-type")) {
      replyHeaders["content-type"] = "text/plain; charset=utf-8";
    }
    res.writeHead(step.status, replyHeaders);
    res.end(text);
  }

  async function handleControl(sub: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    if (sub === "/verify-ed25519") {
      if (method !== "POST") throw methodNotAllowed(method, sub);
      const { publicKey, message, signature } = await readObject(req);
      if (typeof publicKey !== "string" || !publicKey.startsWith("whpk_") || typeof message !== "string" || typeof signature !== "string") {
        throw badRequest("publicKey (whpk_…), message and signature (base64) are strings");
      }
      const x = Buffer.from(publicKey.slice("whpk_".length), "base64").toString("base64url");
      const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
      sendJson(res, 200, { valid: verify(null, Buffer.from(message, "utf8"), key, Buffer.from(signature, "base64")) });
      return;
    }
    if (sub === "/endpoints") {
      if (method === "GET") {
        sendJson(res, 200, { items: [...endpoints.values()].map((e) => e.info()) });
        return;
      }
      if (method !== "POST") throw methodNotAllowed(method, sub);
      const input = await readObject(req);
      if (input.dedicatedPort !== undefined && typeof input.dedicatedPort !== "boolean") throw badRequest("dedicatedPort must be a boolean");
      const behaviour = validateBehaviour(input);
      const id = `e${++counter}-${randomBytes(4).toString("hex")}`;
      const endpoint = new Endpoint(id, input.dedicatedPort === true, behaviour);
      if (endpoint.dedicatedPort) {
        const listener = new DedicatedListener((q, s) => dispatch(q, s, endpoint), host);
        await listener.up();
        listeners.set(id, listener);
        endpoint.url = `${hostUrl(host, listener.port)}/hooks/${id}`;
      } else {
        endpoint.url = `${mainUrl}/hooks/${id}`;
      }
      endpoints.set(id, endpoint);
      const created: CreatedEndpoint = { id, url: endpoint.url };
      sendJson(res, 201, created);
      return;
    }
    const match = /^\/endpoints\/([^/]+)(\/[^/]+)?$/.exec(sub);
    if (!match) throw new ControlError(404, "NotFound", `no control route ${method} /_control${sub}`);
    const id = decodeURIComponent(match[1]!);
    const action = match[2] ?? "";
    const endpoint = endpointOf(id);
    switch (`${method} ${action}`) {
      case "GET ":
        sendJson(res, 200, endpoint.info());
        return;
      case "DELETE ":
        endpoints.delete(id);
        await listeners.get(id)?.down();
        listeners.delete(id);
        endpoint.dropHanging();
        sendJson(res, 200, { deleted: id });
        return;
      case "GET /requests": {
        const since = url.searchParams.get("since") ?? "0";
        if (!/^[0-9]+$/.test(since)) throw badRequest("since must be a non-negative integer");
        const result: RequestsResult = { requests: endpoint.requestsSince(Number(since)), total: endpoint.total };
        sendJson(res, 200, result);
        return;
      }
      case "PUT /behaviour":
        endpoint.setBehaviour(validateBehaviour(await readObject(req)));
        sendJson(res, 200, endpoint.info());
        return;
      case "POST /down":
      case "POST /up": {
        const listener = listeners.get(id);
        if (!listener) throw new ControlError(409, "Conflict", `endpoint ${JSON.stringify(id)} has no dedicated port (create it with dedicatedPort: true)`);
        if (action === "/down") {
          endpoint.up = false;
          await listener.down();
        } else {
          try {
            await listener.up();
          } catch (error) {
            throw new ControlError(409, "Conflict", `cannot listen on port ${listener.port} again: ${(error as Error).message}`);
          }
          endpoint.up = true;
        }
        sendJson(res, 200, endpoint.info());
        return;
      }
      default:
        if (["", "/requests", "/behaviour", "/down", "/up"].includes(action)) throw methodNotAllowed(method, sub);
        throw new ControlError(404, "NotFound", `no control route ${method} /_control${sub}`);
    }
  }

  function methodNotAllowed(method: string, sub: string): ControlError {
    return new ControlError(405, "MethodNotAllowed", `${method} is not allowed on /_control${sub}`);
  }

  /** `only`: the endpoint a dedicated listener serves (nothing else is reachable there). */
  async function handle(req: IncomingMessage, res: ServerResponse, only: Endpoint | undefined): Promise<void> {
    const url = new URL(req.url ?? "/", "http://receiver");
    const path = url.pathname;
    const hook = /^\/hooks\/([^/]+)(?:\/.*)?$/.exec(path);
    if (hook) {
      const id = decodeURIComponent(hook[1]!);
      if (only && only.id !== id) throw notFound(id);
      await serveHook(endpointOf(id), req, res);
      return;
    }
    if (!only && (path === "/_control" || path.startsWith("/_control/"))) {
      await handleControl(path.slice("/_control".length).replace(/\/+$/, ""), url, req, res);
      return;
    }
    throw new ControlError(404, "NotFound", only ? `only ${new URL(only.url).pathname} is served on this port` : `nothing at ${path}`);
  }

  function dispatch(req: IncomingMessage, res: ServerResponse, only?: Endpoint): void {
    handle(req, res, only).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      if (error instanceof ControlError) {
        sendError(res, error);
        return;
      }
      console.error("receiver: request failed", req.method, req.url, error);
      sendError(res, new ControlError(500, "InternalError", (error as Error).message));
    });
  }

  const server = await listen((req, res) => dispatch(req, res), options.port, host);
  mainUrl = hostUrl(host, (server.address() as AddressInfo).port);
  return {
    url: mainUrl,
    close: async () => {
      for (const endpoint of endpoints.values()) endpoint.dropHanging();
      const closing = [...listeners.values()].map((listener) => listener.down());
      endpoints.clear();
      listeners.clear();
      await Promise.all([...closing, shut(server)]);
    },
  };
}
