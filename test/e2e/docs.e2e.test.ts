/**
 * The repository's docs stand on their own: every file they point to is in the repository, every
 * relative link (README.md, CHANGELOG.md, docs/) reaches a file and, with a `#fragment`, one of its
 * headings (issue 30 moved the README's long sections to docs/), the invariants they cite are stated in docs/architecture.md, and the README's webhook walkthrough gets
 * the first delivery through without waiting out a backoff. The deploy steps stay true: the settings
 * they name are the Worker's, they set KUBE_API_URL, the secrets and a read credential before
 * `npm run deploy` (which is the guarded script), the RBAC they give grants only reads on the
 * resources wrangler.toml mirrors, and the token commands they give produce what the Worker expects.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadAllYaml } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCS = [
  "README.md",
  "CHANGELOG.md",
  "docs/api.md",
  "docs/architecture.md",
  "docs/configuration.md",
  "docs/costs.md",
  "docs/deploying.md",
  "docs/development.md",
  "docs/monitoring.md",
  "docs/security.md",
  "examples/README.md",
];
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
/** The invariants docs/architecture.md states, numbered as in the design (DESIGN.md "Invariants"). */
const INVARIANTS = 11;

describe("docs", () => {
  it.each(DOCS)("%s points only to files in this repository", (doc) => {
    const text = read(doc);
    expect(text).not.toMatch(/\.\.\/shared|\(shared\)|DESIGN\.md|\bAPI\.md|reference\//);
    // Relative paths in backticks or links that look like files: `../docs/api.md`, `src/cache/`, (docs/x.md)
    const paths = [...text.matchAll(/[`(]((?:\.{1,2}\/)?(?:src|docs|examples|test|scripts|bench)\/[A-Za-z0-9_./-]*[A-Za-z0-9_/-])[`)]/g)].map((m) => m[1]!);
    const missing = paths.filter((path) => !existsSync(resolve(path.startsWith(".") ? join(ROOT, dirname(doc)) : ROOT, path)));
    expect(missing).toEqual([]);
  });

  it("has every Markdown file of docs/ in that list", () => {
    const inDocs = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`);
    expect(inDocs.filter((doc) => !DOCS.includes(doc))).toEqual([]);
  });

  it.each(DOCS)("%s links only to files and headings that exist", (doc) => {
    const broken = relativeLinks(read(doc)).filter((link) => {
      const [path, fragment] = link.split("#") as [string, string | undefined];
      const target = path === "" ? doc : join(dirname(doc), decodeURIComponent(path));
      if (!existsSync(join(ROOT, target))) return true;
      return fragment !== undefined && target.endsWith(".md") && !headingAnchors(read(target)).has(fragment);
    });
    expect(broken).toEqual([]);
  });

  it("states every invariant the docs cite in docs/architecture.md", () => {
    const architecture = read("docs/architecture.md");
    const stated = [...architecture.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1]));
    expect(stated).toEqual(Array.from({ length: INVARIANTS }, (_, i) => i + 1));
    const cited = DOCS.flatMap((doc) => [...read(doc).matchAll(/invariants? (\d+)/g)].map((m) => Number(m[1])));
    expect(cited.filter((n) => n < 1 || n > INVARIANTS)).toEqual([]);
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

  it("documents npm start's port option, its fresh start and the kubectl line its banner prints", () => {
    const readme = read("README.md");
    expect(readme).toContain("npm start -- --port 8788");
    expect(readme).toContain("npm start -- --fresh");
    expect(readme).toContain("kubectl --server http://127.0.0.1:8787/k8s get pods -A");
  });
});

/** The targets of a Markdown text's relative links and images, `[text](target)`, outside code blocks and spans. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The anchors GitHub gives a Markdown text's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The names of the Worker's settings: the keys of `Env` in src/env.ts. */
const SETTINGS = new Set([...read("src/env.ts").matchAll(/^ {2}([A-Z][A-Z0-9_]*)\??:/gm)].map((m) => m[1]!));
/** docs/deploying.md's steps (the README's "Deploying" section until issue 30), up to its first subsection. */
const deploying = () => {
  const text = read("docs/deploying.md");
  return text.slice(0, text.indexOf("\n## "));
};

describe("deploy docs", () => {
  it.each(["docs/configuration.md", "docs/deploying.md", "docs/security.md"])("%s puts and configures only settings the Worker has", (doc) => {
    const text = read(doc);
    // Secrets a spec names ("secretBinding": "AUDIT_WEBHOOK_SECRET") are the user's to choose.
    const chosen = (name: string) => name === "NAME" || text.includes(`"${name}"`);
    const secrets = [...text.matchAll(/wrangler secret put ([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!).filter((name) => !chosen(name));
    const table = [...text.matchAll(/^\| `([A-Z][A-Z0-9_]*)`(?:, `([A-Z][A-Z0-9_]*)`)? \|/gm)].flatMap((m) => m.slice(1).filter(Boolean));
    expect(secrets.length + table.length).toBeGreaterThan(0);
    expect([...secrets, ...table].filter((name) => !SETTINGS.has(name))).toEqual([]);
  });

  it("sets KUBE_API_URL, the cluster token, the encryption key and a read credential before npm run deploy, which is the guarded script", () => {
    const section = deploying();
    const deploy = section.indexOf("npm run deploy       ");
    for (const step of ["`KUBE_API_URL`", "secret put KUBE_TOKEN", "secret put ENCRYPTION_KEY", "secret put READ_TOKEN", "secret put TOKENS"]) {
      const at = section.indexOf(step);
      expect(at, step).toBeGreaterThan(0);
      expect(at, step).toBeLessThan(deploy);
    }
    expect(section).toContain("workers_dev = false");
    expect(section).toContain("ACCESS_TEAM_DOMAIN");
    expect(JSON.parse(read("package.json")).scripts.deploy).toBe("node scripts/deploy.mjs");
  });

  it("gives the ServiceAccount get, list and watch on exactly the resources wrangler.toml mirrors, and a token Secret of its own", () => {
    const yaml = /```yaml\n# edge-informer-rbac\.yaml\n([\s\S]*?)```/.exec(deploying())?.[1];
    expect(yaml).toBeDefined();
    type Doc = { kind: string; metadata: { name: string; namespace?: string; annotations?: Record<string, string> }; type?: string; rules?: { apiGroups: string[]; resources: string[]; verbs: string[] }[]; roleRef?: { kind: string; name: string }; subjects?: { kind: string; name: string; namespace: string }[] };
    const docs = loadAllYaml(yaml!) as Doc[];
    const of = (kind: string) => docs.find((doc) => doc.kind === kind)!;
    const account = of("ServiceAccount");
    const role = of("ClusterRole");
    const binding = of("ClusterRoleBinding");
    const secret = of("Secret");
    expect(role.rules!.every((rule) => [...rule.verbs].sort().join() === "get,list,watch")).toBe(true);
    const granted = role.rules!.flatMap((rule) => rule.apiGroups.flatMap((group) => rule.resources.map((resource) => (group ? `${resource}.${group}` : resource))));
    const mirrored = (JSON.parse(unstable_readConfig({ config: join(ROOT, "wrangler.toml") }).vars.INFORMERS as string) as { resource: string }[]).map((spec) => spec.resource);
    expect(granted.sort()).toEqual([...new Set(mirrored)].sort());
    expect(binding.roleRef).toMatchObject({ kind: "ClusterRole", name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: account.metadata.name, namespace: account.metadata.namespace }]);
    expect(secret.type).toBe("kubernetes.io/service-account-token");
    expect(secret.metadata.annotations?.["kubernetes.io/service-account.name"]).toBe(account.metadata.name);
    expect(secret.metadata.namespace).toBe(account.metadata.namespace);
    // The commands read that Secret and ask about that ServiceAccount.
    const section = deploying();
    expect(section).toContain(`kubectl -n ${secret.metadata.namespace} get secret ${secret.metadata.name} -o jsonpath='{.data.token}' | base64 -d | npx wrangler secret put KUBE_TOKEN`);
    expect(section).toContain(`--as system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`);
  });

  it("gives token commands that make what the Worker takes: at least 32 characters, and a TOKENS hash as hex SHA-256", () => {
    const token = execFileSync("bash", ["-c", "openssl rand -base64 32"], { encoding: "utf8" }).trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    for (const doc of ["docs/configuration.md", "docs/security.md"]) {
      const hash = /printf %s "\$TOKEN" \| sha256sum \| cut -d' ' -f1/.exec(read(doc))?.[0];
      expect(hash, doc).toBeDefined();
      const printed = execFileSync("bash", ["-c", hash!], { encoding: "utf8", env: { ...process.env, TOKEN: token } }).trim();
      expect(printed).toBe(createHash("sha256").update(token).digest("hex"));
    }
  });
});
