/**
 * KubeClient over a scripted fetch: the requests it makes, and the bounded-memory contract of
 * DESIGN invariant 6 — list items reach the sink in small batches while the response is still
 * arriving, so an unpaginated list of a whole resource is never held at once.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { KubeClient } from "../../src/kube/client.ts";
import { KubeApiError, isExpired, isTooLargeResourceVersion } from "../../src/kube/errors.ts";
import { resolveResource } from "../../src/kube/resources.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { WatchDecodeError } from "../../src/kube/watch-decoder.ts";
import { ReceiverEndpoint } from "../receiver/client.ts";
import { newCluster } from "../helpers/informer.ts";

/** A response body the test feeds by hand, and the URLs and headers requested. */
function scriptedFetch(status = 200, contentType = "application/json") {
  // A byte stream, as fetch bodies are, so the client reads it with a BYOB reader.
  let controller!: ReadableByteStreamController;
  const body = new ReadableStream({ type: "bytes", start: (c) => void (controller = c) });
  const requests: { url: URL; headers: Headers }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push({ url: new URL(String(input)), headers: new Headers(init?.headers) });
    return new Response(body, { status, headers: { "content-type": contentType } });
  }) as typeof globalThis.fetch;
  const encoder = new TextEncoder();
  return {
    fetch,
    requests,
    write: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  };
}

const pods = resolveResource("pods");

