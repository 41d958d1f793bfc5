/**
 * `/k8s` wire details tools notice (issue 30 item 6, review G10; facts §1.3, §4): aggregated
 * discovery carries an ETag from its content and answers `If-None-Match` with 304 (kubectl's disk
 * cache revalidates instead of refetching); `limit=-1` is no limit, as the server treats it; a
 * paged list of the whole resource says how many items remain (`remainingItemCount`), as the
 * fake API server does, and one with a selector does not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { json, startInCluster } from "../helpers/clusters.ts";

const AGGREGATED =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
let cluster: Awaited<ReturnType<typeof startInCluster>>;
beforeAll(async () => {
  cluster = await startInCluster("details", {}, 5);
}, 120_000);
afterAll(() => cluster.remove());

const k8s = (p: string, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster.cluster}${p}`, { headers }));

async function sha512Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-512", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("/k8s aggregated discovery ETag", () => {
  it.each(["/api", "/apis"])("tags %s with the hash of its content and answers a matching If-None-Match with 304", async (path) => {
    const first = await k8s(path, { accept: AGGREGATED });
    expect(first.status).toBe(200);
    const body = await first.text();
    const etag = first.headers.get("etag");
    expect(etag).toBe(`"${await sha512Hex(body)}"`);
    expect(first.headers.get("vary")).toBe("Accept");
    const again = await k8s(path, { accept: AGGREGATED, "if-none-match": etag! });
    expect(again.status).toBe(304);
    expect(again.headers.get("etag")).toBe(etag);
    expect(await again.text()).toBe("");
    const stale = await k8s(path, { accept: AGGREGATED, "if-none-match": '"other"' });
    expect(stale.status).toBe(200);
  });
});

describe("/k8s limit=-1", () => {
  it("lists everything, as the server treats a limit below 1", async () => {
    const response = await k8s("/api/v1/pods?limit=-1");
    expect(response.status).toBe(200);
    const list = await json(response);
    expect(list.items).toHaveLength(5);
    expect(list.metadata.continue).toBeUndefined();
    const theirs = (await (await fetch(`${cluster.fake.url}/api/v1/pods?limit=-1`)).json()) as any;
    expect(list.items.map((p: any) => p.metadata.name)).toEqual(theirs.items.map((p: any) => p.metadata.name));
  });
});

describe("/k8s remainingItemCount", () => {
  it("counts the items after each page of a list of the whole resource, as the API server does", async () => {
    const counts = async (base: string) => {
      const seen: Array<number | undefined> = [];
      let token: string | undefined;
      do {
        const page = (await (await fetch(`${base}/api/v1/pods?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ""}`)).json()) as any;
        seen.push(page.metadata.remainingItemCount);
        token = page.metadata.continue;
      } while (token);
      return seen;
    };
    const theirs = await counts(cluster.fake.url);
    expect(theirs).toEqual([3, 1, undefined]);
    const ours: Array<number | undefined> = [];
    let token: string | undefined;
    do {
      const page = await json(await k8s(`/api/v1/pods?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ""}`));
      ours.push(page.metadata.remainingItemCount);
      token = page.metadata.continue;
    } while (token);
    expect(ours).toEqual(theirs);
  });

  it("leaves it out with a selector, as the server does", async () => {
    const page = await json(await k8s("/api/v1/pods?limit=2&labelSelector=nosuch%21%3Dx"));
    expect(page.metadata.continue).toEqual(expect.any(String));
    expect(page.metadata.remainingItemCount).toBeUndefined();
  });
});
