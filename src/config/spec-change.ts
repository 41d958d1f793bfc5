/**
 * What a new spec and connection change for an informer's loop: the decision
 * InformerObject.configure acts on, kept apart from the object so it reads as one rule.
 *
 * Guarantees:
 * - When nothing the loop uses changed — the same spec but for its declared subscriptions (the
 *   factory's business), the same connection (a token sealed anew under a rotated key counts as the
 *   same) — the change is "unchanged", and a live watch is left alone: an idempotent PUT must not
 *   restart it. `store` then says whether the row must be written anew (other subscriptions, or
 *   the token in its new sealed form).
 * - Otherwise the loop is stopped and resumed. It relists (`restart`) when what is listed changed,
 *   when the transform changed (a field the old transform dropped can only come from the server),
 *   or when the API server's URL changed (another cluster, whose resource versions mean nothing
 *   here); a new token for the same server only reconnects. Indexes are rebuilt when the indexers
 *   changed. A first spec (`created`) only starts the loop.
 */
import type { ClusterConnection } from "../clusters/cluster.ts";
import { indexersChanged, type InformerSpec, listingChanged, sameSpec, transformChanged } from "./informer-spec.ts";
import type { StoredSpec } from "./spec-store.ts";

export type SpecChange =
  | { kind: "unchanged"; store: boolean }
  | { kind: "changed"; created: boolean; restart?: { transformChanged: boolean; serverMoved: boolean }; rebuildIndexes: boolean };

/**
 * The change from `previous` (none: the informer is new) to `spec` and `connection` (null: the
 * default cluster). `sameConnection` compares two stored connections, opening sealed tokens
 * (clusters/sealed-connection.ts); it is asked only when the specs list the same.
 */
export async function specChange(
  previous: Pick<StoredSpec, "spec" | "connection"> | undefined,
  spec: InformerSpec,
  connection: ClusterConnection | null,
  sameConnection: (a: ClusterConnection | null, b: ClusterConnection | null) => Promise<boolean>,
): Promise<SpecChange> {
  if (!previous) return { kind: "changed", created: true, rebuildIndexes: false };
  if (sameListing(previous.spec, spec) && (await sameConnection(previous.connection, connection))) {
    return { kind: "unchanged", store: !sameSpec(previous.spec, spec) || JSON.stringify(previous.connection) !== JSON.stringify(connection) };
  }
  const retransform = transformChanged(previous.spec, spec);
  const moved = (previous.connection?.server ?? null) !== (connection?.server ?? null);
  const relist = listingChanged(previous.spec, spec) || retransform || moved;
  return {
    kind: "changed",
    created: false,
    ...(relist ? { restart: { transformChanged: retransform, serverMoved: moved } } : {}),
    rebuildIndexes: indexersChanged(previous.spec, spec),
  };
}

/** Equal but for the declared subscriptions, which the informer's loop does not use. */
function sameListing(a: InformerSpec, b: InformerSpec): boolean {
  return sameSpec({ ...a, subscriptions: [] }, { ...b, subscriptions: [] });
}
