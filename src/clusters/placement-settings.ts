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
 * - A jurisdiction is part of an object's id: changing one of these settings later addresses new,
 *   empty objects (docs/security.md "Placement"). Set them before first use.
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
