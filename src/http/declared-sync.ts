/**
 * Brings the declared clusters and informers (`CLUSTERS`, `INFORMERS`) in line with the factory
 * once per isolate and value, before a fresh isolate's first request (so a new deployment's first
 * request already sees its declared informers).
 *
 * No promise is shared across requests (review B4): a Worker cancels an ended request's pending I/O
 * and continuations, so a promise one request created may never settle in a later one, and every
 * later request that awaited it would wait the full DECLARED_SYNC_WAIT. What is shared is a
 * timestamped record: while a sync started less than DECLARED_SYNC_STALE_MS ago, other requests go
 * on without waiting; past that, the next request starts another (the factory runs syncs one at a
 * time and skips what is already in line). The request that starts a sync hands it to
 * `waitUntil`, so it may finish after the response.
 */
import { errorText, logger } from "../log.ts";
import type { Env } from "../env.ts";
import { factoryStub } from "../objects/factory-stub.ts";

/**
 * How long a request waits for the sync at most (tests shorten it). Past this, the sync goes on in
 * the factory and the request is served: a sync stuck on one cluster's objects must not hold
 * requests for every other cluster.
 */
export const DECLARED_SYNC_WAIT = { ms: 5_000 };
/** After a failed sync, requests are not held for another one this long (a later request or the cron retries). */
const DECLARED_SYNC_RETRY_MS = 10_000;
/** A sync started this long ago is presumed lost (`waitUntil` keeps an ended request's work about 30 s). */
export const DECLARED_SYNC_STALE_MS = 30_000;

/** The value last synced; the sync in flight (its value and start), if any; the value that failed last and when it may be retried. */
let declaredFor: string | undefined;
let started: { text: string; at: number } | undefined;
let failed: { text: string; retryAt: number } | undefined;

/**
 * Syncs `CLUSTERS` and `INFORMERS` into the factory once per isolate and value (so a redeploy with a
 * new value applies it). `waitUntil` is the request's or cron's (absent in some tests).
 */
export async function ensureDeclaredInformers(env: Env, waitUntil?: (promise: Promise<unknown>) => void): Promise<void> {
  // KUBE_API_AUTHORIZATION too: it decides the default cluster's RBAC informers (objects/factory-declared.ts).
  const text = JSON.stringify([env.CLUSTERS ?? "", env.INFORMERS ?? "", env.KUBE_API_AUTHORIZATION ?? ""]);
  const now = Date.now();
  if (declaredFor === text || (failed?.text === text && now < failed.retryAt)) return;
  if (started?.text === text && now - started.at < DECLARED_SYNC_STALE_MS) return;
  const mine = { text, at: now };
  started = mine;
  const sync = factoryStub(env)
    .syncDeclared(env.INFORMERS ?? "", env.CLUSTERS)
    .then(() => {
      declaredFor = text;
    })
    .catch((error: unknown) => {
      failed = { text, retryAt: Date.now() + DECLARED_SYNC_RETRY_MS };
      logger.error("syncing INFORMERS failed", { cause: "config", error: errorText(error) });
    })
    .finally(() => {
      if (started === mine) started = undefined;
    });
  waitUntil?.(sync);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, DECLARED_SYNC_WAIT.ms)));
  try {
    await Promise.race([sync, waited]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
