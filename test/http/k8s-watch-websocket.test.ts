/**
 * `/k8s` watches over WebSocket (issue 30 item 1, review G2), through the Worker's front door: a
 * request with `Upgrade: websocket` gets a 101 and the HTTP watch's own events, one text message
 * each (kube-apiserver's watch handler HandleWS); a browser's bearer token travels in a subprotocol;
 * the server's end closes the socket with 1000; the client's close frees the watcher's place.
 * Before: the same request got a chunked 200, and Headlamp's handshake failed.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { BEARER_PROTOCOL_PREFIX, pumpEvents, WATCH_SOCKET_BUFFER_BYTES, type EventSocket } from "../../src/k8s/watch-websocket.ts";
import { pod } from "../fake-apiserver/client.ts";
import { json, startInCluster } from "../helpers/clusters.ts";
import { waitFor } from "../helpers/informer.ts";
import { relayedWatchers } from "../helpers/relay-stubs.ts";
import { readLines } from "../helpers/watch-lines.ts";

const base = "http://localhost/k8s";
const HEADLAMP_PROTOCOL = "base64.binary.k8s.io";

function k8s(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(new Request(`${base}${path}`, { headers }));
}

/** The headers a WebSocket client sends, offering `protocols`. */
function upgrade(protocols: string[] = []): Record<string, string> {
  return {
    upgrade: "websocket",
    connection: "Upgrade",
    "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    ...(protocols.length > 0 ? { "sec-websocket-protocol": protocols.join(", ") } : {}),
  };
}

/** Headlamp's encoding of a token: `btoa(token)` without padding (base64url for these tokens). */
const bearerProtocol = (token: string) => `${BEARER_PROTOCOL_PREFIX}${btoa(token).replace(/=/g, "")}`;

