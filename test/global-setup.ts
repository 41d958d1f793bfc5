// Starts the fake Kubernetes API server (Node) once for the whole run, on the port vitest.config.ts chose;
// tests reach it at FAKE_APISERVER_URL. Its "default" cluster (root paths) holds the demo data of
// test/fake-apiserver/seed.ts; tests that change state create their own cluster (FakeCluster.create).
import { seedDemo } from "./fake-apiserver/seed.ts";
import { startFakeApiServer } from "./fake-apiserver/server.ts";

export default async function setup(): Promise<() => Promise<void>> {
  const port = Number(process.env.FAKE_APISERVER_PORT);
  if (!Number.isInteger(port) || port <= 0) throw new Error("FAKE_APISERVER_PORT is not set (vitest.config.ts sets it)");
  const server = await startFakeApiServer({ port });
  seedDemo(server);
  return () => server.close();
}
