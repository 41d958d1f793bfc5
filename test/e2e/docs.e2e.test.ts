/**
 * The repository's docs stand on their own: every file they point to is in the repository, the
 * invariants they cite are stated in docs/architecture.md, and the README's webhook walkthrough gets
 * the first delivery through without waiting out a backoff.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCS = ["README.md", "docs/api.md", "docs/architecture.md", "examples/README.md"];
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");

describe("docs", () => {
  it.each(DOCS)("%s points only to files in this repository", (doc) => {
    const text = read(doc);
    expect(text).not.toMatch(/\.\.\/shared|\(shared\)|DESIGN\.md|\bAPI\.md|reference\//);
    // Relative paths in backticks or links that look like files: `../docs/api.md`, `src/cache/`, (docs/x.md)
    const paths = [...text.matchAll(/[`(]((?:\.{1,2}\/)?(?:src|docs|examples|test|scripts|bench)\/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])[`)]/g)].map((m) => m[1]!);
    const missing = paths.filter((path) => !existsSync(resolve(path.startsWith(".") ? join(ROOT, dirname(doc)) : ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("states every invariant the docs cite in docs/architecture.md", () => {
    const architecture = read("docs/architecture.md");
    for (let n = 1; n <= 8; n++) expect(architecture).toMatch(new RegExp(`^${n}\\. \\*\\*`, "m"));
    const cited = DOCS.flatMap((doc) => [...read(doc).matchAll(/invariants? (\d)/g)].map((m) => Number(m[1])));
    expect(cited.every((n) => n >= 1 && n <= 8)).toBe(true);
  });

  it("walks through webhooks with the receiver running before the first delivery is retried", () => {
    const readme = read("README.md");
    const subscribe = readme.indexOf("/informers/pods/subscriptions");
    const receiver = readme.indexOf("npx node examples/receiver.ts", subscribe);
    const enable = readme.indexOf("/enable", subscribe);
    expect(subscribe).toBeGreaterThan(0);
    expect(receiver).toBeGreaterThan(subscribe);
    expect(enable).toBeGreaterThan(receiver);
  });

  it("documents npm start's port option", () => {
    expect(read("README.md")).toContain("npm start -- --port 8788");
  });
});
