import type { Env as WorkerEnv } from "../src/index.ts";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../src/index.ts");
    }
    interface Env extends WorkerEnv {
      FAKE_APISERVER_URL: string;
      RECEIVER_URL: string;
      /** test/access/key-server.ts: a Cloudflare Access team's key endpoint on loopback. */
      ACCESS_KEYS_URL: string;
      /** An HTTPS receiver with a self-signed certificate (test/receiver/self-signed-tls.ts). */
      TLS_RECEIVER_URL: string;
      /** Queue producers (vitest.config.ts): EVENTS is listed in WEBHOOK_QUEUES, UNLISTED is not. */
      EVENTS: Queue;
      UNLISTED: Queue;
      /** The consumer Worker of EVENTS' queue (test/queue-consumer/consumer.mjs): GET /received?subscription=<id>. */
      QUEUE_CONSUMER: Fetcher;
    }
  }
}
