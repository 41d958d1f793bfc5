/**
 * Where a cluster's Durable Objects live (review B11): a `locationHint` (the region an object is
 * created near, e.g. near its API server) and a `jurisdiction` (the region its data must stay in,
 * e.g. `eu`). Both are Cloudflare's values (cloudflare-platform.md; workers-types
 * DurableObjectLocationHint / DurableObjectJurisdiction).
 *
 * Contract:
 * - A location hint matters only when an object is created; an object never moves. So a hint may
 *   change at any time and applies to the objects created after it, and a caller that does not know
 *   it reaches the same object (the hint does not change the object's id).
 * - A jurisdiction is part of an object's id: the same name in another jurisdiction is another
 *   object. So every caller must address a cluster's objects with its jurisdiction, and a
 *   cluster's jurisdiction cannot change once it has informers (`jurisdictionChangeRefusal`).
 */
import * as z from "zod/mini";

export const LOCATION_HINTS = ["wnam", "enam", "sam", "weur", "eeur", "apac", "oc", "afr", "me"] as const;
export const JURISDICTIONS = ["eu", "fedramp", "fedramp-high", "us"] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];
export type Jurisdiction = (typeof JURISDICTIONS)[number];

export interface Placement {
  locationHint?: LocationHint;
  jurisdiction?: Jurisdiction;
}

/** The placement fields of a cluster's configuration, with messages that list the accepted values. */
export const placementShape = {
  locationHint: z.optional(z.enum(LOCATION_HINTS, { error: () => `must be one of ${LOCATION_HINTS.join(", ")}` })),
  jurisdiction: z.optional(z.enum(JURISDICTIONS, { error: () => `must be one of ${JURISDICTIONS.join(", ")}` })),
};

/** Only the placement fields of `value` (a cluster's connection carries them with its URL and credentials). */
export function placementOf(value: Placement | undefined): Placement {
  return {
    ...(value?.locationHint === undefined ? {} : { locationHint: value.locationHint }),
    ...(value?.jurisdiction === undefined ? {} : { jurisdiction: value.jurisdiction }),
  };
}

/** The narrow part of a Durable Object namespace this module uses (a fake satisfies it in tests). */
export interface PlaceableNamespace<Stub> {
  getByName(name: string, options?: { locationHint?: LocationHint }): Stub;
  jurisdiction(jurisdiction: Jurisdiction): PlaceableNamespace<Stub>;
}

/** The object `name` of `namespace`, in its cluster's jurisdiction and, if it is created now, near its hint. */
export function placedStub<Stub>(namespace: PlaceableNamespace<Stub>, name: string, placement: Placement = {}): Stub {
  const scoped = placement.jurisdiction === undefined ? namespace : namespace.jurisdiction(placement.jurisdiction);
  return placement.locationHint === undefined ? scoped.getByName(name) : scoped.getByName(name, { locationHint: placement.locationHint });
}

/**
 * Why cluster `name` may not go from jurisdiction `before` to `after`, or undefined when it may: a
 * cluster with informers has objects in its jurisdiction, which cannot move.
 */
export function jurisdictionChangeRefusal(name: string, before: Placement | undefined, after: Placement, informers: number): string | undefined {
  if ((before?.jurisdiction ?? null) === (after.jurisdiction ?? null) || informers === 0) return undefined;
  const what = (j: Jurisdiction | undefined) => (j === undefined ? "no jurisdiction" : `jurisdiction '${j}'`);
  return (
    `cluster '${name}' has ${informers} informer(s) in ${what(before?.jurisdiction)}: its objects cannot move to ${what(after.jurisdiction)}; ` +
    "delete its informers first (their cached objects and subscriptions go with them), or add the new placement as another cluster"
  );
}

/**
 * The jurisdiction an object itself was created in (its id carries it): a cluster's objects reach
 * each other in their own jurisdiction (a subscription its informer, an informer its subscriptions)
 * without knowing their cluster's configuration.
 */
export function ownPlacement(id: { jurisdiction?: string }): Placement {
  const jurisdiction = JURISDICTIONS.find((known) => known === id.jurisdiction);
  return jurisdiction === undefined ? {} : { jurisdiction };
}
