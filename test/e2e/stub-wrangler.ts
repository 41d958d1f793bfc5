/**
 * A stub `wrangler` for the tests of the npm scripts (scripts/dev.mjs, scripts/deploy.mjs): an
 * executable script in a temporary directory put first on PATH, so the script under test runs it
 * instead of the real one. The directory lives for the test file's tests and also holds what they write.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

/** Creates the directory with `wrangler` (`source`, a Node script) before the file's tests; answers a getter of it. */
export function useStubWrangler(name: string, source: string): () => string {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `${name}-`));
    writeFileSync(join(dir, "wrangler"), source);
    chmodSync(join(dir, "wrangler"), 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}
