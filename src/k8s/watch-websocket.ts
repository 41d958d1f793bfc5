/**
 * A `/k8s` watch over WebSocket (issue 30 item 1, review G2), as kube-apiserver's watch handler
 * serves one (apiserver `pkg/endpoints/handlers/watch.go` HandleWS): browsers cannot read a chunked
 * watch body with headers of their own, so dashboards (Headlamp) open
 * `new WebSocket("wss://…/pods?watch=1&…", ["base64.binary.k8s.io", "base64url.bearer.authorization.k8s.io.<token>"])`.
 *
 * Guarantees:
 * - A request is a WebSocket request when its `Upgrade` header is `websocket` (wsstream
 *   IsWebSocketRequest); the watch it opens is the HTTP watch's own stream (same events, bookmarks,
 *   ERROR events, ends, caps, credentials, relays: http/k8s-watch.ts opens it once for both).
 * - Each watch event is one text message: the event's JSON line with its newline, byte for byte what
 *   the HTTP body carries (the API server's JSON encoder writes `{…}\n` in one write, and its
 *   websocket framer sends each write as one text frame, whatever the subprotocol: the base64 and
 *   binary channel protocols only frame exec/attach/port-forward streams).
 * - The answered subprotocol is the first one offered other than the bearer token's; none when none
 *   is offered. (The API server answers the single one left after removing the token's, and 400 when
 *   two are left; answering the first serves every client that works there.) Browsers fail a
 *   handshake that offered subprotocols and got none back, so, as the API server does, a token
 *   subprotocol alone is refused (401): there would be nothing to answer with.
 * - The bearer token subprotocol (apiserver `authentication/request/websocket/protocol.go`):
 *   `base64url.bearer.authorization.k8s.io.` + the token in unpadded base64url. Standard base64 is
 *   read too (Headlamp's frontend and backend send `btoa(token)` without padding), and padding is
 *   tolerated. Two token subprotocols, an undecodable one or an empty token are refused (401). The
 *   token is never logged or echoed.
 * - Cross-site WebSocket hijacking: browsers let any page open a WebSocket to any host, send that
 *   host's cookies and Basic credentials with it, and read what it answers (no CORS). So a request a
 *   browser sends from another site (`Sec-Fetch-Site`, else `Origin`, as http/validate.ts reads
 *   them) is served only with a token the page itself presents — a bearer subprotocol or
 *   `Authorization: Bearer` — never on ambient credentials alone (a Cloudflare Access cookie, Basic
 *   credentials, ALLOW_UNAUTHENTICATED's loopback): 403 before the watch opens. Headlamp, served
 *   from its own origin, presents its token. The API server checks only that an Origin parses.
 * - The server's end of the stream closes the socket normally (1000); the client's close (or a
 *   failed socket) cancels the stream, so its watcher leaves and its place under the caps frees as
 *   an HTTP client's does when it goes away (watch-body.ts).
 * - Bounded: after each chunk of events the pump waits while the socket holds more than
 *   WATCH_SOCKET_BUFFER_BYTES unsent, reading nothing meanwhile, so a slow client's events queue in
 *   its watch queue, whose rule closes unresponsive clients (watch-queues.ts), not in the socket.
 *   This needs a runtime that reports `bufferedAmount`: workerd 1.20261102 does not
 *   (cloudflare/workerd#988), and there messages go to the runtime's own send queue as they are read.
 */

/** The subprotocol prefix that carries a bearer token (the API server's bearerProtocolPrefix). */
export const BEARER_PROTOCOL_PREFIX = "base64url.bearer.authorization.k8s.io.";

/** Bytes a watch socket may hold unsent before its pump stops reading the watch (where the runtime reports them). */
export const WATCH_SOCKET_BUFFER_BYTES = 256 * 1024;

/** How often a pump waiting for its socket to drain looks again. */
const DRAIN_POLL_MS = 50;

/** Close code of a normal end (RFC 6455 §7.4.1). */
const NORMAL_CLOSURE = 1000;

/** Whether the request asks to upgrade to a WebSocket. */
export function isWebSocketRequest(headers: Headers): boolean {
  return headers.get("upgrade")?.trim().toLowerCase() === "websocket";
}

