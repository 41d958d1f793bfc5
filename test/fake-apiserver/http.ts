/**
 * Small node:http helpers shared by the handlers: JSON bodies in and out, Status responses with the
 * apiserver's Retry-After behaviour, and a streamed JSON writer that respects back-pressure so a
 * list of 100k objects never has to exist as one string.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest, StatusError, type KubeStatus } from "./status.ts";

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    "cache-control": "no-cache, private",
    ...headers,
  });
  res.end(text);
}

/** A Status answer; like responsewriters.ErrorNegotiated, details.retryAfterSeconds also sets Retry-After. */
export function sendStatus(res: ServerResponse, s: KubeStatus): void {
  const headers: Record<string, string> = {};
  const retry = s.details?.retryAfterSeconds;
  if (retry !== undefined && retry > 0) headers["retry-after"] = String(retry);
  sendJson(res, s.code, s, headers);
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new StatusError(badRequest("request body too large"));
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new StatusError(badRequest(`request body is not JSON: ${(error as Error).message}`));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Buffers small writes into ~64 KiB chunks and waits for 'drain' when the socket is full. Once the
 * client has gone away every call resolves at once and `gone` is true, so callers just stop.
 */
export class ChunkedWriter {
  private readonly res: ServerResponse;
  private buffer: string[] = [];
  private buffered = 0;

  constructor(res: ServerResponse) {
    this.res = res;
  }

  get gone(): boolean {
    return this.res.destroyed;
  }

  async write(text: string): Promise<void> {
    this.buffer.push(text);
    this.buffered += text.length;
    if (this.buffered >= 64 * 1024) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.buffered === 0 || this.gone) return;
    const data = this.buffer.join("");
    this.buffer = [];
    this.buffered = 0;
    if (this.res.write(data)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.res.off("drain", done);
        this.res.off("close", done);
        resolve();
      };
      this.res.once("drain", done);
      this.res.once("close", done);
    });
  }

  async end(): Promise<void> {
    await this.flush();
    if (!this.gone) this.res.end();
  }
}
