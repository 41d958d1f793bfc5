/**
 * A throwaway self-signed certificate for 127.0.0.1 (made by `openssl`, valid for a day), and an
 * HTTPS receiver that presents it. No client trusts it: workerd's fetch fails the TLS handshake, which
 * is what the webhook sender's tests need to see (how that failure reads in `lastError`). The e2e
 * HTTPS front for kubectl (e2e/tls-proxy.ts) uses the same certificate maker.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const OPENSSL = process.env.OPENSSL ?? "openssl";

/** A self-signed certificate for 127.0.0.1, valid for a day, written into `dir`. */
export function selfSignedCertificate(dir: string): { key: Buffer; cert: Buffer } {
  const keyPath = join(dir, "tls.key");
  const certPath = join(dir, "tls.crt");
  execFileSync(
    OPENSSL,
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyPath, "-out", certPath],
    { stdio: "ignore", timeout: 10_000 },
  );
  return { key: readFileSync(keyPath), cert: readFileSync(certPath) };
}

export interface SelfSignedReceiver {
  /** e.g. https://127.0.0.1:40125 */
  url: string;
  close(): Promise<void>;
}

/** An HTTPS server on 127.0.0.1:`port` with a self-signed certificate, answering 204 to whoever gets through. */
export async function startSelfSignedReceiver(options: { port: number }): Promise<SelfSignedReceiver> {
  const dir = mkdtempSync(join(tmpdir(), "edge-informer-tls-"));
  const credentials = selfSignedCertificate(dir);
  rmSync(dir, { recursive: true, force: true });
  const server = createServer(credentials, (_, res) => {
    res.writeHead(204);
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  return {
    url: `https://127.0.0.1:${options.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
