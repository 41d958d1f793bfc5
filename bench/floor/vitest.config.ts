// The ingest floor probe (bench/floor/ingest.floor.ts) runs inside workerd, as the Worker does, on a
// Durable Object's real SQLite: `npm run bench -- --only floor`. Not part of `npm test`: it measures.
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

const root = resolve(import.meta.dirname, "..", "..");

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: resolve(root, "wrangler.toml") },
      miniflare: {
        // node:zlib (native in workerd) for the compression rows; the Worker itself does not use it.
        compatibilityFlags: ["nodejs_compat"],
        bindings: { INFORMERS: "[]", ADMIN_TOKEN: "floor-admin-token-0123456789abcdef", ALLOW_UNAUTHENTICATED: "false" },
      },
    }),
  ],
  test: { include: ["bench/floor/*.floor.ts"], testTimeout: 900_000, root },
});