/** The subprotocols the client offered, in its order (`Sec-WebSocket-Protocol`, comma separated). */
function offeredProtocols(headers: Headers): string[] {
  return (headers.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter((protocol) => protocol !== "");
}

const isBearerProtocol = (protocol: string) => protocol.startsWith(BEARER_PROTOCOL_PREFIX);

/** The token of a bearer subprotocol: base64url or standard base64, padded or not, of UTF-8 without spaces; undefined if not one. */
function decodeToken(encoded: string): string | undefined {
  if (!/^[A-Za-z0-9\-_+/]+=*$/.test(encoded)) return undefined;
  const base64 = encoded.replace(/=+$/, "").replaceAll("-", "+").replaceAll("_", "/");
  try {
    const bytes = Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
    const token = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return /^\S+$/.test(token) ? token : undefined;
  } catch {
    return undefined;
  }
}

/** What a WebSocket request's subprotocols present: a bearer token, a reason to refuse them, or nothing. */
export type SubprotocolCredential = { token: string } | { refused: string } | undefined;

/** The bearer token a WebSocket request carries in its subprotocols (none for other requests). */
export function subprotocolCredential(headers: Headers): SubprotocolCredential {
  if (!isWebSocketRequest(headers)) return undefined;
  const offered = offeredProtocols(headers);
  const bearers = offered.filter(isBearerProtocol);
  if (bearers.length === 0) return undefined;
  if (bearers.length > 1) return { refused: `more than one ${BEARER_PROTOCOL_PREFIX}<token> subprotocol` };
  if (bearers.length === offered.length) {
    return { refused: `a ${BEARER_PROTOCOL_PREFIX}<token> subprotocol needs another subprotocol to be answered with (base64.binary.k8s.io)` };
  }
  const token = decodeToken(bearers[0]!.slice(BEARER_PROTOCOL_PREFIX.length));
  return token === undefined ? { refused: `the ${BEARER_PROTOCOL_PREFIX}<token> subprotocol is not the unpadded base64url of a token` } : { token };
}

/** Whether a browser sent this request from another site than `url`'s (http/validate.ts reads the same headers). */
function fromAnotherSite(headers: Headers, url: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null) return site !== "same-origin" && site !== "none";
  const origin = headers.get("origin");
  return origin !== null && origin !== new URL(url).origin;
}

/**
 * Why a WebSocket request may not be served on the credentials it carries: one from another site
 * without a token of its own (see the contract). Undefined when it may.
 */
export function crossSiteRefusal(headers: Headers, url: string): string | undefined {
  if (!isWebSocketRequest(headers) || !fromAnotherSite(headers, url)) return undefined;
  const presented = subprotocolCredential(headers);
  if (/^Bearer\s/i.test(headers.get("authorization") ?? "") || (presented !== undefined && "token" in presented)) return undefined;
  return `a page of another site may open a WebSocket watch only with its own token (the ${BEARER_PROTOCOL_PREFIX}<token> subprotocol), not on this browser's cookies or stored credentials`;
}

/** The subprotocol a WebSocket watch answers with: the first offered that carries no token. */
export function answeredProtocol(headers: Headers): string | undefined {
  return offeredProtocols(headers).find((protocol) => !isBearerProtocol(protocol));
}

/** The part of a server-side WebSocket the pump uses (a fake in tests). */
export interface EventSocket {
  send(message: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "close" | "error", listener: () => void): void;
  /** Bytes sent and not yet written out; undefined where the runtime does not report it. */
  readonly bufferedAmount?: number;
}

/** Waits `ms` milliseconds (a fake in tests). */
export type Wait = (ms: number) => Promise<void>;
const sleep: Wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends each newline-ended line of `body` as one message, then closes `socket` normally; stops
 * reading (cancels `body`) when the client closes. A line the body never ended is not sent: the
 * client sees the events before it, as an HTTP client reading whole lines does.
 */
export async function pumpEvents(body: ReadableStream<Uint8Array>, socket: EventSocket, wait: Wait = sleep): Promise<void> {
  const reader = body.getReader();
  let clientGone = false;
  const leave = () => {
    if (clientGone) return;
    clientGone = true;
    reader.cancel().catch(() => {});
  };
  socket.addEventListener("close", leave);
  socket.addEventListener("error", leave);
  const decoder = new TextDecoder();
  let partial = "";
  try {
    while (!clientGone) {
      const chunk = await reader.read();
      if (chunk.done || clientGone) break;
      const lines = (partial + decoder.decode(chunk.value, { stream: true })).split("\n");
      partial = lines.pop()!;
      for (const line of lines) if (line !== "") socket.send(`${line}\n`);
      while (!clientGone && (socket.bufferedAmount ?? 0) > WATCH_SOCKET_BUFFER_BYTES) await wait(DRAIN_POLL_MS);
    }
  } catch {
    // The body ends normally whatever its source does (watch-body.ts); a read that fails anyway is an end.
  } finally {
    reader.releaseLock();
  }
  // Also answers a client's close (a runtime that replies by itself makes this a no-op, or throws).
  try {
    socket.close(NORMAL_CLOSURE, clientGone ? "" : "watch ended");
  } catch {
    // already closed
  }
}

/** The 101 answer to a WebSocket watch request: `body`'s events, one message each, on a new socket. */
export function webSocketWatch(body: ReadableStream<Uint8Array>, headers: Headers): Response {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  void pumpEvents(body, server);
  const protocol = answeredProtocol(headers);
  return new Response(null, { status: 101, webSocket: client, headers: protocol === undefined ? {} : { "sec-websocket-protocol": protocol } });
}
