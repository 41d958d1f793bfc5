/**
 * Emulates the platform's per-invocation subrequest limit, which local workerd does not enforce
 * (review B1). `underSubrequestLimit(stub, limit, fn)` runs `fn` inside the object as one
 * invocation: every `fetch()` and every Durable Object RPC call the object makes meanwhile is
 * counted, and each one past `limit` fails as the runtime's does ("Too many subrequests.") and is
 * counted as `refused`, so a test fails on it however the code under test handles the error. The
 * object is told its limit through SUBREQUESTS_PER_INVOCATION (`told`: another figure, to play a
 * limit the object does not know, so that the runtime's error reaches it).
 *
 * Only calls made through `globalThis.fetch`, looked up at the call (a `fetch` captured earlier is
 * not seen: the objects look it up at each use), and the object's `env.INFORMER` /
 * `env.SUBSCRIPTION` are seen; both are restored afterwards.
 */
import { runInDurableObject } from "cloudflare:test";

export interface LimitedRun<R> {
  result: R;
  /** Subrequests made within the limit. */
  made: number;
  /** Subrequests refused past it: a correct slice has none. */
  refused: number;
}

const RUNTIME_MESSAGE = "Too many subrequests.";

export function underSubrequestLimit<O extends Rpc.DurableObjectBranded, R>(
  stub: DurableObjectStub<O>,
  limit: number,
  fn: (instance: O, state: DurableObjectState) => Promise<R>,
  told = limit,
): Promise<LimitedRun<R>> {
  return runInDurableObject(stub, async (instance: O, state) => {
    let made = 0;
    let refused = 0;
    const admit = (): boolean => {
      if (made < limit) {
        made++;
        return true;
      }
      refused++;
      return false;
    };
    const instanceEnv = (instance as unknown as { env: Record<string, unknown> }).env;
    const saved = { INFORMER: instanceEnv.INFORMER, SUBSCRIPTION: instanceEnv.SUBSCRIPTION, SUBREQUESTS_PER_INVOCATION: instanceEnv.SUBREQUESTS_PER_INVOCATION };
    const savedFetch = globalThis.fetch;
    globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
      admit() ? savedFetch(input, init) : Promise.reject(new Error(RUNTIME_MESSAGE))) as typeof fetch;
    instanceEnv.INFORMER = counted(saved.INFORMER as object, admit);
    instanceEnv.SUBSCRIPTION = counted(saved.SUBSCRIPTION as object, admit);
    instanceEnv.SUBREQUESTS_PER_INVOCATION = String(told);
    try {
      const result = await fn(instance, state);
      return { result, made, refused };
    } finally {
      globalThis.fetch = savedFetch;
      Object.assign(instanceEnv, saved);
    }
  });
}

/** A namespace whose stubs count each method call as a subrequest. */
function counted(namespace: object, admit: () => boolean): object {
  return new Proxy(namespace, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function") return value;
      if (prop !== "get" && prop !== "getByName") return value.bind(target);
      return (...args: unknown[]) => countedStub(value.apply(target, args) as object, admit);
    },
  });
}

function countedStub(stub: object, admit: () => boolean): object {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof value !== "function" || prop === "then" || typeof prop === "symbol") return value;
      return (...args: unknown[]) => (admit() ? Reflect.apply(value, target, args) : Promise.reject(new Error(RUNTIME_MESSAGE)));
    },
  });
}
