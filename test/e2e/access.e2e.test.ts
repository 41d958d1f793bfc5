/**
 * Access with real clients (issue 17), against the e2e Worker, which runs with a deployment's
 * settings (READ_TOKEN, ADMIN_TOKEN, TOKENS; no ALLOW_UNAUTHENTICATED):
 * - an anonymous caller walks every route over HTTP: nothing but /healthz answers below 400;
 * - kubectl with a kubeconfig holding a credential scoped to the cluster `restricted` lists that
 *   cluster's pods as its own server does, and is told Forbidden on the default cluster; with the
 *   unscoped READ_TOKEN it reads both;
 * - the official Python client, likewise, through its typed models and ApiException;
 * - the status page in chromium, signed in with the scoped credential, shows only its cluster.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pod } from "../fake-apiserver/builders.ts";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { anonymousWalk } from "../helpers/routes.ts";
import { ensureChromium, launchChromium } from "./chromium.ts";
import { e2e, workerAdmin as admin, workerJson } from "./context.ts";
import { readKubeconfig, writeKubeconfigContexts } from "./kubeconfig.ts";
import { KUBECTL_MISSING, kubectl, kubectlJson, kubectlSuite } from "./kubectl.ts";
import type { KubeList } from "./objects.ts";
import { PYTHON_MISSING, pythonSuite, runPython } from "./python.ts";
import { waitFor } from "./wait.ts";

const RESTRICTED_PODS = ["restricted-a", "restricted-b"];
let server: FakeCluster;
const names = (list: KubeList) => list.items.map((item) => item.metadata.name).sort();

beforeAll(async () => {
  const { clusterUrl, restricted } = e2e();
  server = await FakeCluster.create(clusterUrl.replace(/\/clusters\/[^/]+$/, ""));
  for (const name of RESTRICTED_PODS) await server.create("pods", pod({ name, namespace: "default" }));
  await admin("PUT", `/clusters/${restricted.cluster}`, { server: server.url });
  await admin("PUT", `/clusters/${restricted.cluster}/informers/pods`, { resource: "pods" });
  const path = `/clusters/${restricted.cluster}/informers/pods`;
  await waitFor(async () => (await workerJson<{ synced: boolean }>(path)).synced, { timeoutMs: 30_000, intervalMs: 200, what: `${path} to sync` });
});

afterAll(async () => {
  await admin("DELETE", `/clusters/${e2e().restricted.cluster}?cascade=true`).catch(() => {});
  await server?.dispose().catch(() => {});
});

describe("a deployment's Worker, anonymously", () => {
  it("answers nothing but /healthz", async () => {
    const { workerUrl, restricted } = e2e();
    const walked = await anonymousWalk(
      (method, path) => fetch(`${workerUrl}${path}`, { method, signal: AbortSignal.timeout(10_000) }),
      { cluster: restricted.cluster, informer: "pods" },
    );
    expect(walked.filter((route) => route.status < 400 && route.path !== "/healthz")).toEqual([]);
    expect(walked.find((route) => route.path === "/healthz")?.status).toBe(200);
    expect(walked.filter((route) => route.method === "GET" && route.path.startsWith("/k8s/")).every((route) => route.status === 401)).toBe(true);
  });
});

describe.skipIf(KUBECTL_MISSING !== undefined)(kubectlSuite("kubectl with a scoped and an unscoped token"), () => {
  let kubeconfig: { kubeconfig: string };

  beforeAll(() => {
    const { kubeconfigs, scratchDir, restricted, readToken } = e2e();
    const edge = readKubeconfig(kubeconfigs.edge);
    kubeconfig = {
      kubeconfig: writeKubeconfigContexts(join(scratchDir, "access.kubeconfig"), [
        { ...edge, name: "scoped-own", server: `${edge.server}/clusters/${restricted.cluster}`, token: restricted.readToken },
        { ...edge, name: "scoped-default", token: restricted.readToken },
        { ...edge, name: "unscoped-own", server: `${edge.server}/clusters/${restricted.cluster}`, token: readToken },
        { ...edge, name: "unscoped-default", token: readToken },
        { ...edge, name: "restricted-server", server: server.url, token: undefined, insecureSkipTlsVerify: false },
      ]),
    };
  });

  it("reads the scoped cluster as its own server does, with either token", async () => {
    const expected = names(await kubectlJson<KubeList>(["--context", "restricted-server", "get", "pods", "-A", "-o", "json"], { config: kubeconfig }));
    expect(expected).toEqual(RESTRICTED_PODS);
    for (const context of ["scoped-own", "unscoped-own"]) {
      expect(names(await kubectlJson<KubeList>(["--context", context, "get", "pods", "-A", "-o", "json"], { config: kubeconfig })), context).toEqual(expected);
    }
  });

  it("is told Forbidden on a cluster outside its scope, and the unscoped token reads it", async () => {
    const refused = await kubectl(["--context", "scoped-default", "get", "pods", "-A"], { config: kubeconfig });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Error from server \(Forbidden\).*credential 'restricted-reader' may not read cluster 'default'/);
    expect(refused.stdout).toBe("");
    const allowed = await kubectlJson<KubeList>(["--context", "unscoped-default", "get", "pods", "-A", "-o", "json"], { config: kubeconfig });
    expect(allowed.items.length).toBeGreaterThan(0);
    expect(names(allowed)).not.toContain(RESTRICTED_PODS[0]);
  });
});

interface AccessAnswer {
  raised: string | null;
  status?: number;
  body?: { kind: string; reason: string; message: string };
  type?: string;
  items?: string[];
}

describe.skipIf(PYTHON_MISSING !== undefined)(pythonSuite("the Python client with a scoped and an unscoped token"), () => {
  it("lists its own cluster and gets a typed 403 elsewhere", async () => {
    const { k8sUrl, restricted, readToken } = e2e();
    const answers = await runPython<Record<string, AccessAnswer>>("access", {
      scopedOwn: { host: `${k8sUrl}/clusters/${restricted.cluster}`, token: restricted.readToken },
      scopedDefault: { host: k8sUrl, token: restricted.readToken },
      unscopedDefault: { host: k8sUrl, token: readToken },
      anonymous: { host: k8sUrl },
    });
    expect(answers.scopedOwn).toEqual({ raised: null, type: "V1PodList", items: RESTRICTED_PODS });
    expect(answers.scopedDefault).toMatchObject({ raised: "ApiException", status: 403, body: { kind: "Status", reason: "Forbidden" } });
    expect(answers.unscopedDefault?.raised).toBeNull();
    expect(answers.unscopedDefault?.items?.length).toBeGreaterThan(0);
    expect(answers.anonymous).toMatchObject({ raised: "ApiException", status: 401, body: { kind: "Status", reason: "Unauthorized" } });
  });
});

const CHROMIUM_MISSING = ensureChromium();
const browserSuite = (title: string) => (CHROMIUM_MISSING === undefined ? title : `${title} [skipped: ${CHROMIUM_MISSING}]`);

describe.skipIf(CHROMIUM_MISSING !== undefined)(browserSuite("the status page in chromium with a scoped credential"), () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("shows only the clusters the credential may read", async () => {
    const { workerUrl, restricted, readToken } = e2e();
    const sections = async (password: string) => {
      const context = await browser.newContext({ javaScriptEnabled: false, httpCredentials: { username: "ops", password } });
      try {
        const page = await context.newPage();
        const response = await page.goto(`${workerUrl}/`);
        expect(response?.status()).toBe(200);
        expect(response?.headers()["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
        return {
          sections: await page.locator("section.cluster").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-cluster"))),
          rows: await page.locator("tr[data-cluster]").evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-cluster"))),
        };
      } finally {
        await context.close();
      }
    };
    expect(await sections(restricted.readToken)).toEqual({ sections: [restricted.cluster], rows: [restricted.cluster] });
    const everything = await sections(readToken);
    expect(everything.sections).toEqual(expect.arrayContaining(["default", restricted.cluster]));

    // Without a credential, or with one that is not accepted, the browser gets nothing: chromium
    // either shows the 401 or, having been challenged, fails the navigation as refused.
    for (const httpCredentials of [undefined, { username: "ops", password: "not-a-credential-0123456789abcdefgh" }]) {
      const context = await browser.newContext({ javaScriptEnabled: false, ...(httpCredentials ? { httpCredentials } : {}) });
      try {
        const outcome = await (await context.newPage()).goto(`${workerUrl}/`).then(
          (response) => response?.status(),
          (error: Error) => error.message.match(/ERR_INVALID_AUTH_CREDENTIALS/)?.[0] ?? error.message,
        );
        expect([401, "ERR_INVALID_AUTH_CREDENTIALS"]).toContain(outcome);
      } finally {
        await context.close();
      }
    }
  });
});
