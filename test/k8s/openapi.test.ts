/**
 * The `/k8s` OpenAPI answers (src/k8s/openapi.ts, review N6) with a fake upstream: only the
 * documents of group versions the cluster serves are asked for; an upstream 404 is kept briefly;
 * another failure is a 503 Status not kept; the Cache API, where it keeps anything, answers a
 * second isolate without asking upstream.
 */
import { describe, expect, it } from "vitest";
import type { UpstreamOpenApi } from "../../src/clusters/upstream-openapi.ts";
import { describeResource, type ResourceInfo } from "../../src/k8s/catalog.ts";
import { serveOpenApi } from "../../src/k8s/openapi.ts";
import { OpenApiCache } from "../../src/k8s/openapi-cache.ts";
import { StatusError } from "../../src/k8s/status.ts";

const served: ResourceInfo[] = [describeResource("pods", "v1")!, describeResource("deployments.apps", "apps/v1")!];

function upstream(answer: (path: string) => UpstreamOpenApi) {
  const asked: string[] = [];
  return {
    asked,
    load: async (path: string) => {
      asked.push(path);
      return answer(path);
    },
  };
}

const document = (text: string): UpstreamOpenApi => ({ ok: true, contentType: "application/json", body: new Response(text).body! });

function serve(path: string, load: ReturnType<typeof upstream>["load"], documents = new OpenApiCache(), cache?: Cache) {
  return serveOpenApi({ cluster: "c", prefix: "/k8s/clusters/c", path, accept: "application/json", served, load, documents, cache });
}

async function statusOf(answer: Promise<Response>): Promise<StatusError> {
  const error = await answer.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StatusError);
  return error as StatusError;
}

describe("serveOpenApi", () => {
  it("answers a group version the cluster does not serve with 404, asking upstream nothing", async () => {
    const fake = upstream(() => document("{}"));
    for (const path of ["/openapi/v3/apis/batch/v1", "/openapi/v3/apis/x1.example/v1", "/openapi/v3/apis/apps/v2"]) {
      expect((await statusOf(serve(path, fake.load))).status.code, path).toBe(404);
    }
    expect(fake.asked).toEqual([]);
    expect((await serve("/openapi/v3/apis/apps/v1", fake.load)).status).toBe(200);
    expect((await serve("/openapi/v3/api/v1", fake.load)).status).toBe(200);
    expect(fake.asked).toEqual(["/openapi/v3/apis/apps/v1", "/openapi/v3/api/v1"]);
  });

  it("keeps the upstream's 404 for a served group version, saying it answered 404", async () => {
    const fake = upstream(() => ({ ok: false, status: 404, message: "GET /openapi/v3/apis/apps/v1 answered 404" }));
    const documents = new OpenApiCache();
    for (let i = 0; i < 3; i++) {
      const status = await statusOf(serve("/openapi/v3/apis/apps/v1", fake.load, documents));
      expect(status.status.code).toBe(404);
      expect(status.message).toMatch(/could not be read from cluster 'c''s API server: .*answered 404/);
    }
    expect(fake.asked).toHaveLength(1);
  });

  it("answers an upstream that cannot be read with a 503 Status, and asks again next time", async () => {
    const fake = upstream(() => ({ ok: false, status: 502, message: "connection refused" }));
    const documents = new OpenApiCache();
    expect((await statusOf(serve("/openapi/v2", fake.load, documents))).status.code).toBe(503);
    expect((await statusOf(serve("/openapi/v2", fake.load, documents))).status.code).toBe(503);
    expect(fake.asked).toHaveLength(2);
  });

  it("keeps what it reads in the Cache API too, where another isolate finds it", async () => {
    const stored = new Map<string, Response>();
    const cache = {
      match: async (key: string) => stored.get(key)?.clone(),
      put: async (key: string, response: Response) => void stored.set(key, response),
    } as unknown as Cache;
    const fake = upstream(() => document('{"swagger":"2.0"}'));
    expect(await (await serve("/openapi/v2", fake.load, new OpenApiCache(), cache)).json()).toEqual({ swagger: "2.0" });
    expect(await (await serve("/openapi/v2", fake.load, new OpenApiCache(), cache)).json()).toEqual({ swagger: "2.0" });
    expect(fake.asked).toEqual(["/openapi/v2"]);
    expect(stored.get([...stored.keys()][0]!)?.headers.get("cache-control")).toBe("max-age=600");
  });
});
