/**
 * Cluster configuration, validated at the edge (DESIGN invariant 8): the `CLUSTERS` variable (named
 * secrets only, never inline credentials) and the body of `PUT /clusters/{name}` (a URL and an
 * optional token, stored write-only), each with an optional placement (placement.ts:
 * `locationHint`, `jurisdiction`) and `authorization` (`scopes` or `rbac`, cluster.ts). Bad input is a ValidationError naming the field. A server
 * must also pass the egress rules in force (cluster.ts `clusterServerRefusal`: https unless
 * loopback, `CLUSTER_ALLOWED_HOSTS`), so a refused URL is never stored.
 */
import * as z from "zod/mini";
import { describeIssues, ValidationError } from "../errors.ts";
import type { EgressSettings } from "../net/egress.ts";
import { placementShape } from "./placement.ts";
import { AUTHORIZATION_MODES, CLUSTER_NAME_RULE, type ClusterConnection, clusterServerRefusal, DEFAULT_CLUSTER, isClusterName } from "./cluster.ts";

const secretName = z
  .string()
  .check(z.maxLength(128), z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must name a Worker secret (letters, digits, '_')"));

/**
 * An API server URL: http(s), with neither credentials nor a query or fragment in it — `GET /clusters`
 * shows the URL, so nothing secret may ride in it (a token goes in `token` or a named secret).
 */
const serverUrl = z.string().check(
  z.maxLength(2048),
  z.refine((text) => {
    try {
      const url = new URL(text);
      const bare = url.username === "" && url.password === "" && url.search === "" && url.hash === "" && !/[?#]/.test(text);
      return (url.protocol === "https:" || url.protocol === "http:") && bare;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials, query or fragment in it (give a token instead)"),
);

const authorization = z.optional(z.enum(AUTHORIZATION_MODES, { error: () => `must be one of ${AUTHORIZATION_MODES.join(", ")}` }));

const declaredClusterSchema = z
  .strictObject({
    server: serverUrl,
    tokenSecret: z.optional(secretName),
    accessClientIdSecret: z.optional(secretName),
    accessClientSecretSecret: z.optional(secretName),
    authorization,
    ...placementShape,
  })
  .check(
    z.refine(
      (c) => (c.accessClientIdSecret === undefined) === (c.accessClientSecretSecret === undefined),
      "accessClientIdSecret and accessClientSecretSecret go together",
    ),
  );

export const clusterBodySchema = z.strictObject({
  server: serverUrl,
  token: z.optional(z.string().check(z.minLength(1), z.maxLength(16 * 1024))),
  authorization,
  ...placementShape,
});

export interface DeclaredCluster {
  name: string;
  connection: ClusterConnection;
}

/** The environment's egress settings for cluster servers. */
type ClusterEgress = EgressSettings;

/** Parses `CLUSTERS`: a JSON object of name → connection. Invalid entries are reported, valid ones kept. */
export function parseDeclaredClusters(text: string | undefined, env: ClusterEgress): { clusters: DeclaredCluster[]; errors: string[] } {
  if (text === undefined || text.trim() === "") return { clusters: [], errors: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { clusters: [], errors: ["CLUSTERS is not valid JSON"] };
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { clusters: [], errors: ['CLUSTERS must be a JSON object: {"<name>": {"server": "https://…", "tokenSecret": "…"}}'] };
  }
  const clusters: DeclaredCluster[] = [];
  const errors: string[] = [];
  for (const [name, entry] of Object.entries(raw)) {
    if (!isClusterName(name)) {
      errors.push(`CLUSTERS: '${name}' is not a cluster name: ${CLUSTER_NAME_RULE}`);
      continue;
    }
    if (name === DEFAULT_CLUSTER) {
      errors.push(`CLUSTERS: '${DEFAULT_CLUSTER}' is the cluster of KUBE_API_URL (with KUBE_TOKEN and CF_ACCESS_*): configure it there`);
      continue;
    }
    const parsed = declaredClusterSchema.safeParse(entry);
    if (!parsed.success) {
      errors.push(`CLUSTERS.${name}: ${describeIssues(parsed.error)}`);
      continue;
    }
    const refusal = clusterServerRefusal(parsed.data.server, env);
    if (refusal !== undefined) {
      errors.push(`CLUSTERS.${name}: server: ${refusal}`);
      continue;
    }
    clusters.push({ name, connection: parsed.data });
  }
  return { clusters, errors };
}

/** Validates the body of `PUT /clusters/{name}`. */
export function parseClusterBody(input: unknown, env: ClusterEgress, requestHost?: string): ClusterConnection {
  const parsed = clusterBodySchema.safeParse(input);
  if (!parsed.success) throw new ValidationError(`invalid cluster: ${describeIssues(parsed.error)}`);
  const refusal = clusterServerRefusal(parsed.data.server, env, requestHost);
  if (refusal !== undefined) throw new ValidationError(`invalid cluster: server: ${refusal}`);
  return parsed.data;
}
