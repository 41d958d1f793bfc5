/**
 * A loopback HTTP proxy between a client and the Worker that records each Kubernetes request and can
 * force a client back to an expired resourceVersion: `expireNextWatch()` ends the open watch streams
 * and rewrites the next watch's `resourceVersion` to one older than anything the Worker's log holds,
 * so the Worker itself must answer 410 Expired (as an HTTP 410 or an ERROR event), as a real API
 * server does for a client that reconnects after the history it needs was compacted.
 * `refuse()` makes it an API server that is down: it stops listening (connections are refused) and
 * cuts the open exchanges; `accept()` listens again on the same port, so the client's URL stays.
 * `retarget(url)` sends later requests to another address (a restarted Worker listens on a new
 * port), so that to the client the server is the same one that was down for a while.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { forward, listenOnLoopback } from "./wait.ts";

export interface ProxiedRequest {
  time: number;
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  status: number;
  /** The watch whose resourceVersion this proxy rewrote. */
  rewritten: boolean;
  /** A 410 answer, or a watch stream carrying an ERROR event with code 410. */
  expired: boolean;
}

export interface WatchProxy {
  url: string;
  requests: ProxiedRequest[];
  expireNextWatch(): void;
  retarget(target: string): void;
  refuse(): Promise<void>;
  accept(): Promise<void>;
  close(): Promise<void>;
}

/** The revision the fake cluster starts at: older than every object it ever stored, so never in a log. */
const EXPIRED_RV = "1";

export async function startWatchProxy(target: string): Promise<WatchProxy> {
  let targetUrl = new URL(target);
  /** Open watch responses, each with how to end it cleanly. */
  const openWatches = new Map<ServerResponse, () => void>();
  const requests: ProxiedRequest[] = [];
  let expireNext = false;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // Under the target's own path, if it has one (a fake cluster's API root is /clusters/{id}).
    const url = new URL(`${targetUrl.pathname.replace(/\/$/, "")}${req.url ?? "/"}`, targetUrl);
    const watch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
    const record: ProxiedRequest = {
      time: Date.now(),
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      watch,
      status: 0,
      rewritten: false,
      expired: false,
    };
    if (watch && expireNext) {
      expireNext = false;
      url.searchParams.set("resourceVersion", EXPIRED_RV);
      record.rewritten = true;
    }
    requests.push(record);
    forward(req, res, url, {
      onAnswer: (answer) => {
        record.status = answer.statusCode ?? 0;
        if (record.status === 410) record.expired = true;
        if (!watch) return;
        openWatches.set(res, () => {
          answer.unpipe(res);
          answer.destroy();
          res.end();
        });
        answer.on("data", (chunk: Buffer) => {
          if (/"type":\s*"ERROR"[\s\S]*"code":\s*410/.test(chunk.toString())) record.expired = true;
        });
      },
      onClose: () => openWatches.delete(res),
    });
  });
  const port = await listenOnLoopback(server);
  const stopListening = () =>
    new Promise<void>((resolve) => {
      for (const res of openWatches.keys()) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    expireNextWatch() {
      expireNext = true;
      // Ending the streams cleanly makes the client reconnect at once with its last resourceVersion.
      for (const end of [...openWatches.values()]) end();
    },
    retarget(next: string) {
      targetUrl = new URL(next);
    },
    refuse: stopListening,
    accept: () =>
      new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => {
          server.off("error", reject);
          resolve();
        });
      }),
    close: () => (server.listening ? stopListening() : Promise.resolve()),
  };
}
