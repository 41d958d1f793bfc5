/** Bounded waiting and loopback ports for the end-to-end harness. Nothing here waits without a deadline. */
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** Starts `server` on a free loopback port and answers the port. */
export function listenOnLoopback(server: import("node:net").Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
}

/** A port free on 127.0.0.1 at the time of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Named in the timeout error: "the pods informer to sync". */
  what: string;
  /** Whether an error thrown by `check` means "not yet" (default) rather than "give up now". */
  retryErrors?: (error: unknown) => boolean;
}

/**
 * Calls `check` until it returns a value other than false/undefined, and resolves to that value;
 * rejects after `timeoutMs` with the last error or value seen, so a failure says what was missing.
 */
export async function waitFor<T>(check: () => T | false | undefined | Promise<T | false | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== false && value !== undefined) return value;
      last = value;
    } catch (error) {
      if (options.retryErrors && !options.retryErrors(error)) throw error;
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what} (last: ${detail})`);
    }
    await sleep(options.intervalMs ?? 100);
  }
}

/**
 * Forwards `req` to `url` and streams the answer back to `res`, headers flushed at once (a watch
 * must not wait for its first event). `onAnswer` sees the answer before it is piped; `onClose` runs
 * when the client side closes. Errors end the exchange on both sides.
 */
export function forward(
  req: import("node:http").IncomingMessage,
  res: import("node:http").ServerResponse,
  url: URL,
  hooks: { onAnswer?: (answer: import("node:http").IncomingMessage) => void; onClose?: () => void } = {},
): void {
  const upstream = httpRequest(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (answer) => {
    hooks.onAnswer?.(answer);
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    res.flushHeaders();
    answer.pipe(res);
    answer.on("error", () => res.destroy());
  });
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(502).end();
    else res.destroy();
  });
  res.on("error", () => upstream.destroy());
  res.on("close", () => {
    hooks.onClose?.();
    upstream.destroy();
  });
  req.pipe(upstream);
}
