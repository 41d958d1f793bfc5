/**
 * Structured logs (src/log.ts): one JSON line per notable event, filtered by level, with
 * informer/subscription ids and never a secret, a token or an object body. The scenario runs real
 * objects and captures what they write to the console.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { unwrap } from "../src/errors.ts";
import { log, MAX_ERROR_CHARS, setLogLevel } from "../src/log.ts";
import { FACTORY_NAME } from "../src/objects/informer-factory.ts";
import { newCluster, startInformer, status, waitFor, waitSynced } from "./helpers/informer.ts";
import { startInCluster } from "./helpers/clusters.ts";
import { subscribe } from "./helpers/webhooks.ts";
import { ReceiverEndpoint } from "./receiver/client.ts";

type Line = Record<string, unknown> & { level: string; msg: string };

function capture(): { lines: () => Line[]; raw: () => string[]; methods: () => string[] } {
  const raw: string[] = [];
  const methods: string[] = [];
  for (const method of ["debug", "info", "warn", "error", "log"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      raw.push(args.map(String).join(" "));
      methods.push(method);
    });
  }
  return { raw: () => raw, methods: () => methods, lines: () => raw.map((text) => JSON.parse(text) as Line) };
}

afterEach(() => {
  vi.restoreAllMocks();
  setLogLevel("info");
});

describe("log", () => {
  it("writes one JSON line through the console method of its level, dropping levels below the threshold", () => {
    const out = capture();
    setLogLevel("info");
    log("debug", "hidden", { informer: "pods" });
    log("info", "relist", { informer: "pods", cause: "expired", skipped: undefined });
    log("error", "long", { error: "x".repeat(MAX_ERROR_CHARS + 50) });
    expect(out.methods()).toEqual(["info", "error"]);
    const [relist, long] = out.lines();
    expect(relist).toEqual({ level: "info", msg: "relist", informer: "pods", cause: "expired" });
    expect((long!.error as string).length).toBe(MAX_ERROR_CHARS + 1);
    setLogLevel("debug");
    log("debug", "shown");
    expect(out.lines().at(-1)).toEqual({ level: "debug", msg: "shown" });
  });

  it("tells of a relist with its cause, failed deliveries and dead letters, and a config error, with ids and no secret or body", async () => {
    const out = capture();
    setLogLevel("debug");
    const cluster = await newCluster();
    await cluster.seed({ namespaces: 1, podsPerNamespace: 3 });
    const { name, stub } = await startInformer(cluster);
    await waitSynced(stub);
    await cluster.fault({ kind: "errorEvent", code: 410, resource: "pods" });
    await waitFor("the 410 relist", async () => (await status(stub)).relists === 1);
    const broken = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 500, body: "receiver says no" } });
    const failing = await subscribe(name, broken, { retryBudgetSeconds: 1, maxBatchSize: 10 });
    await waitFor("dead letters", async () => unwrap(await failing.stub().status()).deadLetters === 3, 30_000);
    const refused = await env.FACTORY.getByName(FACTORY_NAME).syncDeclared(JSON.stringify([{ name: "Not A Name!", resource: "pods" }]));
    expect(refused.errors.length).toBeGreaterThan(0);

    const lines = out.lines(); // every line is JSON (JSON.parse throws otherwise)
    expect(lines.every((line) => ["debug", "info", "warn", "error"].includes(line.level) && typeof line.msg === "string")).toBe(true);
    // The default cluster is named too (issue 12): every informer's and subscription's line says which.
    const informer = { cluster: "default", informer: name };
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", msg: "relist", ...informer, cause: "expired" }));
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "watch dropped", ...informer, reason: "Expired" }));
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "delivery failed", ...informer, subscription: failing.id, status: 500, attempt: 1, events: 3 }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "dead-lettered", ...informer, subscription: failing.id, events: 3 }));
    expect(lines).toContainEqual(expect.objectContaining({ level: "error", msg: "INFORMERS entry refused", cause: "config" }));
    // Retries after the first failure of a streak stay below info.
    expect(lines.filter((l) => l.msg === "delivery failed" && l.subscription === failing.id)).toHaveLength(1);

    const text = out.raw().join("\n");
    for (const secret of [failing.secret, failing.secret.slice("whsec_".length), "test-admin-token-0123456789abcdef", broken.url]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/"kind"\s*:\s*"Pod"|apiVersion|managedFields/); // no object body
  });

  it("names another cluster in its informer's and subscription's lines, and never writes the cluster's token", async () => {
    const token = `tok-${crypto.randomUUID()}`;
    const out = capture();
    setLogLevel("debug");
    const { fake, cluster, stub } = await startInCluster("logged", { token });
    const factory = env.FACTORY.getByName(FACTORY_NAME);
    await fake.fault({ kind: "errorEvent", code: 410, resource: "pods" });
    await waitFor("the 410 relist", async () => (await status(stub)).relists === 1);
    const broken = await ReceiverEndpoint.create(env.RECEIVER_URL, { default: { status: 500 } });
    const failing = await subscribe("pods", broken, { retryBudgetSeconds: 1, maxBatchSize: 10 }, cluster);
    await waitFor("dead letters", async () => unwrap(await failing.stub().status()).deadLetters === 2, 30_000);
    // A new token reaches the informer (the factory reconnects it): still never written.
    unwrap(await factory.putCluster(cluster, { server: fake.url, token: `${token}-2` }));
    unwrap(await factory.removeCluster(cluster, true));

    const lines = out.lines();
    const informer = { cluster, informer: "pods" };
    expect(lines).toContainEqual(expect.objectContaining({ level: "info", msg: "relist", ...informer, cause: "expired" }));
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "watch dropped", ...informer }));
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "delivery failed", ...informer, subscription: failing.id }));
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", msg: "dead-lettered", ...informer, subscription: failing.id }));
    // Every line about one of this test's objects names its cluster.
    const ours = lines.filter((line) => line.subscription === failing.id || line.cluster === cluster);
    expect(ours.length).toBeGreaterThanOrEqual(4);
    expect(ours.filter((line) => line.cluster !== cluster)).toEqual([]);
    expect(out.raw().join("\n")).not.toContain(token);
  });
});
