import type { Principal } from "../auth/principal.ts";
import type { Env } from "../env.ts";
import type { Placement } from "../clusters/placement.ts";

/** hono's typed context for every route: the Worker's bindings, and the caller once authenticated (http/auth.ts). */
export type AppEnv = {
  Bindings: Env;
  /** `placement`: the placement of the route's cluster (clusters/placement.ts), set by the guards that look the cluster up. */
  Variables: { principal?: Principal; placement?: Placement };
};
