/**
 * One delivery attempt: POST the signed body, wait at most the attempt timeout, and report what
 * happened in the terms of the retry schedule (status, Retry-After) plus what an operator reads in
 * the delivery log (duration, a short error). Redirects are not followed: a receiver that moved
 * must be re-registered, not silently chased (the signature covers the body, not the URL). Of an
 * error answer only the first few hundred bytes are read.
 */
import type { Clock } from "../clock.ts";
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { type AttemptOutcome, parseRetryAfter } from "./retry-schedule.ts";
import type { SignedHeaders } from "./sign.ts";

/** Names the cluster of every event in the request (also in each event's body, `cluster`). */
export const CLUSTER_HEADER = "x-edge-informer-cluster";

export interface DeliveryRequest {
  url: string;
  headers: SignedHeaders & { [CLUSTER_HEADER]?: string };
  body: string;
  timeoutMs: number;
}

export interface SendResult extends AttemptOutcome {
  durationMs: number;
  /** Why the attempt failed, for the delivery log; absent on 2xx. */
  error?: string;
}

export type Send = (request: DeliveryRequest) => Promise<SendResult>;

/** How much of an error answer's body the delivery log keeps, and how much is read for it. */
const ERROR_BODY_CHARS = 200;
const ERROR_BODY_BYTES = 4 * ERROR_BODY_CHARS; // UTF-8: at most 4 bytes a character
export const USER_AGENT = "edge-informer-webhooks/1";

export function httpSender(clock: Clock, fetchImpl: typeof fetch = fetch): Send {
  return async ({ url, headers, body, timeoutMs }) => {
    const started = clock.now();
    try {
      const response = await fetchImpl(url, {
        method: "POST",
        headers: { ...headers, "user-agent": USER_AGENT },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      const ok = response.status >= 200 && response.status < 300;
      const text = ok ? (await response.body?.cancel(), "") : await bodyStart(response, ERROR_BODY_BYTES);
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), clock.now());
      return {
        status: response.status,
        durationMs: elapsed(clock, started),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(ok ? {} : { error: `HTTP ${response.status}${text ? `: ${text.slice(0, ERROR_BODY_CHARS)}` : ""}` }),
      };
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      return {
        durationMs: elapsed(clock, started),
        error: timedOut
          ? `no answer within ${timeoutMs / 1000} s`
          : `request failed: ${await describeConnectionFailure(url, error)}`,
      };
    }
  };
}

// A module function, not a closure per call: the bundler names every local arrow function at runtime.
const elapsed = (clock: Clock, started: number) => Math.max(0, clock.now() - started);

/**
 * The first `maxBytes` of a body as text; the rest is cancelled unread. An error page can be large
 * or endless, and the delivery log keeps only its start (#7.13).
 */
async function bodyStart(response: Response, maxBytes: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const bytes = new Uint8Array(maxBytes);
  let length = 0;
  try {
    while (length < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, maxBytes - length);
      bytes.set(part, length);
      length += part.length;
    }
  } catch {
    // a body cut short still has its start
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(bytes.subarray(0, length));
}
