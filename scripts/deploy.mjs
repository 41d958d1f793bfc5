#!/usr/bin/env node
// `npm run deploy [-- <wrangler deploy options>]`: `wrangler deploy`, refused while the KUBE_API_URL it
// would deploy cannot work there. wrangler.toml's default (http://127.0.0.1:8001, `kubectl proxy` for
// local development) is loopback: a deployed Worker cannot reach it, and every informer would fail.
//
// The value checked is the one the deployment gets:
//   1. `--var KUBE_API_URL:…` among the options;
//   2. else KUBE_API_URL from the environment (`KUBE_API_URL=https://… npm run deploy`), passed on to
//      wrangler as `--var` for this deployment;
//   3. else `[vars]` of wrangler.toml, or `[env.NAME.vars]` with `--env NAME` (vars are not inherited
//      by environments), read by wrangler itself.
// It must be an https: URL whose host is a name: not loopback, not an IP address (a Worker's fetch
// cannot reach IP addresses; a private cluster is reached through Cloudflare Tunnel, docs/deploying.md
// "Reaching a private cluster").
import { spawn } from "node:child_process";
import { isIP } from "node:net";
import { relative } from "node:path";
import { unstable_readConfig } from "wrangler";

const EXAMPLE = "https://k8s-api.example.com";

/** The values of `name` (and its `alias`) in wrangler-style options: `--name v`, `--name=v`, `-a v`. */
function optionValues(args, name, alias) {
  const values = [];
  args.forEach((arg, i) => {
    if (arg === `--${name}` || (alias && arg === `-${alias}`)) {
      // wrangler's --var is an array option: it takes every word up to the next option.
      for (let j = i + 1; j < args.length && !args[j].startsWith("-"); j++) {
        values.push(args[j]);
        if (name !== "var") break;
      }
    } else if (arg.startsWith(`--${name}=`)) {
      values.push(arg.slice(name.length + 3));
    }
  });
  return values;
}

/** KUBE_API_URL as the deployment would get it, and where it comes from. */
function effectiveKubeApiUrl(args) {
  const fromArgs = optionValues(args, "var").filter((v) => v.startsWith("KUBE_API_URL:")).at(-1);
  if (fromArgs !== undefined) return { value: fromArgs.slice("KUBE_API_URL:".length), source: "--var KUBE_API_URL:…", extraArgs: [] };
  const fromEnvironment = process.env.KUBE_API_URL;
  if (fromEnvironment) {
    return { value: fromEnvironment, source: "the KUBE_API_URL environment variable", extraArgs: ["--var", `KUBE_API_URL:${fromEnvironment}`] };
  }
  const env = optionValues(args, "env", "e").at(-1) ?? process.env.CLOUDFLARE_ENV;
  const config = unstable_readConfig({ config: optionValues(args, "config", "c").at(-1), env });
  const file = config.configPath ? relative(process.cwd(), config.configPath) : "wrangler.toml";
  return { value: config.vars?.KUBE_API_URL, source: env ? `[env.${env}.vars] of ${file}` : `[vars] of ${file}`, extraArgs: [] };
}

/** Why `value` cannot be a deployed Worker's API server, or undefined when it can. */
function unusable(value) {
  if (typeof value !== "string" || value === "") return "is not set";
  let url;
  try {
    url = new URL(value);
  } catch {
    return `is '${value}', not a URL`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "0.0.0.0" || host === "::1" || /^127\./.test(host)) {
    return `is ${value}, a loopback address (local development: \`kubectl proxy\`), which a deployed Worker cannot reach`;
  }
  if (isIP(host)) return `is ${value}: a deployed Worker cannot fetch an IP address, only a host name`;
  if (url.protocol !== "https:") return `is ${value}: API servers are reached over https only (the token travels with every request)`;
  return undefined;
}

const args = process.argv.slice(2);
const { value, source, extraArgs } = effectiveKubeApiUrl(args);
const problem = unusable(value);
if (problem) {
  console.error(`npm run deploy: KUBE_API_URL (from ${source}) ${problem}.
  Set it to your Kubernetes API server's https URL first, in wrangler.toml's [vars]:
    KUBE_API_URL = "${EXAMPLE}"
  or for one deployment: KUBE_API_URL=${EXAMPLE} npm run deploy
  A cluster in a private network: docs/deploying.md "Reaching a private cluster" (Cloudflare Tunnel).`);
  process.exit(1);
}

const wrangler = spawn("wrangler", ["deploy", ...args, ...extraArgs], { stdio: "inherit" });
wrangler.on("error", (error) => {
  console.error(`npm run deploy: could not run wrangler: ${error.message}`);
  process.exit(1);
});
wrangler.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