describe("KubeClient", () => {
  it("hands list items over in batches while the response is still arriving", async () => {
    const server = scriptedFetch();
    const client = new KubeClient({ apiUrl: "http://k8s.test/prefix/", resource: pods, fetch: server.fetch, itemBatchSize: 10 });
    const batches: KubeObject[][] = [];
    const listing = client.listPage({ resourceVersion: "0" }, (items) => batches.push(items));
    server.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[');
    const item = (i: number) => JSON.stringify({ metadata: { name: `p${i}`, namespace: "ns" } });
    server.write(Array.from({ length: 25 }, (_, i) => item(i)).join(","));
    await new Promise((resolve) => setTimeout(resolve, 10));
    // two full batches are out before the list has ended
    expect(batches.map((b) => b.length)).toEqual([10, 10]);
    server.write(`,${item(25)}]}`);
    server.end();
    const page = await listing;
    expect(page).toEqual({ resourceVersion: "42", items: 26 });
    expect(batches.map((b) => b.length)).toEqual([10, 10, 6]);
    // list items arrive without TypeMeta; the client fills it from the list
    expect(batches[0]![0]).toMatchObject({ kind: "Pod", apiVersion: "v1" });
    expect(server.requests[0]!.url.pathname).toBe("/prefix/api/v1/pods");
  });

  it("parses a batch's items only when it hands the batch over, without managedFields when asked (issue 28: relist)", async () => {
    const server = scriptedFetch();
    const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, itemBatchSize: 10, dropManagedFields: true });
    const batches: KubeObject[][] = [];
    const listing = client.listPage({}, (items) => batches.push(items));
    const item = (i: number) => JSON.stringify({ metadata: { name: `p${i}`, namespace: "ns", managedFields: [{ manager: "m" }] }, spec: {} });
    const parse = vi.spyOn(JSON, "parse");
    try {
      server.write(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[${Array.from({ length: 9 }, (_, i) => item(i)).join(",")}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
      // A filling batch holds texts: no item is parsed before its batch is handed over.
      const itemParses = () => parse.mock.calls.filter(([text]) => String(text).startsWith('{"metadata"')).length;
      expect(itemParses()).toBe(0);
      server.write(`,${item(9)},${item(10)}]}`);
      server.end();
      await listing;
      expect(itemParses()).toBe(11);
    } finally {
      parse.mockRestore();
    }
    expect(batches.map((b) => b.length)).toEqual([10, 1]);
    expect(batches[1]![0]).toEqual({ kind: "Pod", apiVersion: "v1", metadata: { name: "p10", namespace: "ns" }, spec: {} });
  });

  it("reports a malformed item of a batch as the list's failure", async () => {
    const server = scriptedFetch();
    const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, itemBatchSize: 10 });
    const batches: KubeObject[][] = [];
    const listing = client.listPage({}, (items) => batches.push(items)).catch((e: unknown) => e);
    server.write('{"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":tru}}]}');
    server.end();
    const error = await listing;
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).message).toMatch(/malformed JSON in the list response/);
    expect(batches).toEqual([]);
  });

  it("sends selectors, the namespace, the token and extra headers on lists and watches alike", async () => {
    const server = scriptedFetch();
    const client = new KubeClient({
      apiUrl: "http://k8s.test",
      token: "secret-token",
      headers: { "cf-access-client-id": "id" },
      resource: resolveResource("deployments.apps"),
      namespace: "team-a",
      labelSelector: "app=web",
      fieldSelector: "metadata.name!=x",
      fetch: server.fetch,
    });
    const stream = await client.watch({ resourceVersion: "10", timeoutSeconds: 321 });
    stream.cancel();
    const { url, headers } = server.requests[0]!;
    expect(url.pathname).toBe("/apis/apps/v1/namespaces/team-a/deployments");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      labelSelector: "app=web",
      fieldSelector: "metadata.name!=x",
      watch: "true",
      resourceVersion: "10",
      allowWatchBookmarks: "true",
      timeoutSeconds: "321",
    });
    expect(headers.get("authorization")).toBe("Bearer secret-token");
    expect(headers.get("cf-access-client-id")).toBe("id");
  });

  it("yields watch events per chunk and reports a stream cut mid-event", async () => {
    const server = scriptedFetch();
    const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch });
    const stream = await client.watch({ resourceVersion: "1", timeoutSeconds: 300 });
    server.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MOD');
    expect((await stream.next())!.map((e) => e.type)).toEqual(["ADDED"]);
    server.end();
    await expect(stream.next()).rejects.toThrow(/middle of an event/);
  });

  it("hands a lone event that follows a burst over at once, without waiting for more bytes (issue 9)", async () => {
    // A faster transport may take more bytes per read (workerd's readAtLeast), but never by holding
    // bytes that already arrived until more come: on a quiet watch that wait has no bound.
    const server = scriptedFetch();
    const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch });
    const stream = await client.watch({ resourceVersion: "1", timeoutSeconds: 300 });
    const event = (i: number) =>
      `${JSON.stringify({ type: "MODIFIED", object: { metadata: { name: `p${i}`, resourceVersion: String(i + 2) }, pad: "x".repeat(3000) } })}\n`;
    // a burst of 40 events (~120 KB, more than a read buffer), one write per event as kube-apiserver frames them
    for (let i = 0; i < 40; i++) server.write(event(i));
    const burst: string[] = [];
    while (burst.length < 40) burst.push(...(await stream.next())!.map((e) => e.object.metadata!.name!));
    expect(burst).toEqual(Array.from({ length: 40 }, (_, i) => `p${i}`));
    // the stream goes quiet, then one small event arrives and nothing after it
    await new Promise((resolve) => setTimeout(resolve, 30));
    server.write(`${JSON.stringify({ type: "DELETED", object: { metadata: { name: "last", resourceVersion: "99" } } })}\n`);
    // Nothing more is written and the body stays open: a reader that held the event for more bytes
    // would hold it for good, which the generous 5 s only bounds (how soon it comes is not asserted).
    const lone = await Promise.race([stream.next(), new Promise<"held">((resolve) => setTimeout(() => resolve("held"), 5_000))]);
    expect(lone === "held" ? lone : lone!.map((e) => e.object.metadata!.name)).toEqual(["last"]);
    stream.cancel();
  });

  it.each([
    [410, { kind: "Status", code: 410, reason: "Expired", message: "too old" }, isExpired],
    [
      504,
      {
        kind: "Status",
        code: 504,
        reason: "Timeout",
        message: "Timeout: Too large resource version: 9, current: 3",
        details: { causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }] },
      },
      isTooLargeResourceVersion,
    ],
    [410, "<html>gone</html>", isExpired], // not a Status: the code alone decides
  ])("turns an HTTP %i answer into a KubeApiError the reflector recognises", async (status, body, predicate) => {
    const server = scriptedFetch(status);
    const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch });
    server.write(typeof body === "string" ? body : JSON.stringify(body));
    server.end();
    const error = await client.listPage({}, () => {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeApiError);
    expect(predicate(error)).toBe(true);
  });

  it("reports a refused connection as a KubeApiError with code 0", async () => {
    const client = new KubeClient({
      apiUrl: "http://k8s.test",
      resource: pods,
      fetch: (async () => {
        throw new TypeError("connection refused");
      }) as typeof fetch,
    });
    const error = await client.listPage({}, () => {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 0, reason: "ConnectionFailed" });
  });

  it("says the connection was refused when nothing listens at a loopback KUBE_API_URL (issue 10)", async () => {
    // workerd reports a refused connection as "Network connection lost."; on loopback we can tell.
    const client = new KubeClient({ apiUrl: "http://127.0.0.1:1", resource: pods });
    for (const request of [client.listPage({}, () => {}), client.watch({ resourceVersion: "1", timeoutSeconds: 5 })]) {
      const error = await (request as Promise<unknown>).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 0, reason: "ConnectionFailed" });
      expect((error as Error).message).toBe(
        "could not reach the API server: connection refused: nothing accepts connections at 127.0.0.1:1 (is the server running?)",
      );
    }
  });

  describe("deadlines (issue 7 item 7): a half-open connection cannot hold the alarm", () => {
    /** A fetch whose response head never comes; records the signal it was given. */
    function silentServer() {
      const signals: (AbortSignal | undefined)[] = [];
      const fetch = ((_input: RequestInfo | URL, init?: RequestInit) => {
        signals.push(init?.signal ?? undefined);
        return new Promise<Response>(() => {});
      }) as typeof globalThis.fetch;
      return { fetch, signals };
    }

    it("gives up on a list whose response head does not arrive, and aborts the request", async () => {
      const server = silentServer();
      const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, headTimeoutMs: 50 });
      const error = await client.listPage({ resourceVersion: "0" }, () => {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error).toMatchObject({ code: 0, message: expect.stringMatching(/no response .* within 0.05 s/) });
      expect(server.signals[0]?.aborted).toBe(true);
    });

    it("gives up on a watch whose response head does not arrive", async () => {
      const server = silentServer();
      const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, headTimeoutMs: 50 });
      await expect(client.watch({ resourceVersion: "5", timeoutSeconds: 300 })).rejects.toMatchObject({ code: 0 });
    });

    it("gives up on a list body that stops arriving half-way", async () => {
      const server = scriptedFetch();
      const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, bodyIdleTimeoutMs: 50 });
      const listing = client.listPage({ resourceVersion: "0" }, () => {});
      server.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[');
      await expect(listing).rejects.toMatchObject({ code: 0, message: expect.stringMatching(/stopped sending/) });
    });

    it("gives up on an error body that trickles, within the deadline the head had (review A9a)", async () => {
      const server = scriptedFetch(503);
      const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, headTimeoutMs: 50 });
      const listing = client.listPage({ resourceVersion: "0" }, () => {});
      server.write('{"kind":"Status","code":503,"message":"'); // and never more: a body that would hold the slice
      const error = await listing.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error).toMatchObject({ code: 503, message: "503 error from the API server, with an error body not complete within 0.05 s (not read further)" });
    });

    it("keeps a slow list that goes on sending", async () => {
      const server = scriptedFetch();
      const client = new KubeClient({ apiUrl: "http://k8s.test", resource: pods, fetch: server.fetch, bodyIdleTimeoutMs: 60 });
      const listing = client.listPage({ resourceVersion: "0" }, () => {});
      server.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42"},"items":[');
      for (let i = 0; i < 5; i++) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        server.write(`${i ? "," : ""}{"metadata":{"name":"p${i}"}}`);
      }
      server.write("]}");
      server.end();
      await expect(listing).resolves.toMatchObject({ items: 5 });
    });
  });

  describe("against the fake API server: no redirects, bounded bodies (issue 17, reviews A4, A9, F22)", () => {
    const clientOf = (apiUrl: string, fetcher?: typeof fetch) =>
      new KubeClient({
        apiUrl,
        resource: pods,
        token: "secret-token",
        headers: { "cf-access-client-id": "id", "cf-access-client-secret": "s" },
        ...(fetcher === undefined ? {} : { fetch: fetcher }),
      });
    /** A fetch whose response bodies count the bytes the client pulled from them. */
    const countingFetch = () => {
      const counted = { bytes: 0 };
      const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
        const response = await fetch(input, init);
        const counter = new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            counted.bytes += chunk.length;
            controller.enqueue(chunk);
          },
        });
        return new Response(response.body!.pipeThrough(counter), response);
      }) as typeof fetch;
      return { fetcher, counted };
    };

    it.each(["list", "watch"] as const)("does not follow a redirect of a %s: an error names the target host, which receives nothing", async (on) => {
      const fake = await newCluster();
      const elsewhere = await ReceiverEndpoint.create(env.RECEIVER_URL);
      await fake.fault({ kind: "redirect", on, code: 302, location: elsewhere.url });
      const client = clientOf(fake.url);
      const request = on === "list" ? client.listPage({}, () => {}) : client.watch({ resourceVersion: "1", timeoutSeconds: 5 });
      const error = await (request as Promise<unknown>).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error).toMatchObject({
        code: 302,
        reason: "Redirect",
        message: `the API server answered 302, a redirect to ${new URL(elsewhere.url).host}: not followed (credentials never go to another origin); point the cluster's URL at the API server itself`,
      });
      expect(await elsewhere.requests()).toEqual([]);
    });

    it("asks fetch not to follow redirects", async () => {
      const server = scriptedFetch();
      const seen: RequestInit[] = [];
      const client = new KubeClient({
        apiUrl: "https://k8s.test",
        resource: pods,
        fetch: ((input: RequestInfo | URL, init?: RequestInit) => (seen.push(init!), server.fetch(input, init))) as typeof fetch,
      });
      (await client.watch({ resourceVersion: "1", timeoutSeconds: 5 })).cancel();
      expect(seen[0]!.redirect).toBe("manual");
    });

    it("refuses a watch line over 3 MiB without reading the endless rest", async () => {
      const fake = await newCluster();
      await fake.fault({ kind: "oversizedBody", on: "watch", bytes: 1024 * 1024 * 1024 });
      const { fetcher, counted } = countingFetch();
      const stream = await clientOf(fake.url, fetcher).watch({ resourceVersion: "1", timeoutSeconds: 60 });
      const error = await (async () => {
        for (;;) await stream.next();
      })().catch((e: unknown) => e);
      stream.cancel();
      expect(error).toEqual(new WatchDecodeError("a watch event line exceeds 3 MiB: refused, not buffered (no Kubernetes object is that large)"));
      expect(counted.bytes, "bytes read of the 1 GiB line").toBeLessThan(8 * 1024 * 1024);
    });

    it("refuses a list item over 3 MiB without reading the endless rest", async () => {
      const fake = await newCluster();
      await fake.fault({ kind: "oversizedBody", on: "list", bytes: 1024 * 1024 * 1024 });
      const { fetcher, counted } = countingFetch();
      const error = await clientOf(fake.url, fetcher).listPage({}, () => {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 0, message: "a list item exceeds 3 MiB: refused, not buffered (no Kubernetes object is that large)" });
      expect(counted.bytes, "bytes read of the 1 GiB item").toBeLessThan(8 * 1024 * 1024);
    });

    it("refuses an error body over 64 KiB, keeping the HTTP status", async () => {
      const fake = await newCluster();
      await fake.fault({ kind: "oversizedBody", on: "list", code: 500, bytes: 1024 * 1024 * 1024 });
      const error = await clientOf(fake.url).listPage({}, () => {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KubeApiError);
      expect(error).toMatchObject({
        code: 500,
        message: "500 Internal Server Error from the API server, with an error body over 64 KiB (refused, not read)",
      });
    });

    it("still reads an error Status under the bound", async () => {
      const fake = await newCluster();
      await fake.fault({ kind: "oversizedBody", on: "list", code: 503, bytes: 60 * 1024 });
      const error = await clientOf(fake.url).listPage({}, () => {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 503, message: expect.stringMatching(/^x{61440}$/) });
    });
  });
});