/** A WebSocket watch's client end: its messages as they come, and how it was closed. */
class SocketClient {
  readonly messages: (string | ArrayBuffer)[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly #waiters: (() => void)[] = [];

  readonly socket: WebSocket;

  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.accept();
    socket.addEventListener("message", (event) => {
      this.messages.push(event.data);
      this.#wake();
    });
    socket.addEventListener("close", (event) => {
      this.closed = { code: event.code, reason: event.reason };
      this.#wake();
    });
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Waits until `count` messages came or the socket closed (the timer only keeps a failing test from hanging). */
  async until(count: number, openMs = 10_000): Promise<void> {
    const deadline = Date.now() + openMs;
    while (this.messages.length < count && this.closed === undefined && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
  }

  /** The events of the messages so far. */
  get events(): { type: string; object: any }[] {
    return this.messages.map((message) => JSON.parse(message as string));
  }
}

/** Opens `path` as a WebSocket watch; the test fails unless it is a 101 with a socket. */
async function openSocket(path: string, protocols: string[] = [HEADLAMP_PROTOCOL], answer?: Response | Promise<Response>): Promise<{ client: SocketClient; response: Response }> {
  const response = await (answer ?? k8s(path, upgrade(protocols)));
  expect(response.status, response.status === 101 ? "" : await response.text()).toBe(101);
  expect(response.webSocket).toBeTruthy();
  return { client: new SocketClient(response.webSocket!), response };
}

describe("/k8s watches over WebSocket", () => {
  it("answers a 101 with the HTTP watch's events and bookmarks, one text message each, and the offered subprotocol", async () => {
    const { cluster, fake, remove } = await startInCluster("ws-events", {}, 3);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    // From "0": synthetic ADDED events for the three pods, the initial-events-end bookmark, then the
    // changes; both watches see the same.
    const query = "?watch=1&resourceVersion=0&allowWatchBookmarks=true";
    const http = await k8s(`${pods}${query}`);
    const lines = readLines(http.body!, 6);
    const { client, response } = await openSocket(`${pods}${query}`);
    expect(response.headers.get("sec-websocket-protocol")).toBe(HEADLAMP_PROTOCOL);
    await client.until(4);
    await fake.create("pods", pod({ name: "new-one", namespace: "ns-0" }));
    await fake.delete("pods", { metadata: { name: "new-one", namespace: "ns-0" } });
    await client.until(6);
    // Text frames, each the HTTP body's line with its newline, as the API server's encoder writes it.
    expect(client.messages.every((message) => typeof message === "string")).toBe(true);
    expect(client.messages).toEqual((await lines).map((line) => `${line}\n`));
    expect(client.events.map((event) => event.type)).toEqual(["ADDED", "ADDED", "ADDED", "BOOKMARK", "ADDED", "DELETED"]);
    expect(client.events[3]!.object.metadata.annotations).toMatchObject({ "k8s.io/initial-events-end": "true" });
    client.socket.close(1000);
    await remove();
  });

  it("answers no subprotocol when none is offered, and serves the deprecated /watch/ paths", async () => {
    const { cluster, remove } = await startInCluster("ws-plain", {}, 2);
    const { client, response } = await openSocket(`/clusters/${cluster}/api/v1/watch/namespaces/ns-0/pods?resourceVersion=0`, []);
    expect(response.headers.get("sec-websocket-protocol")).toBeNull();
    await client.until(2);
    expect(client.events.map((event) => event.type)).toEqual(["ADDED", "ADDED"]);
    client.socket.close(1000);
    await remove();
  });

  it("closes the socket normally (1000) where the HTTP stream ends: its deadline, and after a 410 ERROR event", async () => {
    const { cluster, remove } = await startInCluster("ws-ends", {}, 1);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const timed = await openSocket(`${pods}?watch=true&resourceVersion=0&timeoutSeconds=1`);
    await timed.client.until(Number.POSITIVE_INFINITY, 20_000);
    expect(timed.client.closed?.code).toBe(1000);
    expect(timed.client.events.map((event) => event.type)).toEqual(["ADDED"]);

    // An rv below what the cache holds: the HTTP stream is one ERROR 410 event, then its end.
    const http = await readLines((await k8s(`${pods}?watch=true&resourceVersion=1`)).body!, 2);
    expect(JSON.parse(http[0]!)).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
    const expired = await openSocket(`${pods}?watch=true&resourceVersion=1`);
    await expired.client.until(Number.POSITIVE_INFINITY, 20_000);
    expect(expired.client.messages).toEqual(http.map((line) => `${line}\n`));
    expect(expired.client.closed?.code).toBe(1000);
    await remove();
  });

  it("frees the watcher's place when the client closes the socket", async () => {
    const { cluster, fake, remove } = await startInCluster("ws-leave", {}, 1);
    const pods = `/clusters/${cluster}/api/v1/pods`;
    const rv = (await json(await k8s(pods))).metadata.resourceVersion;
    const { client } = await openSocket(`${pods}?watch=1&resourceVersion=${rv}`);
    expect(await relayedWatchers(cluster)).toBe(1);
    await fake.create("pods", pod({ name: "seen", namespace: "ns-0" }));
    await client.until(1);
    client.socket.close(1000);
    // The watcher learns its client left at its next write, as an HTTP watcher does.
    await fake.create("pods", pod({ name: "after-close", namespace: "ns-0" }));
    await waitFor("the relay to see its client leave", async () => (await relayedWatchers(cluster)) === 0 || undefined);
    await remove();
  });

  it("keeps refusals before the upgrade plain HTTP Status answers (a bad option: 400)", async () => {
    const { cluster, remove } = await startInCluster("ws-refused", {}, 1);
    const response = await k8s(`/clusters/${cluster}/api/v1/pods?watch=1&fieldSelector=spec.unknown%3Dx`, upgrade([HEADLAMP_PROTOCOL]));
    expect(response.status).toBe(400);
    expect(response.webSocket).toBeFalsy();
    expect(await json(response)).toMatchObject({ kind: "Status", code: 400 });
    await remove();
  });

  it("refuses a page of another site that brings no token of its own (403: cross-site WebSocket hijacking), and serves its own pages", async () => {
    const { cluster, remove } = await startInCluster("ws-origin", {}, 1);
    const watch = `/clusters/${cluster}/api/v1/pods?watch=1&resourceVersion=0`;
    // ALLOW_UNAUTHENTICATED serves loopback: a page elsewhere must not read the cache through its visitor's browser.
    const sites: Record<string, string>[] = [{ origin: "https://evil.example" }, { "sec-fetch-site": "cross-site", origin: "https://evil.example" }];
    for (const site of sites) {
      const refused = await k8s(watch, { ...upgrade([HEADLAMP_PROTOCOL]), ...site });
      expect(refused.status).toBe(403);
      expect(refused.webSocket).toBeFalsy();
      expect((await json(refused)).message).toContain("its own token");
    }
    const own = await openSocket(watch, [], k8s(watch, { ...upgrade([HEADLAMP_PROTOCOL]), origin: "http://localhost" }));
    await own.client.until(1);
    expect(own.client.events.map((event) => event.type)).toEqual(["ADDED"]);
    own.client.socket.close(1000);
    await remove();
  });
});

describe("a browser's bearer token in a WebSocket subprotocol", () => {
  const app = createApp();
  const readToken = `ws-reader-${"x".repeat(32)}`;
  /** A deployment whose reads need READ_TOKEN. */
  const deployment = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: readToken, TOKENS: undefined } as typeof env;
  const request = (path: string, headers: Record<string, string>) => app.request(`${base}${path}`, { headers }, deployment);

  it("accepts the token as Headlamp sends it, answering the other subprotocol, and refuses a wrong one, a missing one and a token alone (401)", async () => {
    const { cluster, remove } = await startInCluster("ws-token", {}, 1);
    const watch = `/clusters/${cluster}/api/v1/pods?watch=1&resourceVersion=0`;
    const { client, response } = await openSocket(watch, [], request(watch, upgrade([HEADLAMP_PROTOCOL, bearerProtocol(readToken)])));
    expect(response.headers.get("sec-websocket-protocol")).toBe(HEADLAMP_PROTOCOL);
    await client.until(1);
    expect(client.events.map((event) => event.type)).toEqual(["ADDED"]);
    client.socket.close(1000);
    // A page of another site that presents its token (Headlamp, served from its own origin) is served.
    const elsewhere = await openSocket(watch, [], request(watch, { ...upgrade([HEADLAMP_PROTOCOL, bearerProtocol(readToken)]), origin: "https://headlamp.example" }));
    await elsewhere.client.until(1);
    expect(elsewhere.client.events.map((event) => event.type)).toEqual(["ADDED"]);
    elsewhere.client.socket.close(1000);

    for (const [what, protocols] of [
      ["a wrong token", [HEADLAMP_PROTOCOL, bearerProtocol(`wrong-${readToken}`)]],
      ["no token", [HEADLAMP_PROTOCOL]],
      ["a token subprotocol alone (nothing to answer with)", [bearerProtocol(readToken)]],
      ["two token subprotocols", [HEADLAMP_PROTOCOL, bearerProtocol(readToken), bearerProtocol(readToken)]],
      ["a token that is not base64", [HEADLAMP_PROTOCOL, `${BEARER_PROTOCOL_PREFIX}not*base64`]],
    ] as const) {
      const refused = await request(watch, upgrade([...protocols]));
      expect(refused.status, what).toBe(401);
      expect(refused.webSocket, what).toBeFalsy();
      const status = await json(refused);
      expect(status, what).toMatchObject({ kind: "Status", code: 401 });
      expect(JSON.stringify(status), what).not.toContain(readToken);
    }
    // Only a WebSocket request's subprotocols carry a token: a plain request's header is not read.
    const plain = await request(watch, { "sec-websocket-protocol": `${HEADLAMP_PROTOCOL}, ${bearerProtocol(readToken)}` });
    expect(plain.status).toBe(401);
    await plain.body?.cancel();
    await remove();
  });
});

describe("the WebSocket pump", () => {
  /** A socket whose unsent bytes the test sets; it records what it was sent and its close. */
  function fakeSocket(): EventSocket & { sent: string[]; closedWith?: number; bufferedAmount: number; leave(): void } {
    const listeners: (() => void)[] = [];
    return {
      sent: [],
      bufferedAmount: 0,
      send(message) {
        this.sent.push(message);
      },
      close(code) {
        this.closedWith = code;
      },
      addEventListener(_type, listener) {
        listeners.push(listener);
      },
      leave() {
        for (const listener of listeners) listener();
      },
    };
  }

  /** A stream of `chunks`, counting how many were pulled. */
  function source(chunks: string[]): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
    let pulled = 0;
    const encoder = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (pulled === chunks.length) return controller.close();
          controller.enqueue(encoder.encode(chunks[pulled++]!));
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, pulled: () => pulled };
  }

