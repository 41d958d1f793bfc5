import type { Env } from "../env.ts";

/** hono's typed context for every route: the Worker's bindings. */
export type AppEnv = { Bindings: Env };
