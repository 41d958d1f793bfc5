/**
 * What a failed fetch means, in words an operator can act on. workerd reports a refused
 * connection, a reset and a connection dropped mid-answer all as `Error: Network connection lost.`
 * (its log shows "Connection refused (os error 111)", the Error does not). For a loopback address —
 * local development, where a receiver or `kubectl proxy` that is not running is the usual cause —
 * one TCP connect tells the two apart. Elsewhere no probe is made (a Cloudflare-proxied host
 * refuses raw TCP from a Worker, which would read as a refusal), and the message names both causes.
 *
 * A failed TLS handshake (an untrusted, expired or mismatched certificate) reaches JavaScript only as
 * `Error: internal error; reference = …` (workerd logs "TLS handshake failed: invalid peer
 * certificate"; neither fetch nor a TLS socket says more): on an https URL that is named for what it
 * almost always is.
 */
import { connect } from "cloudflare:sockets";
import { isLoopbackHostname } from "./loopback.ts";

export const LOST_CONNECTION = "Network connection lost.";
/** How long the probe waits for a TCP handshake: a loopback answers in microseconds. */
const PROBE_TIMEOUT_MS = 1_000;

/** workerd's one message for a refused, reset or dropped connection. */
export function isLostConnection(error: unknown): boolean {
  return error instanceof Error && error.message === LOST_CONNECTION;
}

/** workerd's message for an exception it keeps to its log: from fetch, a failed TLS handshake among others. */
function isOpaqueInternalError(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("internal error; reference = ");
}

/** Whether a TCP connection to `host:port` opens: "refused", "open", or "unknown" (timed out, or not allowed). */
async function probe(hostname: string, port: number): Promise<"refused" | "open" | "unknown"> {
  let socket: ReturnType<typeof connect> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    socket = connect({ hostname: hostname.replace(/^\[|\]$/g, ""), port });
    const timeout = new Promise<"unknown">((resolve) => (timer = setTimeout(() => resolve("unknown"), PROBE_TIMEOUT_MS)));
    return await Promise.race([socket.opened.then(() => "open" as const), timeout]);
  } catch {
    return "refused";
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    socket?.close().catch(() => {});
  }
}

/**
 * The cause of a fetch to `url` that threw `error`: for workerd's "Network connection lost." to a
 * loopback address, whether the connection was refused (nothing listens there) or lost before an
 * answer; for its opaque internal error on https, the TLS handshake; otherwise the error's own message.
 */
export async function describeConnectionFailure(url: string, error: unknown): Promise<string> {
  const message = error instanceof Error ? error.message : String(error);
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return message;
  }
  if (isOpaqueInternalError(error) && target.protocol === "https:") {
    return `TLS handshake with ${target.host} failed (untrusted or invalid certificate?); workerd reports only "${message}"`;
  }
  if (!isLostConnection(error)) return message;
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  const where = `${target.hostname}:${port}`;
  if (!isLoopbackHostname(target.hostname)) return `the connection to ${where} was refused, reset or lost before an answer (${message})`;
  switch (await probe(target.hostname, port)) {
    case "refused":
      return `connection refused: nothing accepts connections at ${where} (is the server running?)`;
    case "open":
      return `the connection to ${where} was lost before an answer (${message})`;
    case "unknown":
      return `the connection to ${where} was refused, reset or lost before an answer (${message})`;
  }
}
