/**
 * An `rbac` cluster for tests (issue 31): a fake API server cluster holding the bootstrap policy
 * every real cluster has (fake-apiserver/bootstrap-rbac.ts), pods in
 * namespaces team-a and team-b, Role `pod-reader` in each, alice bound in team-a and bob in team-b;
 * and a deployment whose TOKENS give alice, bob and root (system:masters) a read credential each.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { sha256Hex } from "../../src/auth/credentials.ts";
import { createApp } from "../../src/http/app.ts";
import { pod } from "../fake-apiserver/client.ts";
import { podReaderBinding, podReaderRole, seedBootstrapRbac } from "../fake-apiserver/bootstrap-rbac.ts";
import { call, createSynced, json, send, unique } from "./clusters.ts";
import { newCluster, waitFor } from "./informer.ts";

export const TEAMS = ["team-a", "team-b"] as const;
export const USERS = { alice: "team-a", bob: "team-b" } as const;
export type Reader = "alice" | "bob" | "root" | "nobody";

const tokenOf = (reader: Reader) => `${reader}-read-token-0123456789abcdef0123456789`;

/**
 * The rbac cluster with a synced `pods` informer (2 pods per team), and `as(reader, path, init)`:
 * a request through a Worker whose TOKENS know alice, bob, root (group system:masters) and nobody
 * (bound to nothing).
 */
export async function rbacCluster(prefix = "rbac") {
  const fake = await newCluster();
  await seedBootstrapRbac(fake);
  for (const team of TEAMS) {
    await fake.create("roles", podReaderRole(team));
    for (const i of [1, 2]) await fake.create("pods", pod({ name: `${team}-pod-${i}`, namespace: team }));
  }
  for (const [user, team] of Object.entries(USERS)) await fake.create("rolebindings", podReaderBinding(team, user));
  const cluster = unique(prefix);
  const put = await send("PUT", `/clusters/${cluster}`, { server: fake.url, authorization: "rbac" });
  expect(put.status, await put.clone().text()).toBe(201);
  await createSynced(`/clusters/${cluster}/informers/pods`);
  await waitFor("the RBAC informers to sync", async () => {
    const items = (await json(await call(`/clusters/${cluster}/informers`))).items as { name: string; synced: boolean }[];
    return items.filter((i) => i.name.startsWith("rbac-") && i.synced).length === 4;
  });
  const entries = await Promise.all(
    (["alice", "bob", "root", "nobody"] as const).map(async (reader) => ({
      name: reader,
      role: "read",
      clusters: ["*"],
      sha256: await sha256Hex(tokenOf(reader)),
      ...(reader === "root" ? { groups: ["system:masters"] } : { user: reader }),
    })),
  );
  const settings = { ...env, ALLOW_UNAUTHENTICATED: "false", READ_TOKEN: undefined, TOKENS: JSON.stringify(entries) } as typeof env;
  const app = createApp();
  const as = (reader: Reader, path: string, init: RequestInit = {}) =>
    app.request(`http://localhost${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${tokenOf(reader)}` } }, settings);
  const remove = async () => expect((await send("DELETE", `/clusters/${cluster}?cascade=true`)).status).toBe(204);
  return { fake, cluster, as, tokenOf, remove };
}
