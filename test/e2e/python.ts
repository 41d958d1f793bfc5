/**
 * The official Python client (Debian's python3-kubernetes, run by /usr/bin/python3 or E2E_PYTHON)
 * for the e2e tests: test/e2e/python/client.py, one process per call (with a timeout), each call
 * given its targets (`{label: {host, token?}}`) and arguments as JSON. When the module is missing
 * (.ci/run installs it where it can), PYTHON_MISSING says why and the suites are skipped with the
 * reason in their name, never passed.
 */
import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const PYTHON = process.env.E2E_PYTHON ?? "/usr/bin/python3";
export const CLIENT_SCRIPT = fileURLToPath(new URL("./python/client.py", import.meta.url));
const CALL_TIMEOUT_MS = 20_000;

export type PythonTargets = Record<string, { host: string; token?: string }>;

/** The Python environment without the caller's PYTHONPATH / PYTHONHOME (a pyenv shim must not leak in). */
export const PYTHON_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "PYTHONPATH" && name !== "PYTHONHOME"));

function missingReason(): string | undefined {
  const probe = spawnSync(PYTHON, ["-c", "import kubernetes"], { env: PYTHON_ENV, encoding: "utf8", timeout: 15_000 });
  if (probe.error) return `${PYTHON} not runnable: ${probe.error.message}`;
  if (probe.status !== 0) return `${PYTHON} -c 'import kubernetes' failed (install python3-kubernetes): ${probe.stderr.trim().split("\n").at(-1)}`;
  return undefined;
}

export const PYTHON_MISSING = missingReason();
export const pythonSuite = (title: string) => (PYTHON_MISSING === undefined ? title : `${title} [skipped: ${PYTHON_MISSING}]`);

/** Runs client.py to completion and parses its JSON answer; rejects with its stderr (the traceback). */
export function runPython<T>(command: string, targets: PythonTargets, args: unknown = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      [CLIENT_SCRIPT, command, JSON.stringify(targets), JSON.stringify(args)],
      { env: PYTHON_ENV, timeout: CALL_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`client.py ${command}: ${error.message}\nstderr: ${stderr.slice(-4000)}`));
        else resolve(JSON.parse(stdout) as T);
      },
    );
  });
}
