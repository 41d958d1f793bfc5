/**
 * The one factory object (objects/informer-factory.ts: the registry of clusters, informers and the
 * subscription index), as every caller reaches it: by FACTORY_NAME, in FACTORY_JURISDICTION when
 * set (clusters/placement-settings.ts; a bad value throws Misconfigured).
 *
 * A jurisdiction is part of the object's id: setting or changing FACTORY_JURISDICTION reaches
 * another, empty factory (docs/security.md "Placement"): set it before first use.
 */
import { placedStub } from "../clusters/placement.ts";
import { factoryPlacement } from "../clusters/placement-settings.ts";
import type { Env } from "../env.ts";
import { FACTORY_NAME } from "./informer-factory.ts";

export function factoryStub(env: Pick<Env, "FACTORY" | "FACTORY_JURISDICTION">) {
  return placedStub(env.FACTORY, FACTORY_NAME, factoryPlacement(env));
}
