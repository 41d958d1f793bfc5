/**
 * The status page through the Worker's front door, in workerd: HTML for a browser, the same
 * snapshot as JSON otherwise, HTTP Basic credentials whose password is the token, and the redeliver
 * form (admin only, same site only). The browser itself is tested in test/e2e/status-page.e2e.test.ts.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { unwrap } from "../../src/errors.ts";
import { createApp } from "../../src/http/app.ts";
import { presentedToken as credentialToken } from "../../src/auth/principal.ts";
import { newCluster, startInformer, waitFor, waitSleeping, waitSynced } from "../helpers/informer.ts";
import { startInCluster } from "../helpers/clusters.ts";
import { subscribe } from "../helpers/webhooks.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";

const base = "http://localhost";
const basic = (token: string) => `Basic ${btoa(`anyone:${token}`)}`;
const withTokens = { ...env, READ_TOKEN: "reader-secret-0123456789abcdefghijk", ADMIN_TOKEN: "test-admin-token-0123456789abcdef" };

describe("status page", () => {
  it("reads a token from a bearer header or from Basic credentials' password", () => {
    expect(credentialToken("Bearer abc")).toBe("abc");
    expect(credentialToken(basic("p:ss"))).toBe("p:ss");
    expect(credentialToken("Basic !!!")).toBeUndefined();
    expect(credentialToken(`Basic ${btoa("no-colon")}`)).toBeUndefined();
    expect(credentialToken(undefined)).toBeUndefined();
  });

  it("renders informers and subscriptions as HTML, the snapshot as JSON, and redelivers dead letters for the admin", async () => {
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    const broken = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 503 } });
    const failing = await subscribe(name, broken, { retryBudgetSeconds: 1, maxBatchSize: 10 });
    await waitFor("dead letters", async () => unwrap(await failing.stub().status()).deadLetters === 3, 30_000);

    const app = createApp();
    const get = (headers: Record<string, string>) => app.request(`${base}/`, { headers }, withTokens);
    const refused = await get({ accept: "text/html" });
    expect([refused.status, refused.headers.get("www-authenticate")]).toEqual([401, 'Basic realm="edge-informer", charset="UTF-8"']);

    const page = await get({ accept: "text/html", authorization: basic("reader-secret-0123456789abcdefghijk") });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const text = (await page.text()).replaceAll("<wbr>", ""); // a host may wrap at its separators (issue 30)
    expect(text).toContain(`<section class="informer" id="informer-${name}" data-informer="${name}" data-cluster="default">`);
    expect(text).toContain(`data-subscription="${failing.id}" data-cluster="default"`);
    expect(text).toContain(`action="/status/subscriptions/${failing.id}/redeliver"`);
    expect(text).toContain('<meta http-equiv="refresh"');
    for (const secret of [failing.secret, "reader-secret-0123456789abcdefghijk", "test-admin-token-0123456789abcdef", broken.url]) expect(text).not.toContain(secret);

    const json = await get({ authorization: "Bearer reader-secret-0123456789abcdefghijk" });
    const snapshot = (await json.json()) as { informers: { identity: { informer: string } }[] };
    expect(snapshot.informers.map((i) => i.identity.informer)).toContain(name);

    const post = (headers: Record<string, string>) =>
      app.request(`${base}/status/subscriptions/${failing.id}/redeliver`, { method: "POST", headers, redirect: "manual" }, withTokens);
    expect((await post({ authorization: basic("reader-secret-0123456789abcdefghijk") })).status).toBe(401);
    expect((await post({ authorization: basic("test-admin-token-0123456789abcdef"), "sec-fetch-site": "cross-site" })).status).toBe(403);
    const done = await post({ authorization: basic("test-admin-token-0123456789abcdef"), "content-type": "application/x-www-form-urlencoded" });
    expect(done.status).toBe(303);
    // The endpoint still answers 503: the first redelivery fails and the rest are not tried.
    expect(done.headers.get("location")).toBe(`/?subscription=${failing.id}&redelivered=0&failed=1#${failing.id}`);
    const after = await app.request(`${base}${done.headers.get("location")}`, { headers: { accept: "text/html", authorization: basic("reader-secret-0123456789abcdefghijk") } }, withTokens);
    expect(await after.text()).toMatch(/Redelivered 0 dead letters of <code>sub_[0-9a-f]+<\/code>; 1 failed/);
  });

  it("shows a table of the clusters and each informer and subscription under its cluster, without a cluster's token or URL", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const { fake, cluster, remove } = await startInCluster("shown", { token });
    const hook = await ReceiverEndpoint.create(env.RECEIVER_URL);
    const sub = await subscribe("pods", hook, {}, cluster);
    // A host may wrap at its dots and colons (`<wbr>`, issue 30): read it as the browser shows its text.
    const page = (await (await createApp().request(`${base}/`, { headers: { accept: "text/html" } }, env)).text()).replaceAll("<wbr>", "");
    const json = await (await createApp().request(`${base}/`, {}, env)).text();
    await remove();

    // The clusters table: the default cluster first, this one with its API server's host only.
    expect(page.indexOf('<tr data-cluster="default">')).toBeGreaterThan(-1);
    expect(page.indexOf(`<tr data-cluster="${cluster}">`)).toBeGreaterThan(page.indexOf('<tr data-cluster="default">'));
    const row = page.slice(page.indexOf(`<tr data-cluster="${cluster}">`), page.indexOf("</tr>", page.indexOf(`<tr data-cluster="${cluster}">`)));
    expect(row).toContain(`<span class="host" data-field="server">${new URL(fake.url).host}</span>`);
    expect(row).toContain('<td data-field="informers">1</td>');
    expect(row).toMatch(/data-field="health"><span class="ok">1 of 1<\/span>/);
    // Its own section, holding its informer and the informer's subscription, each naming it.
    const section = page.slice(page.indexOf(`<section class="cluster" id="cluster-${cluster}" data-cluster="${cluster}">`));
    expect(section).toMatch(new RegExp(`^<section class="cluster"[^>]*>\\s*<h2>Cluster ${cluster}</h2>`));
    expect(section).toContain(`<section class="informer" id="informer-${cluster}/pods" data-informer="pods" data-cluster="${cluster}">`);
    expect(section).toContain(`data-subscription="${sub.id}" data-cluster="${cluster}"`);
    // The JSON snapshot names the cluster too, with no more than the page shows.
    const snapshot = JSON.parse(json) as { clusters: object[]; informers: { identity: object; subscriptions: { identity: object }[] }[] };
    expect(snapshot.clusters).toContainEqual({ name: cluster, source: "api", host: new URL(fake.url).host, informers: 1 });
    const informer = snapshot.informers.find((i) => JSON.stringify(i.identity) === JSON.stringify({ cluster, informer: "pods" }))!;
    expect(informer.subscriptions.map((s) => s.identity)).toEqual([{ cluster, informer: "pods", subscription: sub.id }]);
    for (const text of [page, json]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(fake.url); // its path names the fake cluster: shown by host only
      expect(text).not.toContain(sub.secret);
    }
  });

  it("shows an informer sleeping between watch windows as following its resource, and when it wakes", async () => {
    const cluster = await newCluster();
    const { name, stub } = await startInformer(cluster, { maxLagSeconds: 60 });
    await waitSynced(stub);
    await waitSleeping(stub);
    const page = await createApp().request(`${base}/`, { headers: { accept: "text/html" } }, env);
    const section = (await page.text()).split(`data-informer="${name}"`)[1]!;
    expect(section).toMatch(/<dd data-field="watch"><span class="badge ok">sleeping<\/span> <span class="age">wakes in (5\d s|1 min)<\/span>/);
  });
});
