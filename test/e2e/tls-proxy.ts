/**
 * An HTTPS front for the Worker, for kubectl. kubectl (client-go `tools/clientcmd`, client_config.go
 * `DirectClientConfig.ClientConfig`: "only try to read the auth information if we are secure") sends
 * the kubeconfig's token only over TLS, so against `http://…/k8s` it sends no Authorization header at
 * all and READ_TOKEN cannot be tested. This proxy terminates TLS on a loopback port with a throwaway
 * self-signed certificate (made by `openssl`; kubeconfig `insecure-skip-tls-verify: true`) and passes
 * every request, streaming, to the Worker's plain-HTTP port.
 */
import { createServer } from "node:https";
import { selfSignedCertificate } from "../receiver/self-signed-tls.ts";
import { forward, listenOnLoopback } from "./wait.ts";

export { OPENSSL } from "../receiver/self-signed-tls.ts";

export interface TlsProxy {
  /** e.g. https://127.0.0.1:40124 */
  url: string;
  close(): Promise<void>;
}

export async function startTlsProxy(target: string, dir: string): Promise<TlsProxy> {
  const targetUrl = new URL(target);
  const server = createServer(selfSignedCertificate(dir), (req, res) => forward(req, res, new URL(req.url ?? "/", targetUrl)));
  const port = await listenOnLoopback(server);
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
