/**
 * A cluster's `authorization` setting (issue 31): `scopes` (the default, today's behaviour) or
 * `rbac` (the member cluster's RBAC, whose objects the factory mirrors in four internal informers).
 * PUT takes it, GET shows it, a bad value is a 400 naming the field and changes nothing.
 */
import { describe, expect, it } from "vitest";
import { call, json, send, unique } from "../helpers/clusters.ts";
import { newCluster } from "../helpers/informer.ts";

describe("a cluster's authorization setting", () => {
  it("defaults to scopes, takes rbac, and shows it", async () => {
    const server = (await newCluster()).url;
    const name = unique("authz");
    const created = await send("PUT", `/clusters/${name}`, { server });
    expect(created.status).toBe(201);
    expect(await json(created)).toMatchObject({ name, authorization: "scopes" });
    const rbac = await send("PUT", `/clusters/${name}`, { server, authorization: "rbac" });
    expect(rbac.status, await rbac.clone().text()).toBe(200);
    expect(await json(rbac)).toMatchObject({ name, authorization: "rbac" });
    expect(await json(await call(`/clusters/${name}`))).toMatchObject({ authorization: "rbac" });
    expect((await json(await call("/clusters"))).items.find((c: { name: string }) => c.name === "default")).toMatchObject({ authorization: "scopes" });
    expect((await send("DELETE", `/clusters/${name}?cascade=true`)).status).toBe(204);
  });

  it("answers 400 naming the field for a bad value, and creates nothing", async () => {
    const name = unique("authz-bad");
    const response = await send("PUT", `/clusters/${name}`, { server: "https://k8s.example.com", authorization: "abac" });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain("authorization: must be one of scopes, rbac");
    expect((await call(`/clusters/${name}`)).status).toBe(404);
  });
});
