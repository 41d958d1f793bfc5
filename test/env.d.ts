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
    }
  }
}
