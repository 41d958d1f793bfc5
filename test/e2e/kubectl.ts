/**
 * Runs the real kubectl (KUBECTL, default /usr/bin/kubectl) against a kubeconfig, with a timeout, and
 * reads what it prints: tables by the header's column positions, and `-o json` watch output as a
 * stream of concatenated JSON documents. When kubectl (or openssl, for the HTTPS front) is absent,
 * KUBECTL_MISSING says why and the kubectl suites are skipped with that reason in their name (never
 * passed).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { basename, delimiter, join } from "node:path";
import { e2e } from "./context.ts";
import { OPENSSL } from "./tls-proxy.ts";
import { waitFor } from "./wait.ts";

export const KUBECTL = process.env.KUBECTL ?? "/usr/bin/kubectl";

function executable(command: string): boolean {
  const candidates = command.includes("/") ? [command] : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, command));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function missingReason(): string | undefined {
  if (!executable(KUBECTL)) return `SKIPPED: kubectl not found at ${KUBECTL} (install kubectl 1.32 or set KUBECTL)`;
  // The HTTPS front kubectl needs to send its token (tls-proxy.ts) gets its certificate from openssl.
  if (!executable(OPENSSL)) return `SKIPPED: openssl not found (${OPENSSL}), needed for the HTTPS front kubectl reaches /k8s through`;
  return undefined;
}

/** Why the kubectl tests cannot run, or undefined when they can. */
export const KUBECTL_MISSING = missingReason();

/** A describe title that carries the skip reason when kubectl is missing. */
export function kubectlSuite(title: string): string {
  return KUBECTL_MISSING === undefined ? title : `${title} [${KUBECTL_MISSING}]`;
}

export type Target = "edge" | "fake";

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /**
   * Which kubeconfig: our Worker's /k8s (`edge`), the fake API server's cluster (`fake`), or a file
   * of a test's own (e.g. several contexts, chosen with `--context`).
   */
  config: Target | { kubeconfig: string };
  timeoutMs?: number;
  /** Added to kubectl's environment, e.g. a client-go feature gate (`KUBE_FEATURE_WatchListClient`). */
  env?: Record<string, string>;
}

const label = (config: KubectlOptions["config"]) => (typeof config === "string" ? config : basename(config.kubeconfig));

function baseArgs(config: KubectlOptions["config"]): string[] {
  const { kubeconfigs, scratchDir } = e2e();
  // A cache directory per kubeconfig keeps discovery of one server from answering for the other;
  // the contexts of one file share one, as a user's do (kubectl keys its cache by server URL).
  const path = typeof config === "string" ? kubeconfigs[config] : config.kubeconfig;
  return ["--kubeconfig", path, "--cache-dir", join(scratchDir, `kube-cache-${label(config)}`)];
}

const KUBECTL_ENV = { ...process.env, KUBECONFIG: "", NO_COLOR: "1", KUBECTL_INTERACTIVE_DELETE: "false" };

