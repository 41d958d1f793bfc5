/**
 * kubeconfig files for kubectl and `@kubernetes/client-node`: one cluster, one user, one context by
 * default, or several contexts in one file (a cluster and a user each), as a user of many clusters
 * keeps them (issue 12: one context per `/k8s/clusters/{cluster}`).
 */
import { readFileSync, writeFileSync } from "node:fs";

export interface KubeconfigOptions {
  /** API root, e.g. http://127.0.0.1:40123/k8s. */
  server: string;
  /** Bearer token, if the server wants one (kubectl sends it only over https). */
  token?: string;
  /** For a self-signed https server. */
  insecureSkipTlsVerify?: boolean;
}

/** One context of a kubeconfig: its name names its cluster and its user too. */
export interface KubeconfigContext extends KubeconfigOptions {
  name: string;
}

/** A kubeconfig of several contexts as JSON (a YAML subset kubectl reads), the first one current. */
export function kubeconfigContextsText(contexts: readonly KubeconfigContext[]): string {
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: contexts.map(({ name, server, insecureSkipTlsVerify }) => ({
        name,
        cluster: { server, ...(insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}) },
      })),
      users: contexts.map(({ name, token }) => ({ name, user: token === undefined ? {} : { token } })),
      contexts: contexts.map(({ name }) => ({ name, context: { cluster: name, user: name } })),
      "current-context": contexts[0]?.name ?? "",
    },
    null,
    2,
  );
}

/** The kubeconfig as JSON, with the one context `e2e` current. */
export function kubeconfigText(options: KubeconfigOptions): string {
  return kubeconfigContextsText([{ name: "e2e", ...options }]);
}

export function writeKubeconfig(path: string, options: KubeconfigOptions): string {
  return writeKubeconfigContexts(path, [{ name: "e2e", ...options }]);
}

export function writeKubeconfigContexts(path: string, contexts: readonly KubeconfigContext[]): string {
  writeFileSync(path, kubeconfigContextsText(contexts), { mode: 0o600 });
  return path;
}

/** The current context of a kubeconfig this module wrote: where it points and with what token. */
export function readKubeconfig(path: string): KubeconfigOptions {
  const config = JSON.parse(readFileSync(path, "utf8")) as {
    clusters: { name: string; cluster: { server: string; "insecure-skip-tls-verify"?: boolean } }[];
    users: { name: string; user: { token?: string } }[];
    "current-context": string;
  };
  const name = config["current-context"];
  const cluster = config.clusters.find((c) => c.name === name)!.cluster;
  const token = config.users.find((u) => u.name === name)?.user.token;
  return { server: cluster.server, ...(token === undefined ? {} : { token }), ...(cluster["insecure-skip-tls-verify"] ? { insecureSkipTlsVerify: true } : {}) };
}
