import type { Principal } from "../auth/principal.ts";
import type { Env } from "../env.ts";

/** hono's typed context for every route: the Worker's bindings, and the caller once authenticated (http/auth.ts). */
export type AppEnv = { Bindings: Env; Variables: { principal?: Principal } };
