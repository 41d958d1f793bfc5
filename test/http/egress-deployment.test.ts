/**
 * Egress in a deployment (review N8, issue 29 item 5), through the Worker's whole app: with an
 * allow-list unset, creating a subscription or a cluster that would send off loopback is refused
 * with a 400 naming the settings, unless ALLOW_ANY_EGRESS says any host is meant; the Worker's own
 * host name is never a receiver or an API server; a receiver's answers reach admins only.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import { ADMIN, unique } from "../helpers/clusters.ts";
import { newCluster, startInformer, waitFor, waitSynced } from "../helpers/informer.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const app = createApp();
type Settings = { [name in keyof typeof env]?: string };

/** A deployment's settings (no local development), with no allow-list unless `settings` sets one. */
const deployment = (settings: Settings = {}) =>
  ({ ...env, ALLOW_UNAUTHENTICATED: "false", WEBHOOK_ALLOWED_HOSTS: undefined, CLUSTER_ALLOWED_HOSTS: undefined, ...settings }) as typeof env;

async function call(settings: typeof env, method: string, url: string, body?: unknown, headers: Record<string, string> = ADMIN) {
  const init: RequestInit = { method, headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  return app.request(url, init, settings);
}

async function errorOf(response: Response): Promise<[number, string]> {
  return [response.status, ((await response.json()) as { error: { message: string } }).error.message];
}

async function syncedInformer() {
  const cluster = await newCluster();
  const informer = await startInformer(cluster);
  await waitSynced(informer.stub);
  return { cluster, ...informer };
}

describe("egress in a deployment (review N8)", () => {
  it("refuses a subscription while WEBHOOK_ALLOWED_HOSTS is unset, naming the settings, and creates nothing", async () => {
    const { name } = await syncedInformer();
    const settings = deployment();
    for (const url of ["https://169.254.169.254.nip.io/latest/meta-data", "https://internal-admin.corp.example.com/api/x"]) {
      const [status, message] = await errorOf(await call(settings, "POST", `https://edge.example.com/informers/${name}/subscriptions`, { url }));
      expect(status, url).toBe(400);
      expect(message).toMatch(/WEBHOOK_ALLOWED_HOSTS is unset/);
      expect(message).toMatch(/ALLOW_ANY_EGRESS/);
    }
    const listed = (await (await call(settings, "GET", `https://edge.example.com/informers/${name}/subscriptions`)).json()) as { items: unknown[] };
    expect(listed.items).toEqual([]);
  });

  it("accepts a receiver the allow-list names, or any host with ALLOW_ANY_EGRESS=true", async () => {
    const { name } = await syncedInformer();
    for (const settings of [deployment({ WEBHOOK_ALLOWED_HOSTS: "hooks.example.com" }), deployment({ ALLOW_ANY_EGRESS: "true" })]) {
      const created = await call(settings, "POST", `https://edge.example.com/informers/${name}/subscriptions`, { url: "https://hooks.example.com/x", replayExisting: false });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect((await call(settings, "DELETE", `https://edge.example.com/subscriptions/${id}`)).status).toBe(204);
    }
  });

  it("refuses a cluster while CLUSTER_ALLOWED_HOSTS is unset, naming the settings, and stores nothing", async () => {
    const name = unique("egress");
    const settings = deployment();
    const [status, message] = await errorOf(await call(settings, "PUT", `https://edge.example.com/clusters/${name}`, { server: "https://k8s.corp.example.com" }));
    expect(status).toBe(400);
    expect(message).toMatch(/CLUSTER_ALLOWED_HOSTS is unset/);
    expect(message).toMatch(/ALLOW_ANY_EGRESS/);
    expect((await call(settings, "GET", `https://edge.example.com/clusters/${name}`)).status).toBe(404);
  });

  it("refuses the Worker's own host name as a receiver or an API server, allow-list or not", async () => {
    const { name } = await syncedInformer();
    const settings = deployment({ WEBHOOK_ALLOWED_HOSTS: "example.com", CLUSTER_ALLOWED_HOSTS: "example.com", ALLOW_ANY_EGRESS: "true" });
    const subscription = await errorOf(await call(settings, "POST", `https://edge.example.com/informers/${name}/subscriptions`, { url: "https://EDGE.example.com./x" }));
    expect(subscription).toEqual([400, expect.stringMatching(/edge\.example\.com\.? is this Worker's own host name/i)]);
    const cluster = await errorOf(await call(settings, "PUT", `https://edge.example.com/clusters/${unique("self")}`, { server: "https://edge.example.com/k8s" }));
    expect(cluster).toEqual([400, expect.stringMatching(/this Worker's own host name/)]);
    // ACCESS_HOSTNAMES names the Worker's hosts too: refused whichever host the request came to.
    const viaAccess = deployment({ WEBHOOK_ALLOWED_HOSTS: "example.com", ACCESS_HOSTNAMES: "informers.example.com" });
    const other = await errorOf(await call(viaAccess, "POST", `https://edge.example.com/informers/${name}/subscriptions`, { url: "https://informers.example.com/x" }));
    expect(other).toEqual([400, expect.stringMatching(/informers\.example\.com is this Worker's own host name/)]);
  });

  it("shows readers a failed delivery's status and our reason, and admins also what the receiver answered", async () => {
    const { cluster, name } = await syncedInformer();
    const secretText = `internal-only-${crypto.randomUUID()}`;
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 403, body: secretText } });
    // Local development: loopback http receivers, an anonymous reader, the admin token.
    const local = { ...env, ALLOW_UNAUTHENTICATED: "true" } as typeof env;
    const created = await call(local, "POST", `http://localhost/informers/${name}/subscriptions`, { url: hook.url, replayExisting: false, retryBudgetSeconds: 1 });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await cluster.create("pods", pod({ name: "leak", namespace: "a" }));
    await waitFor("a dead letter", async () => (await (await call(local, "GET", `http://localhost/subscriptions/${id}`)).json<{ deadLetters: number }>()).deadLetters > 0);

    const asReader = (path: string) => call(local, "GET", `http://localhost/subscriptions/${id}${path}`, undefined, {});
    for (const path of ["", "/deliveries", "/dead-letters"]) {
      const response = await asReader(path);
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).not.toContain(secretText);
    }
    const log = (await (await asReader("/deliveries")).json()) as { items: { status: number; error: string }[] };
    expect(log.items[0]).toMatchObject({ status: 403, error: "HTTP 403" });
    const adminLog = (await (await call(local, "GET", `http://localhost/subscriptions/${id}/deliveries`)).json()) as { items: { response?: string }[] };
    expect(adminLog.items[0]).toMatchObject({ status: 403, error: "HTTP 403", response: secretText });
  });
});
