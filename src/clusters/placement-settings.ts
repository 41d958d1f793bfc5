/**
 * Placement from operator settings (review B11), for the objects no `PUT /clusters` body places:
 * the default cluster's (`KUBE_API_LOCATION_HINT`, `KUBE_API_JURISDICTION`) and the factory's
 * (`FACTORY_JURISDICTION`: the registry of clusters, informers and subscriptions).
 *
 * Contract:
 * - Unset or empty settings are no placement: objects are addressed exactly as before these settings.
 * - A value that is not one of Cloudflare's (placement.ts) is a misconfiguration that fails closed,
 *   as a bad credential setting does (auth/credentials.ts): `ApiError("Misconfigured")` naming the
 *   setting and the accepted values. Never ignored: a jurisdiction silently dropped would put the
 *   objects outside it, and fixing it later would reach other, empty objects.
 * - A jurisdiction is part of an object's id: set them before first use (docs/security.md
 *   "Placement"). KUBE_API_JURISDICTION changed while the default cluster has informers is refused
 *   (`defaultJurisdictionRefusal`, from the factory's record); FACTORY_JURISDICTION reaches a new registry.
 */
import * as z from "zod/mini";
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { type Placement, placementShape } from "./placement.ts";

type PlacementSettings = Pick<Env, "KUBE_API_LOCATION_HINT" | "KUBE_API_JURISDICTION" | "FACTORY_JURISDICTION">;

function setting<T>(schema: z.ZodMiniType<T | undefined>, name: keyof PlacementSettings, value: string | undefined): T | undefined {
  if (value === undefined || value === "") return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ApiError("Misconfigured", `${name} ${parsed.error.issues[0]?.message ?? "is not valid"}, not '${value}': set it in wrangler.toml [vars], or remove it`);
}

/** Where the default cluster's (`KUBE_API_URL`'s) objects live; throws when a setting is not valid. */
export function defaultClusterPlacement(env: PlacementSettings): Placement {
  const locationHint = setting(placementShape.locationHint, "KUBE_API_LOCATION_HINT", env.KUBE_API_LOCATION_HINT);
  const jurisdiction = setting(placementShape.jurisdiction, "KUBE_API_JURISDICTION", env.KUBE_API_JURISDICTION);
  return { ...(locationHint === undefined ? {} : { locationHint }), ...(jurisdiction === undefined ? {} : { jurisdiction }) };
}

/**
 * Why the default cluster's objects may not be addressed by `placement` (the settings now), given the
 * jurisdiction they were made in (`recorded`, "" for none; undefined while it has no informers), or
 * undefined when they may. A Durable Object cannot move: a changed KUBE_API_JURISDICTION would reach
 * other, empty objects and leave the caches and subscriptions behind.
 */
export function defaultJurisdictionRefusal(recorded: string | undefined, placement: Placement): string | undefined {
  const current = placement.jurisdiction ?? "";
  if (recorded === undefined || recorded === current) return undefined;
  const what = (jurisdiction: string) => (jurisdiction === "" ? "no jurisdiction" : `jurisdiction '${jurisdiction}'`);
  return (
    `KUBE_API_JURISDICTION asks for ${what(current)}, but the default cluster's informers live in ${what(recorded)}: ` +
    "Durable Objects cannot move, so it would reach other, empty objects. Set it back; to move the default cluster, delete its informers under the old setting first (their caches and subscriptions go with them), then change it"
  );
}

/** Where the factory lives; throws when the setting is not valid. */
export function factoryPlacement(env: PlacementSettings): Placement {
  const jurisdiction = setting(placementShape.jurisdiction, "FACTORY_JURISDICTION", env.FACTORY_JURISDICTION);
  return jurisdiction === undefined ? {} : { jurisdiction };
}

/** Throws Misconfigured when any of these settings is not valid. */
export function checkPlacementSettings(env: PlacementSettings): void {
  defaultClusterPlacement(env);
  factoryPlacement(env);
}
