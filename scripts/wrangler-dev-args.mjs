// The `wrangler dev` command line of a measured or tested Worker (test/e2e/worker.ts, bench/harness.mjs):
// a prebuilt bundle, loopback only, its own inspector port, fresh state, the given variables.
/** @param {{ config: string, port: number, inspectorPort: number, persist: string, vars: Record<string, string> }} options */
export function wranglerDevArgs({ config, port, inspectorPort, persist, vars }) {
  return [
    "dev",
    "--config", config,
    "--no-bundle",
    "--port", String(port),
    "--ip", "127.0.0.1",
    "--inspector-port", String(inspectorPort),
    "--inspector-ip", "127.0.0.1",
    "--show-interactive-dev-session=false",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    "--persist-to", persist,
  ];
}