  it("sends whole lines only, one message each, across cut chunks, and closes with 1000 at the end", async () => {
    const socket = fakeSocket();
    const { stream } = source(['{"type":"ADDED","object":{"a":', '1}}\n{"type":"BOOKMARK"', ',"object":{}}\n{"cut":']);
    await pumpEvents(stream, socket);
    expect(socket.sent).toEqual(['{"type":"ADDED","object":{"a":1}}\n', '{"type":"BOOKMARK","object":{}}\n']);
    expect(socket.closedWith).toBe(1000);
  });

  it("reads no more of the watch while the socket holds more than WATCH_SOCKET_BUFFER_BYTES, and stops when the client leaves", async () => {
    const socket = fakeSocket();
    const { stream, pulled } = source(Array.from({ length: 10 }, (_, i) => `{"n":${i}}\n`));
    socket.bufferedAmount = WATCH_SOCKET_BUFFER_BYTES + 1; // a client that reads nothing
    const pulledWhileFull: number[] = [];
    await pumpEvents(stream, socket, async () => {
      pulledWhileFull.push(pulled());
      if (pulledWhileFull.length === 3) socket.leave(); // then closes: the pump stops waiting and cancels the watch
    });
    // One chunk read and sent, then only waits: the rest stays in the watch's queue, whose rule applies.
    expect(pulledWhileFull).toEqual([1, 1, 1]);
    expect(socket.sent).toEqual(['{"n":0}\n']);
    expect(pulled()).toBe(1);
    expect(socket.closedWith).toBe(1000);
  });
});
