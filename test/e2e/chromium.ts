/**
 * Debian's chromium for the browser tests, driven by playwright-core (which never downloads a
 * browser of its own). When /usr/bin/chromium is missing the tests install it with apt where they
 * can (root with apt-get, as .ci/run does); anywhere else they are skipped with the reason.
 */
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import type { Browser } from "playwright-core";

export const CHROMIUM = process.env.E2E_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];
const APT_TIMEOUT_MS = 10 * 60_000;

/** Installs chromium when it is missing and this process may; answers why it is unavailable, if it is. */
export function ensureChromium(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    return `${CHROMIUM} is missing and cannot be installed here (not root, or no apt-get): apt-get install chromium`;
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const update = spawnSync("apt-get", ["update", "-qq"], { env, encoding: "utf8", timeout: APT_TIMEOUT_MS });
  const install = spawnSync("apt-get", ["install", "-y", "-qq", "chromium"], { env, encoding: "utf8", timeout: APT_TIMEOUT_MS });
  if (existsSync(CHROMIUM)) return undefined;
  const output = `${update.stderr ?? ""}${install.stderr ?? ""}`.trim().split("\n").at(-1) ?? "";
  return `apt-get install chromium failed: ${install.error?.message ?? output}`;
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
