/**
 * globalSetup of the `e2e` vitest project (Node, not workerd): a fake API server on its own loopback
 * port with one cluster seeded from fixtures.ts, and our Worker under `wrangler dev` mirroring it with
 * informers for `pods`, `deployments` (deployments.apps), and `configmaps`, `namespaces` and `nodes` (for
 * the Table comparisons), fresh Durable Object storage, and
 * READ_TOKEN / ADMIN_TOKEN set. Resolves once every informer reports synced, and hands the tests an
 * E2eContext (context.ts). The teardown stops the Worker's process group and the fake server.
 *
 * kubectl reaches /k8s through an HTTPS front (tls-proxy.ts), because it sends a kubeconfig token only
 * over TLS; Node clients use the Worker's plain-HTTP port.
 *
 * The pods informer indexes `status.phase` and `spec.nodeName`: a field selector on /k8s is served
 * for metadata.name, metadata.namespace and the fields the informer indexes (issue 8), and the tests
 * use `--field-selector status.phase=Running`.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { FakeCluster } from "../fake-apiserver/client.ts";
import { namespace } from "../fake-apiserver/builders.ts";
import { startFakeApiServer, type FakeApiServer } from "../fake-apiserver/server.ts";
import type { ObjectOp } from "../fake-apiserver/types.ts";
import type { E2eContext } from "./context.ts";
import { CHURN_INFORMER_NAMESPACE, CHURN_WATCH_NAMESPACE, CONFIG_MAPS, DEPLOYMENTS, NAMESPACES, NODES, PODS, churnSeedPods, deploymentObject, podObject } from "./fixtures.ts";
import { writeKubeconfig } from "./kubeconfig.ts";
import { startTlsProxy, type TlsProxy } from "./tls-proxy.ts";
import { startWorker, waitInformersSynced, type RunningWorker } from "./worker.ts";

// Tokens of at least 32 characters, as a deployment's must be.
const READ_TOKEN = "e2e-read-token-0123456789abcdefghij";
const ADMIN_TOKEN = "e2e-admin-token-0123456789abcdefghij";
/** A TOKENS credential that reads only the cluster RESTRICTED_CLUSTER (test/e2e/access.e2e.test.ts adds it). */
const RESTRICTED_CLUSTER = "restricted";
const RESTRICTED_READ_TOKEN = "e2e-restricted-reader-0123456789abcdefghij";
/** The Kubernetes user and groups of that credential (TOKENS `user`, `groups`). */
const RESTRICTED_USER = { user: "restricted@example.com", groups: ["team-restricted", "auditors"] };
/** Read credentials of two Kubernetes users, alice and bob, for the member-cluster RBAC tests (kubectl-rbac.e2e.test.ts). */
const RBAC_READERS = {
  alice: { token: "e2e-rbac-alice-token-0123456789abcdefghij", user: "alice" },
  bob: { token: "e2e-rbac-bob-token-0123456789abcdefghijkl", user: "bob" },
};
/** Encrypts stored cluster tokens and webhook secrets, as a deployment must set it (docs/api.md "Secrets at rest"). */
const ENCRYPTION_KEY = "e2e-encryption-key-of-at-least-32-characters";

const INFORMERS = [
  { name: "pods", resource: "pods", indexers: { phase: "status.phase", node: "spec.nodeName" } },
  { name: "deployments", resource: "deployments.apps" },
  // For the Table comparisons of kubectl-table.e2e.test.ts.
  { name: "configmaps", resource: "configmaps" },
  { name: "namespaces", resource: "namespaces" },
  { name: "nodes", resource: "nodes" },
];

function seedOps(): ObjectOp[] {
  return [
    ...NAMESPACES.map((name): ObjectOp => ({ op: "create", resource: "namespaces", object: namespace({ name }) })),
    ...PODS.map((seed): ObjectOp => ({ op: "create", resource: "pods", object: podObject(seed) })),
    ...[CHURN_WATCH_NAMESPACE, CHURN_INFORMER_NAMESPACE].flatMap((ns) => churnSeedPods(ns).map((object): ObjectOp => ({ op: "create", resource: "pods", object }))),
    ...DEPLOYMENTS.map((seed): ObjectOp => ({ op: "create", resource: "deployments", object: deploymentObject(seed) })),
    ...NODES.map((object): ObjectOp => ({ op: "create", resource: "nodes", object })),
    ...CONFIG_MAPS.map((object): ObjectOp => ({ op: "create", resource: "configmaps", object })),
  ];
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratchDir = mkdtempSync(join(tmpdir(), "edge-informer-e2e-"));
  let server: FakeApiServer | undefined;
  let worker: RunningWorker | undefined;
  let tls: TlsProxy | undefined;
  const teardown = async () => {
    await tls?.close();
    await worker?.stop();
    await server?.close();
    rmSync(scratchDir, { recursive: true, force: true });
  };
  try {
    server = await startFakeApiServer({ port: 0 });
    const cluster = await FakeCluster.create(server.url, { id: "e2e" });
    await cluster.apply(seedOps());

    worker = await startWorker({
      vars: {
        KUBE_API_URL: cluster.url,
        INFORMERS: JSON.stringify(INFORMERS),
        READ_TOKEN,
        ADMIN_TOKEN,
        // Its Kubernetes user and groups are what kubectl auth whoami answers (kubectl-server-endpoints.e2e.test.ts).
        TOKENS: JSON.stringify([
          {
            name: "restricted-reader",
            sha256: createHash("sha256").update(RESTRICTED_READ_TOKEN).digest("hex"),
            role: "read",
            clusters: [RESTRICTED_CLUSTER],
            user: RESTRICTED_USER.user,
            groups: RESTRICTED_USER.groups,
          },
          ...Object.entries(RBAC_READERS).map(([name, reader]) => ({
            name: `rbac-${name}`,
            sha256: createHash("sha256").update(reader.token).digest("hex"),
            role: "read",
            clusters: ["*"],
            user: reader.user,
          })),
        ]),
        ENCRYPTION_KEY,
        ALLOW_UNAUTHENTICATED: "false",
      },
    });
    const workerUrl = worker.url;
    await waitInformersSynced(worker, INFORMERS.map((i) => i.name), ADMIN_TOKEN);

    const k8sUrl = `${workerUrl}/k8s`;
    try {
      tls = await startTlsProxy(workerUrl, scratchDir);
    } catch (error) {
      // Without openssl the kubectl suites skip themselves (kubectl.ts); everything else runs.
      console.warn(`e2e: no HTTPS front for kubectl: ${error instanceof Error ? error.message : error}`);
    }
    const context: E2eContext = {
      workerUrl,
      k8sUrl,
      clusterUrl: cluster.url,
      readToken: READ_TOKEN,
      adminToken: ADMIN_TOKEN,
      restricted: { cluster: RESTRICTED_CLUSTER, readToken: RESTRICTED_READ_TOKEN, ...RESTRICTED_USER },
      rbacReaders: RBAC_READERS,
      informers: { pods: "pods", deployments: "deployments" },
      kubeconfigs: {
        edge: writeKubeconfig(join(scratchDir, "edge.kubeconfig"), { server: `${tls?.url ?? workerUrl}/k8s`, token: READ_TOKEN, insecureSkipTlsVerify: tls !== undefined }),
        fake: writeKubeconfig(join(scratchDir, "fake.kubeconfig"), { server: cluster.url }),
      },
      scratchDir,
      workerLog: worker.logPath,
    };
    project.provide("e2e", context);
    return teardown;
  } catch (error) {
    await teardown();
    throw error;
  }
}
