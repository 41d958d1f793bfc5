/**
 * `/k8s` watches over WebSocket with real clients against `wrangler dev` (issue 30 item 1, review G2):
 * Node's WebSocket (undici's, global since Node 22) and Chromium's, opened as Headlamp's frontend opens
 * them — `new WebSocket(url, ["base64.binary.k8s.io", "base64url.bearer.authorization.k8s.io.<btoa(token)>"])`
 * — while the fake cluster churns. Each gets every change in order, one event per message, the same
 * as the fake API server's own watch from that resourceVersion; a wrong token is refused before the
 * upgrade. Before: a chunked 200, and the handshake failed in both clients.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { churnNamespace, type WatchedChange } from "./churn.ts";
import { ensureChromium, launchChromium } from "./chromium.ts";
import { e2e, fakeCluster } from "./context.ts";
import { CHURN_WATCH_NAMESPACE } from "./fixtures.ts";
import { waitFor } from "./wait.ts";

const OPERATIONS = 20;
const WAIT_MS = 20_000;
const HEADLAMP_PROTOCOL = "base64.binary.k8s.io";
const PODS = `/api/v1/namespaces/${CHURN_WATCH_NAMESPACE}/pods`;

interface WatchEvent {
  type: string;
  object: { metadata: { name: string; resourceVersion: string }; status?: { phase?: string } };
}

/** Headlamp's subprotocols for a token (frontend `connectStreamWithParams`: `btoa(token)` without padding). */
const headlampProtocols = (token: string) => [HEADLAMP_PROTOCOL, `base64url.bearer.authorization.k8s.io.${btoa(token).replace(/=/g, "")}`];

const asChanges = (events: WatchEvent[]): WatchedChange[] =>
  events.map(({ type, object }) => ({
    type: type as WatchedChange["type"],
    name: object.metadata.name,
    resourceVersion: object.metadata.resourceVersion,
    phase: String(object.status?.phase),
  }));

/** The edge's list resourceVersion of the churn namespace: where both watches start. */
async function listedRv(): Promise<string> {
  const { k8sUrl, readToken } = e2e();
  const response = await fetch(`${k8sUrl}${PODS}`, { headers: { authorization: `Bearer ${readToken}` }, signal: AbortSignal.timeout(10_000) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

/** The fake API server's own HTTP watch from `rv`: its events as they come. */
function fakeWatch(rv: string): { events: WatchEvent[]; stop: () => void } {
  const events: WatchEvent[] = [];
  const controller = new AbortController();
  void (async () => {
    const response = await fetch(`${fakeCluster().url}${PODS}?watch=true&resourceVersion=${rv}`, { signal: controller.signal });
    const decoder = new TextDecoder();
    let partial = "";
    const reader = response.body!.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      const lines = (partial + decoder.decode(chunk.value, { stream: true })).split("\n");
      partial = lines.pop()!;
      for (const line of lines) if (line.trim() !== "") events.push(JSON.parse(line) as WatchEvent);
    }
  })().catch(() => {});
  return { events, stop: () => controller.abort() };
}

/** Node's WebSocket on the edge's watch from `rv`: its messages, its answered subprotocol, its close. */
async function nodeSocket(rv: string, protocols: string[]): Promise<{ messages: string[]; protocol: string; closed: () => number | undefined; close: () => void }> {
  const url = `${e2e().k8sUrl.replace(/^http/, "ws")}${PODS}?watch=1&resourceVersion=${rv}`;
  const socket = new WebSocket(url, protocols);
  const messages: string[] = [];
  let closedWith: number | undefined;
  socket.addEventListener("message", (event) => messages.push(event.data as string));
  socket.addEventListener("close", (event) => (closedWith = event.code));
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve());
    socket.addEventListener("error", () => reject(new Error(`the WebSocket to ${url.replace(/\?.*/, "")} did not open`)));
  });
  return { messages, protocol: socket.protocol, closed: () => closedWith, close: () => socket.close(1000) };
}

