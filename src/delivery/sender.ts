/**
 * One delivery attempt: POST the signed body, wait at most the attempt timeout, and report what
 * happened in the terms of the retry schedule (status, Retry-After) plus what an operator reads in
 * the delivery log (duration, a short error). Redirects are not followed: a receiver that moved
 * must be re-registered, not silently chased (the signature covers the body, not the URL). Of an
 * error answer only the first few hundred bytes are read, and kept apart from the error
 * (`response`): the error is ours to word and every reader sees it; what the receiver said is shown
 * to admins only (review N8: a receiver chosen by an admin credential is otherwise a read channel
 * to every reader). A URL the egress rules refuse now (net/egress.ts, a setting changed since it
 * was accepted) is not contacted: the attempt fails with the reason, as an unreachable receiver's does. The platform's subrequest limit
 * (net/subrequest-budget.ts) is not an outcome of the attempt: it is thrown as a
 * SubrequestLimitError, so the receiver is never charged with it.
 */
import type { Clock } from "../clock.ts";
import { readBodyStart } from "../net/bounded-body.ts";
import { describeConnectionFailure } from "../net/connection-failure.ts";
import { type EgressRule, egressRefusal } from "../net/egress.ts";
import { isSubrequestLimit, SubrequestLimitError } from "../net/subrequest-budget.ts";
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
  /** Why the attempt failed, for the delivery log; absent on 2xx. Never the receiver's words. */
  error?: string;
  /** The start of the receiver's error answer (at most ERROR_BODY_CHARS): admins see it, readers do not. */
  response?: string;
}

export type Send = (request: DeliveryRequest) => Promise<SendResult>;

/** How much of an error answer's body the delivery log keeps, and how much is read for it. */
export const ERROR_BODY_CHARS = 200;
const ERROR_BODY_BYTES = 4 * ERROR_BODY_CHARS; // UTF-8: at most 4 bytes a character
export const USER_AGENT = "edge-informer-webhooks/1";

/**
 * Cloudflare's answers when it could not speak TLS with the receiver on the Worker's behalf: the
 * status alone reads like the receiver's own error.
 */
const CLOUDFLARE_TLS_STATUS: Record<number, string> = {
  525: "Cloudflare: TLS handshake with the receiver failed",
  526: "Cloudflare: the receiver's TLS certificate is invalid",
};

/** `egress`: the receivers' egress rule as the settings are now, checked before every attempt. */
export function httpSender(clock: Clock, fetchImpl: typeof fetch, egress: EgressRule): Send {
  return async ({ url, headers, body, timeoutMs }) => {
    const started = clock.now();
    const refusal = egressRefusal(url, egress);
    if (refusal !== undefined) return { durationMs: 0, error: `not sent: ${refusal}` };
    try {
      const response = await fetchImpl(url, {
        method: "POST",
        headers: { ...headers, "user-agent": USER_AGENT },
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
      const ok = response.status >= 200 && response.status < 300;
      const text = ok ? (await response.body?.cancel(), "") : (await readBodyStart(response, ERROR_BODY_BYTES)).text;
      const cause = CLOUDFLARE_TLS_STATUS[response.status];
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), clock.now());
      return {
        status: response.status,
        durationMs: elapsed(clock, started),
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(ok ? {} : { error: `HTTP ${response.status}${cause ? ` (${cause})` : ""}` }),
        ...(text ? { response: text.slice(0, ERROR_BODY_CHARS) } : {}),
      };
    } catch (error) {
      // Our invocation's limit, not the receiver's failure: the slice ends and this is sent again.
      if (isSubrequestLimit(error)) throw error instanceof SubrequestLimitError ? error : new SubrequestLimitError(errorMessage(error), { cause: error });
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

export const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

// A module function, not a closure per call: the bundler names every local arrow function at runtime.
export const elapsed = (clock: Clock, started: number) => Math.max(0, clock.now() - started);
