// Two projects: `workerd` (test/**/*.test.ts, run inside workerd by @cloudflare/vitest-plugin) and
// `e2e` (test/e2e/**/*.e2e.test.ts, run in Node against a Worker started by `wrangler dev` and driven
// by real clients: kubectl, @kubernetes/client-node; see test/e2e/global-setup.ts). `npm test` runs both.
//   only the end-to-end tests:   npx vitest run --project e2e
//   only the workerd tests:      npx vitest run --project workerd
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { freePort } from "./test/e2e/wait.ts";
import { quietRuntimeNoise } from "./test/helpers/runtime-noise.ts";

// A green run should print no stack traces: drop workerd's logs of the tests' deliberate aborts and
// refused connections (exact messages only, counted at exit; see test/helpers/runtime-noise.ts).
const quieted = Symbol.for("edge-informer.quietRuntimeNoise");
if (process.env.SHOW_RUNTIME_NOISE !== "1" && !(globalThis as Record<symbol, unknown>)[quieted]) {
  (globalThis as Record<symbol, unknown>)[quieted] = true;
  const noise = quietRuntimeNoise(process.stderr);
  quietRuntimeNoise(process.stdout, noise.dropped);
  process.once("exit", () => {
    const summary = noise.summary();
    if (summary) process.stderr.write(`${summary}\n`);
  });
}

// The fake API server, the fake webhook receiver and the self-signed HTTPS receiver are started by test/global-setup.ts, but the
// Worker's bindings are fixed before globalSetup runs, so their ports are chosen here and handed to both.
const port = Number(process.env.FAKE_APISERVER_PORT ?? (await freePort()));
process.env.FAKE_APISERVER_PORT = String(port);
let receiverPort = Number(process.env.RECEIVER_PORT ?? (await freePort()));
while (receiverPort === port) receiverPort = await freePort();
process.env.RECEIVER_PORT = String(receiverPort);
let tlsReceiverPort = Number(process.env.TLS_RECEIVER_PORT ?? (await freePort()));
while (tlsReceiverPort === port || tlsReceiverPort === receiverPort) tlsReceiverPort = await freePort();
process.env.TLS_RECEIVER_PORT = String(tlsReceiverPort);
let accessKeysPort = Number(process.env.ACCESS_KEYS_PORT ?? (await freePort()));
while ([port, receiverPort, tlsReceiverPort].includes(accessKeysPort)) accessKeysPort = await freePort();
process.env.ACCESS_KEYS_PORT = String(accessKeysPort);

// Queue subscriptions (docs/api.md "Queue subscriptions"): the Worker under test has a producer
// binding EVENTS, listed in WEBHOOK_QUEUES, and UNLISTED, a queue producer it is not allowed to name;
// a consumer Worker (test/queue-consumer/consumer.mjs) consumes EVENTS' queue and records what it gets.
const TEST_QUEUE = "edge-informer-test-events";

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                KUBE_API_URL: `http://127.0.0.1:${port}`,
                FAKE_APISERVER_URL: `http://127.0.0.1:${port}`,
                RECEIVER_URL: `http://127.0.0.1:${receiverPort}`,
                TLS_RECEIVER_URL: `https://127.0.0.1:${tlsReceiverPort}`,
                ACCESS_KEYS_URL: `http://127.0.0.1:${accessKeysPort}`,
                INFORMERS: "[]",
                ADMIN_TOKEN: "test-admin-token-0123456789abcdef",
                // Stored cluster tokens and webhook secrets are sealed with it (src/secrets/secret-sealer.ts).
                ENCRYPTION_KEY: "test-encryption-key-of-at-least-32-characters",
                // The key before the last rotation: rows sealed with it still open (and are sealed anew).
                ENCRYPTION_KEY_PREVIOUS: "test-previous-encryption-key-of-32-characters",
                ALLOW_UNAUTHENTICATED: "true",
                // Tests read /metrics right after each change: no snapshot kept (its own tests set it).
                METRICS_SNAPSHOT_SECONDS: "0",
                // The model-based checker's budget and replay (test/check/settings.ts, `npm run check`).
                CHECK_RUNS: process.env.CHECK_RUNS ?? "",
                CHECK_SEED: process.env.CHECK_SEED ?? "",
                CHECK_PATH: process.env.CHECK_PATH ?? "",
                WEBHOOK_QUEUES: "EVENTS",
              },
              queueProducers: { EVENTS: { queueName: TEST_QUEUE }, UNLISTED: { queueName: "edge-informer-test-unlisted" } },
              serviceBindings: { QUEUE_CONSUMER: "queue-consumer" },
              workers: [
                {
                  name: "queue-consumer",
                  modules: true,
                  scriptPath: "./test/queue-consumer/consumer.mjs",
                  compatibilityDate: "2026-11-01",
                  durableObjects: { RECEIVED: { className: "ReceivedMessages", useSQLite: true } },
                  // Short waits: a test reads what arrived soon after the send (production waits up to 5 s).
                  queueConsumers: { [TEST_QUEUE]: { maxBatchSize: 100, maxBatchTimeout: 0.05, maxRetries: 3 } },
                },
              ],
            },
          }),
        ],
        test: {
          name: "workerd",
          globalSetup: ["./test/global-setup.ts"],
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/e2e/**"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "e2e",
          environment: "node",
          globalSetup: ["./test/e2e/global-setup.ts"],
          include: ["test/e2e/**/*.e2e.test.ts"],
          // One Worker and one fake cluster serve every file; files run one at a time so a churn in
          // one never races another's comparison.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
