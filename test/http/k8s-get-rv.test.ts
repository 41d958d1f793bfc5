/**
 * A `/k8s` get at a resourceVersion, as kube-apiserver 1.32 answers it (issue 30 item 5, review
 * G10; facts §3, §4): a resourceVersion that is not a decimal is the storage's 400; "0" is the
 * cache as it is; one ahead of the cache is waited for (the watch cache's 3 s), then answered once
 * the informer ingests it, or 504 Too large resource version.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { json, startInCluster } from "../helpers/clusters.ts";
import { pod } from "../fake-apiserver/client.ts";

let cluster: Awaited<ReturnType<typeof startInCluster>>;
let path: string;
beforeAll(async () => {
  cluster = await startInCluster("get-rv", {}, 1);
  const first = ((await (await fetch(`${cluster.fake.url}/api/v1/pods?limit=1`)).json()) as any).items[0];
  path = `/clusters/${cluster.cluster}/api/v1/namespaces/${first.metadata.namespace}/pods/${first.metadata.name}`;
}, 120_000);
afterAll(() => cluster.remove());

const k8s = (p: string) => exports.default.fetch(new Request(`http://localhost/k8s${p}`));

describe("/k8s get at a resourceVersion", () => {
  it("refuses a resourceVersion that is not a number with the storage's 400", async () => {
    const ours = await k8s(`${path}?resourceVersion=abc`);
    expect(ours.status).toBe(400);
    expect(await json(ours)).toMatchObject({
      kind: "Status",
      reason: "BadRequest",
      code: 400,
      message: 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    });
  });

  it("answers resourceVersion=0 from the cache", async () => {
    const response = await k8s(`${path}?resourceVersion=0`);
    expect(response.status).toBe(200);
    expect((await json(response)).kind).toBe("Pod");
  });

  it("waits for a resourceVersion ahead of the cache, and answers once the informer has it", async () => {
    const target = String(BigInt(await cluster.fake.revision()) + 1n);
    const answer = k8s(`${path}?resourceVersion=${target}`);
    // Lets the get reach the informer first, so an answer at once (today's) would show.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [namespace, , name] = path.split("/").slice(-3);
    const current = ((await (await fetch(`${cluster.fake.url}/api/v1/namespaces/${namespace}/pods/${name}`)).json()) as any);
    current.metadata.labels = { ...current.metadata.labels, touched: "yes" };
    await cluster.fake.update("pods", current);
    const response = await answer;
    expect(response.status).toBe(200);
    const object = await json(response);
    expect(object.metadata.labels.touched).toBe("yes");
    expect(BigInt(object.metadata.resourceVersion)).toBeGreaterThanOrEqual(BigInt(target));
  });

  it("answers 504 Too large resource version when the cache has not reached it after the wait", async () => {
    const current = (await json(await k8s(`/clusters/${cluster.cluster}/api/v1/pods`))).metadata.resourceVersion;
    const ahead = String(BigInt(current) + 1_000n);
    const response = await k8s(`${path}?resourceVersion=${ahead}`);
    expect(response.status).toBe(504);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await json(response)).toMatchObject({
      reason: "Timeout",
      code: 504,
      message: `Timeout: Too large resource version: ${ahead}, current: ${current}`,
      details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }], retryAfterSeconds: 1 },
    });
  });
});
