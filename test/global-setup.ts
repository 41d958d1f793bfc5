// Starts, once for the whole run and on the ports vitest.config.ts chose, the fake Kubernetes API server
// (Node), which tests reach at FAKE_APISERVER_URL, the fake webhook receiver, at RECEIVER_URL, and
// a Cloudflare Access key endpoint (test/access/key-server.ts), at ACCESS_KEYS_URL.
// It also starts an HTTPS receiver with a self-signed certificate, at TLS_RECEIVER_URL, whose handshake
// every client refuses (the webhook sender's TLS failure tests).
// The API server's "default" cluster (root paths) holds the demo data of test/fake-apiserver/seed.ts;
// tests that change state create their own cluster (FakeCluster.create) and their own receiver
// endpoints (ReceiverEndpoint.create).
import { seedDemo } from "./fake-apiserver/seed.ts";
import { startFakeApiServer } from "./fake-apiserver/server.ts";
import { startSelfSignedReceiver } from "./receiver/self-signed-tls.ts";
import { startReceiver } from "./receiver/server.ts";
import { startKeyServer } from "./access/key-server.ts";

function portFrom(name: string): number {
  const port = Number(process.env[name]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`${name} is not set (vitest.config.ts sets it)`);
  return port;
}

export default async function setup(): Promise<() => Promise<void>> {
  const port = portFrom("FAKE_APISERVER_PORT");
  const receiverPort = portFrom("RECEIVER_PORT");
  const server = await startFakeApiServer({ port });
  seedDemo(server);
  const receiver = await startReceiver({ port: receiverPort }).catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
  const tlsReceiver = await startSelfSignedReceiver({ port: portFrom("TLS_RECEIVER_PORT") }).catch(async (error: unknown) => {
    await Promise.all([server.close(), receiver.close()]);
    throw error;
  });
  const keys = await startKeyServer(portFrom("ACCESS_KEYS_PORT")).catch(async (error: unknown) => {
    await Promise.all([server.close(), receiver.close(), tlsReceiver.close()]);
    throw error;
  });
  return async () => {
    await Promise.all([server.close(), receiver.close(), tlsReceiver.close(), keys.close()]);
  };
}
