import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { createServer } from "node:net";
import { defineConfig } from "vitest/config";

// The fake API server and the fake webhook receiver are started by test/global-setup.ts, but the
// Worker's bindings are fixed before globalSetup runs, so their ports are chosen here and handed to both.
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const port = Number(process.env.FAKE_APISERVER_PORT ?? (await freePort()));
process.env.FAKE_APISERVER_PORT = String(port);
let receiverPort = Number(process.env.RECEIVER_PORT ?? (await freePort()));
while (receiverPort === port) receiverPort = await freePort();
process.env.RECEIVER_PORT = String(receiverPort);

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          KUBE_API_URL: `http://127.0.0.1:${port}`,
          FAKE_APISERVER_URL: `http://127.0.0.1:${port}`,
          RECEIVER_URL: `http://127.0.0.1:${receiverPort}`,
          INFORMERS: "[]",
          ADMIN_TOKEN: "test-admin-token",
          ALLOW_UNAUTHENTICATED: "false",
        },
      },
    }),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
