/** kubeconfig files for kubectl and `@kubernetes/client-node`: one cluster, one user, one context. */
import { writeFileSync } from "node:fs";

export interface KubeconfigOptions {
  /** API root, e.g. http://127.0.0.1:40123/k8s. */
  server: string;
  /** Bearer token, if the server wants one (kubectl sends it only over https). */
  token?: string;
  /** For a self-signed https server. */
  insecureSkipTlsVerify?: boolean;
}

/** The kubeconfig as JSON (a YAML subset kubectl reads), with the context `e2e` current. */
export function kubeconfigText({ server, token, insecureSkipTlsVerify }: KubeconfigOptions): string {
  return JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "e2e", cluster: { server, ...(insecureSkipTlsVerify ? { "insecure-skip-tls-verify": true } : {}) } }],
      users: [{ name: "e2e", user: token === undefined ? {} : { token } }],
      contexts: [{ name: "e2e", context: { cluster: "e2e", user: "e2e" } }],
      "current-context": "e2e",
    },
    null,
    2,
  );
}

export function writeKubeconfig(path: string, options: KubeconfigOptions): string {
  writeFileSync(path, kubeconfigText(options), { mode: 0o600 });
  return path;
}