/** The status the edge answers a WebSocket handshake with (101, or the refusal's). */
function handshakeStatus(protocols: string[]): Promise<number> {
  const url = new URL(`${e2e().k8sUrl}${PODS}?watch=1`);
  return new Promise((resolve, reject) => {
    const req = request(url, {
      headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": protocols.join(", ") },
      timeout: 10_000,
    });
    req.on("upgrade", (response, socket) => {
      socket.destroy();
      resolve(response.statusCode ?? 0);
    });
    req.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Churns the namespace and waits until `received()` has as many events as the churn made changes. */
async function churnAndWait(received: () => WatchEvent[][]): Promise<WatchedChange[]> {
  const changes = await churnNamespace(fakeCluster(), { namespace: CHURN_WATCH_NAMESPACE, seed: 3030, operations: OPERATIONS });
  await waitFor(() => received().every((events) => events.length >= changes.length) || undefined, {
    timeoutMs: WAIT_MS,
    what: `${changes.length} events on every watch (got ${received().map((events) => events.length).join(", ")})`,
  }).catch(() => {});
  return changes;
}

describe("/k8s watches over WebSocket, Node's client", () => {
  it("delivers every change in order, one event per text message, as the fake API server's watch does", async () => {
    const rv = await listedRv();
    const fake = fakeWatch(rv);
    const edge = await nodeSocket(rv, headlampProtocols(e2e().readToken));
    try {
      expect(edge.protocol).toBe(HEADLAMP_PROTOCOL);
      const events = () => edge.messages.map((message) => JSON.parse(message) as WatchEvent);
      const changes = await churnAndWait(() => [events(), fake.events]);
      expect(edge.messages.every((message) => message.endsWith("}\n") && message.indexOf("\n") === message.length - 1)).toBe(true);
      expect(asChanges(events())).toEqual(changes);
      expect(asChanges(fake.events)).toEqual(changes);
      expect(events().map((event) => event.object)).toEqual(fake.events.map((event) => event.object));
    } finally {
      edge.close();
      fake.stop();
    }
  });

  it("closes normally (1000) at the watch's deadline, and refuses a wrong or missing token before the upgrade (401)", async () => {
    const { k8sUrl, readToken } = e2e();
    const socket = new WebSocket(`${k8sUrl.replace(/^http/, "ws")}${PODS}?watch=1&resourceVersion=${await listedRv()}&timeoutSeconds=1`, headlampProtocols(readToken));
    const code = await new Promise<number>((resolve) => socket.addEventListener("close", (event) => resolve(event.code)));
    expect(code).toBe(1000);
    expect(await handshakeStatus(headlampProtocols(readToken))).toBe(101);
    expect(await handshakeStatus(headlampProtocols(`wrong-${readToken}`))).toBe(401);
    expect(await handshakeStatus([HEADLAMP_PROTOCOL])).toBe(401);
    expect(e2e().workerLog).not.toContain(btoa(readToken).replace(/=/g, ""));
  });
});

const CHROMIUM_MISSING = ensureChromium();
if (CHROMIUM_MISSING) console.warn(`WebSocket watch browser test skipped: ${CHROMIUM_MISSING}`);
const suite = (title: string) => (CHROMIUM_MISSING === undefined ? title : `${title} [skipped: ${CHROMIUM_MISSING}]`);

describe.skipIf(CHROMIUM_MISSING !== undefined)(suite("/k8s watches over WebSocket, Chromium as Headlamp opens them"), () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("delivers every change in order, as the fake API server's watch does", async () => {
    const page = await browser.newPage();
    try {
      // A page of another origin (the fake API server's), as Headlamp's frontend is served by its own
      // backend: the socket carries that Origin, and the token lets it through (a page of another
      // site without a token of its own is refused: cross-site WebSocket hijacking).
      await page.goto(`${new URL(fakeCluster().url).origin}/healthz`);
      const rv = await listedRv();
      const fake = fakeWatch(rv);
      const url = `${e2e().k8sUrl.replace(/^http/, "ws")}${PODS}?watch=1&resourceVersion=${rv}`;
      const protocol = await page.evaluate(
        ({ url, protocols }) =>
          new Promise<string>((resolve, reject) => {
            // Headlamp's connectStreamWithParams: binaryType arraybuffer, each message JSON.parse'd.
            const socket = new WebSocket(url, protocols);
            socket.binaryType = "arraybuffer";
            const events: unknown[] = [];
            (globalThis as unknown as { watched: unknown[] }).watched = events;
            socket.addEventListener("message", (message) => events.push(JSON.parse(message.data as string)));
            socket.addEventListener("open", () => resolve(socket.protocol));
            socket.addEventListener("error", () => reject(new Error("the WebSocket did not open")));
          }),
        { url, protocols: headlampProtocols(e2e().readToken) },
      );
      expect(protocol).toBe(HEADLAMP_PROTOCOL);
      let watched: WatchEvent[] = [];
      const changes = await churnNamespace(fakeCluster(), { namespace: CHURN_WATCH_NAMESPACE, seed: 3031, operations: OPERATIONS });
      await waitFor(
        async () => {
          watched = (await page.evaluate(() => (globalThis as unknown as { watched: unknown[] }).watched)) as WatchEvent[];
          return (watched.length >= changes.length && fake.events.length >= changes.length) || undefined;
        },
        { timeoutMs: WAIT_MS, what: `${changes.length} events in Chromium and from the fake API server` },
      ).catch(() => {});
      fake.stop();
      expect(asChanges(watched)).toEqual(changes);
      expect(asChanges(fake.events)).toEqual(changes);
    } finally {
      await page.close();
    }
  });
});
