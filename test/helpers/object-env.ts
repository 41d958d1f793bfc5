/**
 * Runs `fn` inside a Durable Object whose Worker variables are changed for the call only (local
 * development settings, the operator's secrets, a missing ENCRYPTION_KEY), and restored after.
 * Objects read their settings from `this.env` at each use, so this reaches what they do.
 */
import { runInDurableObject } from "cloudflare:test";

export function withObjectEnv<O extends Rpc.DurableObjectBranded, R>(
  stub: DurableObjectStub<O>,
  vars: Record<string, string | undefined>,
  fn: (instance: O) => Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, async (instance: O) => {
    const instanceEnv = (instance as unknown as { env: Record<string, unknown> }).env;
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, instanceEnv[k]]));
    Object.assign(instanceEnv, vars);
    try {
      return await fn(instance);
    } finally {
      Object.assign(instanceEnv, saved);
    }
  });
}
