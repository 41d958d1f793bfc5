/**
 * One delivery attempt: POST the signed body, wait at most the attempt timeout, and report what
 * happened in the terms of the retry schedule (status, Retry-After) plus what an operator reads in
 * the delivery log (duration, a short error). Redirects are not followed: a receiver that moved
 * must be re-registered, not silently chased (the signature covers the body, not the URL).
 */
import type { Clock } from "../clock.ts";
import { type AttemptOutcome, parseRetryAfter } from "./retry-schedule.ts";
import type { SignedHeaders } from "./sign.ts";

export interface DeliveryRequest {
  url: string;
  headers: SignedHeaders;
  body: string;
  timeoutMs: number;
}

export interface SendResult extends AttemptOutcome {
  durationMs: number;
  /** Why the attempt failed, for the delivery log; absent on 2xx. */
  error?: string;
}

export type Send = (request: DeliveryRequest) => Promise<SendResult>;

/** How much of an error answer's body the delivery log keeps. */
const ERROR_BODY_CHARS = 200;
export const USER_AGENT = "edge-informer-webhooks/1";

export function httpSender(clock: Clock, fetchImpl: typeof fetch = fetch): Send {
  return async ({ url, headers, body, timeoutMs }) => {
    const started = clock.now();
    const elapsed = () => Math.max(0, clock.now() - started);
    try {
      const response = await fetchImpl(url, {
        method: "POST",
        headers: { ...headers, "user-agent": USER_AGENT },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      const ok = response.status >= 200 && response.status < 300;
      const text = ok ? (await response.body?.cancel(), "") : await response.text().catch(() => "");
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), clock.now());
      return {
        status: response.status,
        durationMs: elapsed(),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(ok ? {} : { error: `HTTP ${response.status}${text ? `: ${text.slice(0, ERROR_BODY_CHARS)}` : ""}` }),
      };
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      return {
        durationMs: elapsed(),
        error: timedOut
          ? `no answer within ${timeoutMs / 1000} s`
          : `request failed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  };
}