/** Runs kubectl to completion; a kubectl still running after `timeoutMs` is killed and the call rejects. */
export function kubectl(args: string[], { config, timeoutMs = 20_000, env }: KubectlOptions): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, [...baseArgs(config), ...args], { env: { ...KUBECTL_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`kubectl ${args.join(" ")} (${label(config)}) did not finish in ${timeoutMs} ms\nstdout: ${stdout.slice(-2000)}\nstderr: ${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs kubectl and parses stdout as JSON; rejects with stderr when it exits non-zero. */
export async function kubectlJson<T>(args: string[], options: KubectlOptions): Promise<T> {
  const result = await kubectl(args, options);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(" ")} (${label(options.config)}) exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A long-running kubectl (e.g. `get -w`): its output so far, and a way to stop it. */
export interface KubectlStream {
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Kills it (SIGKILL) and resolves once it has exited. */
  stop(): Promise<void>;
  /** Resolves with its exit code (null when killed) once it has exited by itself or been stopped. */
  readonly exited: Promise<number | null>;
}

/** Starts kubectl and returns at once; it is killed after `timeoutMs` at the latest. */
export function kubectlStream(args: string[], { config, timeoutMs = 60_000, env }: KubectlOptions): KubectlStream {
  const child: ChildProcess = spawn(KUBECTL, [...baseArgs(config), ...args], { env: { ...KUBECTL_ENV, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d));
  child.stderr!.on("data", (d: Buffer) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code: number | null) => resolve(code)));
  const closed = exited.then(() => undefined);
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return {
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await closed;
    },
  };
}

/**
 * Splits kubectl's table output into rows of cells by the header's column starts (cells such as
 * RESTARTS `3 (5d ago)` contain spaces, so splitting on whitespace would not do). Returns the
 * header names and one record per row. Rows printed by `-w` under the same header parse alike.
 */
export function parseTable(text: string): { header: string[]; rows: Record<string, string>[] } {
  const lines = text.split("\n").filter((line) => line.trim() !== "");
  const headerLine = lines[0] ?? "";
  const starts: number[] = [];
  const header: string[] = [];
  // Columns are at least three spaces apart; a name may hold single spaces (LAST SEEN, NOMINATED NODE).
  for (const match of headerLine.matchAll(/\S+(?: \S+)*/g)) {
    starts.push(match.index);
    header.push(match[0]);
  }
  const rows = lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    header.forEach((name, i) => {
      row[name] = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim();
    });
    return row;
  });
  return { header, rows };
}

/**
 * kubectl's output with every age replaced by AGE and column padding collapsed: two answers a
 * moment apart compare equal when only their ages (and so the column widths) differ.
 */
export function comparable(output: string): string {
  return output
    .replace(/\b\d+[smhdy](\d+[smhdy])?\b/g, "AGE")
    .split("\n")
    .map((line) => line.trim().replace(/ {2,}/g, "  "))
    .join("\n");
}

/** The two kubeconfigs a comparison runs kubectl against: /k8s, and the API server it mirrors. */
export interface TargetPair {
  edge: KubectlOptions["config"];
  fake: KubectlOptions["config"];
}

const GLOBAL_PAIR: TargetPair = { edge: "edge", fake: "fake" };

/** Runs the same kubectl command against both targets, each of which must succeed, and returns what each printed. */
export async function printedByBoth(args: string[], pair: TargetPair = GLOBAL_PAIR): Promise<{ edge: string; fake: string }> {
  const [edge, fake] = await Promise.all([kubectl(args, { config: pair.edge }), kubectl(args, { config: pair.fake })]);
  if (edge.code !== 0 || fake.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed: edge ${edge.code} ${edge.stderr}; fake ${fake.code} ${fake.stderr}`);
  return { edge: edge.stdout, fake: fake.stdout };
}

const printedLines = (stream: KubectlStream): number => stream.stdout().split("\n").filter((l) => l.trim() !== "").length;

/**
 * Runs `kubectl get … -w` against both targets until each printed its header and `initialRows`
 * rows, calls `change` (which adds one object), waits for each to print its row, and returns what
 * each printed.
 */
export async function watchedByBoth(args: string[], initialRows: number, change: () => Promise<unknown>, pair: TargetPair = GLOBAL_PAIR): Promise<{ edge: string; fake: string }> {
  const streams = { edge: kubectlStream(args, { config: pair.edge }), fake: kubectlStream(args, { config: pair.fake }) };
  try {
    const printed = (rows: number) => async () => printedLines(streams.edge) >= rows + 1 && printedLines(streams.fake) >= rows + 1;
    await waitFor(printed(initialRows), { timeoutMs: 20_000, intervalMs: 100, what: `the initial lists of kubectl ${args.join(" ")}` });
    await change();
    await waitFor(printed(initialRows + 1), { timeoutMs: 20_000, intervalMs: 100, what: "the new object's row" });
  } catch (error) {
    const output = (label: keyof TargetPair) => `${label}:\n${streams[label].stdout()}${streams[label].stderr()}`;
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${output("edge")}\n${output("fake")}`);
  } finally {
    await Promise.all([streams.edge.stop(), streams.fake.stop()]);
  }
  return { edge: streams.edge.stdout(), fake: streams.fake.stdout() };
}

/**
 * Splits concatenated JSON documents (what `kubectl get -w -o json` prints: one indented document
 * per event) into parsed values; a trailing incomplete document is left out.
 */
export function parseJsonStream(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (c === "}") {
      depth--;
      if (depth === 0) values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}
