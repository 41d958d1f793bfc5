import type { Principal } from "../auth/principal.ts";
import type { ReadAuthorization } from "../auth/rbac/read-authorization.ts";
import type { RequestAttributes } from "../auth/rbac/rbac-objects.ts";
import type { Env } from "../env.ts";
import type { Placement } from "../clusters/placement.ts";

/** hono's typed context for every route: the Worker's bindings, and the caller once authenticated (http/auth.ts). */
export type AppEnv = {
  Bindings: Env;
  /**
   * `placement`: the placement of the route's cluster (clusters/placement.ts), set by the guards that
   * look the cluster up; `readAuthorizations`: the caller's, by cluster, once asked; `authorizedRead`:
   * the read an `rbac` cluster's RBAC allowed this request (http/read-authorization.ts).
   */
  Variables: {
    principal?: Principal;
    placement?: Placement;
    readAuthorizations?: Map<string, ReadAuthorization>;
    authorizedRead?: { cluster: string; attributes: RequestAttributes };
  };
};
