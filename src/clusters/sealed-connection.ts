/**
 * A cluster connection's run-time token at rest (issue 17 item 11). `PUT /clusters/{name}` seals
 * the token once, in the factory, and that sealed form is what every copy stores: the factory's
 * registry row and each informer's spec row (configure carries it over RPC). The token is opened
 * only where a request to the API server is about to be made (a watch, a health probe).
 *
 * Guarantees:
 * - The token is bound to its cluster (`cluster-token:<cluster>`): a sealed token copied to another
 *   cluster's row does not open.
 * - Connections without a token (named Worker secrets, or none) pass through unchanged: they hold
 *   nothing secret, and need no ENCRYPTION_KEY.
 */
import type { SecretSealer } from "../secrets/secret-sealer.ts";
import type { ClusterConnection } from "./cluster.ts";

export const clusterTokenBinding = (cluster: string) => `cluster-token:${cluster}`;

/** The connection with its token sealed; throws SecretsAtRestError when it cannot be (no ENCRYPTION_KEY). */
export async function sealConnection(sealer: SecretSealer, cluster: string, connection: ClusterConnection): Promise<ClusterConnection> {
  if (connection.token === undefined) return connection;
  return { ...connection, token: await sealer.seal(connection.token, clusterTokenBinding(cluster)) };
}

/** The connection with its token opened, to make requests with. */
export async function openConnection(sealer: SecretSealer, cluster: string, connection: ClusterConnection): Promise<ClusterConnection> {
  if (connection.token === undefined) return connection;
  return { ...connection, token: (await sealer.open(connection.token, clusterTokenBinding(cluster))).value };
}

/**
 * The connection sealed again under the current key when its token is stale (plain text from an
 * earlier release, or sealed under ENCRYPTION_KEY_PREVIOUS); undefined when it is fine as stored.
 */
export async function resealConnection(sealer: SecretSealer, cluster: string, connection: ClusterConnection): Promise<ClusterConnection | undefined> {
  if (connection.token === undefined) return undefined;
  const token = await sealer.reseal(connection.token, clusterTokenBinding(cluster));
  return token === undefined ? undefined : { ...connection, token };
}

/**
 * Whether two stored connections reach the same server with the same credentials: sealed forms
 * differ at every sealing (a fresh IV), so a token re-sealed elsewhere is compared by its value. A
 * token that does not open compares unequal, so the caller takes the path that reports it.
 */
export async function sameConnection(sealer: SecretSealer, cluster: string, a: ClusterConnection | null, b: ClusterConnection | null): Promise<boolean> {
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  if (a === null || b === null || a.token === undefined || b.token === undefined) return false;
  try {
    const [openedA, openedB] = [await openConnection(sealer, cluster, a), await openConnection(sealer, cluster, b)];
    return JSON.stringify(openedA) === JSON.stringify(openedB);
  } catch {
    return false;
  }
}
