/**
 * Metadata-only reads (issue 18, F10): get, list and watch with the Accept headers controller-runtime's
 * metadata caches (client-go's metadata client) and kube-rs `metadata_watcher` send, answered as the
 * fake API server answers the same requests (itself shaped as kube-apiserver's
 * `asPartialObjectMetadata(List)`): kind and apiVersion meta.k8s.io/v1 and only the metadata.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { pod } from "../fake-apiserver/builders.ts";
import { startInCluster } from "../helpers/clusters.ts";

const OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
/** client-go's metadata client: protobuf first, then JSON, then plain JSON. */
const CLIENT_GO_LIST = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${LIST},application/json`;

let cluster: Awaited<ReturnType<typeof startInCluster>>;
beforeAll(async () => {
  cluster = await startInCluster("meta", {}, 3);
}, 120_000);

const ours = (path: string, accept: string) =>
  exports.default.fetch(new Request(`http://localhost/k8s/clusters/${cluster.cluster}${path}`, { headers: { accept } }));
const theirs = (path: string, accept: string) => fetch(`${cluster.fake.url}${path}`, { headers: { accept } });

/** managedFields are dropped by our cache (by default), so compared without them. */
function withoutManagedFields(answer: any): any {
  const strip = (o: any) => {
    delete o.metadata?.managedFields;
    return o;
  };
  if (Array.isArray(answer.items)) answer.items = answer.items.map(strip);
  else strip(answer);
  return answer;
}

async function firstLine(response: Response): Promise<any> {
  const reader = response.body!.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  await reader.cancel();
  return JSON.parse(text.slice(0, text.indexOf("\n")));
}

describe("/k8s metadata-only", () => {
  it("lists PartialObjectMetadataList as the API server does, for kube-rs's and client-go's Accept", async () => {
    for (const accept of [LIST, CLIENT_GO_LIST]) {
      const response = await ours("/api/v1/pods", accept);
      expect(response.status).toBe(200);
      const list = withoutManagedFields(await response.json());
      const expected = withoutManagedFields(await (await theirs("/api/v1/pods", accept)).json());
      expect(list.kind).toBe("PartialObjectMetadataList");
      expect(list.apiVersion).toBe("meta.k8s.io/v1");
      expect(list.items).toEqual(expected.items);
      expect(list.items[0]).toEqual({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: expect.objectContaining({ name: expect.any(String) }) });
      expect(Object.keys(list.items[0])).toEqual(["kind", "apiVersion", "metadata"]);
    }
  });

  it("gets one object as PartialObjectMetadata, equal to the API server's", async () => {
    const [name, namespace] = await (async () => {
      const list = (await (await theirs("/api/v1/pods", "application/json")).json()) as any;
      return [list.items[0].metadata.name, list.items[0].metadata.namespace];
    })();
    const path = `/api/v1/namespaces/${namespace}/pods/${name}`;
    const response = await ours(path, OBJECT);
    expect(response.status).toBe(200);
    expect(withoutManagedFields(await response.json())).toEqual(withoutManagedFields(await (await theirs(path, OBJECT)).json()));
  });

  it("watches with each event's object as PartialObjectMetadata", async () => {
    const list = (await (await ours("/api/v1/pods", LIST)).json()) as any;
    const watch = await ours(`/api/v1/pods?watch=true&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=10`, OBJECT);
    expect(watch.status).toBe(200);
    const created = await cluster.fake.create("pods", pod({ name: "meta-new", namespace: "default" }));
    const event = await firstLine(watch);
    expect(event.type).toBe("ADDED");
    expect(event.object).toEqual({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: expect.objectContaining({ name: "meta-new" }) });
    expect(event.object.metadata.resourceVersion).toBe((created as any).metadata.resourceVersion);
  });

  it("refuses the list form for one object and the object form for a list with 406, as the API server does", async () => {
    for (const [path, accept] of [
      ["/api/v1/pods", OBJECT],
      ["/api/v1/namespaces/default/pods/x", LIST],
    ] as const) {
      expect((await ours(path, accept)).status, `${path} ${accept}`).toBe(406);
      expect((await theirs(path, accept)).status, `fake: ${path} ${accept}`).toBe(406);
    }
  });
});
