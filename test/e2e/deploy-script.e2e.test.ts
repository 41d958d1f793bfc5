/**
 * `npm run deploy` (scripts/deploy.mjs), run against a stub `wrangler` first on PATH: it runs
 * `wrangler deploy` with the options given, unless the KUBE_API_URL the deployment would get (a
 * `--var`, else the environment's KUBE_API_URL, else wrangler.toml's `[vars]` or `[env.NAME.vars]`)
 * cannot work in a deployed Worker: wrangler.toml's loopback default above all, then plain http and
 * IP addresses. A refusal says what to set and starts nothing.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useStubWrangler } from "./stub-wrangler.ts";

/** Records its arguments. */
const STUB = `#!/usr/bin/env node
require("node:fs").writeFileSync(process.env.STUB_RECORD, JSON.stringify(process.argv.slice(2)));
`;

const stubDir = useStubWrangler("deploy-script-test", STUB);

/** A wrangler config in the test's directory with these `[vars]` lines (and more TOML after them). */
function config(toml: string): string {
  const path = join(stubDir(), `wrangler-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(path, `name = "edge-informer"\nmain = "${join(process.cwd(), "src/index.ts")}"\ncompatibility_date = "2026-11-01"\n${toml}\n`);
  return path;
}

/** Runs `npm run deploy -- <args>`; answers its exit code, stderr and the stub wrangler's arguments, if it ran. */
function deploy(args: string[], env: Record<string, string> = {}) {
  const record = join(stubDir(), `record-${Math.random().toString(36).slice(2)}.json`);
  const run = spawnSync(process.execPath, ["scripts/deploy.mjs", ...args], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${stubDir()}:${process.env.PATH}`, STUB_RECORD: record, KUBE_API_URL: "", CLOUDFLARE_ENV: "", ...env },
  });
  return { code: run.status, stderr: run.stderr, wrangler: existsSync(record) ? (JSON.parse(readFileSync(record, "utf8")) as string[]) : undefined };
}

describe("npm run deploy (scripts/deploy.mjs)", () => {
  it("refuses wrangler.toml's loopback default, saying what to set, and deploys nothing", () => {
    const run = deploy([]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("KUBE_API_URL (from [vars] of wrangler.toml) is http://127.0.0.1:8001, a loopback address");
    expect(run.stderr).toContain(`KUBE_API_URL = "https://k8s-api.example.com"`);
    expect(run.stderr).toContain("KUBE_API_URL=https://k8s-api.example.com npm run deploy");
    expect(run.wrangler).toBeUndefined();
  });

  it("deploys with KUBE_API_URL from the environment, passed on to wrangler for this deployment", () => {
    const run = deploy(["--dry-run"], { KUBE_API_URL: "https://k8s.example.com" });
    expect([run.code, run.wrangler]).toEqual([0, ["deploy", "--dry-run", "--var", "KUBE_API_URL:https://k8s.example.com"]]);
  });

  it("takes a --var KUBE_API_URL among wrangler's options before the environment's", () => {
    const args = ["--var", "LOG_LEVEL:debug", "KUBE_API_URL:https://k8s.example.com"];
    expect(deploy(args, { KUBE_API_URL: "http://127.0.0.1:8001" }).wrangler).toEqual(["deploy", ...args]);
    const refused = deploy(["--var=KUBE_API_URL:http://localhost:8001"], { KUBE_API_URL: "https://k8s.example.com" });
    expect([refused.code, refused.wrangler]).toEqual([1, undefined]);
    expect(refused.stderr).toContain("(from --var KUBE_API_URL:…) is http://localhost:8001, a loopback address");
  });

  it("reads the vars of the config and environment wrangler would deploy", () => {
    const path = config(`[vars]\nKUBE_API_URL = "https://k8s.example.com"\n\n[env.lab.vars]\nKUBE_API_URL = "http://127.0.0.1:6443"`);
    expect(deploy(["--config", path]).wrangler).toEqual(["deploy", "--config", path]);
    const lab = deploy(["-c", path, "--env", "lab"]);
    expect([lab.code, lab.wrangler]).toEqual([1, undefined]);
    expect(lab.stderr).toContain("(from [env.lab.vars] of");
    expect(deploy(["-c", path], { CLOUDFLARE_ENV: "lab" }).code).toBe(1);
  });

  it.each([
    ["unset", "", "is not set"],
    ["not a URL", "k8s.example.com", "is 'k8s.example.com', not a URL"],
    ["plain http", "http://k8s.example.com", "over https only"],
    ["an IP address", "https://10.0.0.1:6443", "cannot fetch an IP address"],
    ["IPv6 loopback", "https://[::1]:6443", "a loopback address"],
    ["a .localhost name", "https://k8s.localhost", "a loopback address"],
  ])("refuses a KUBE_API_URL that is %s", (_, value, message) => {
    const run = deploy(["--config", config(value ? `[vars]\nKUBE_API_URL = "${value}"` : "")]);
    expect([run.code, run.wrangler]).toEqual([1, undefined]);
    expect(run.stderr).toContain(message);
  });
});
