/**
 * InformerObject keeps no storage until it is configured (#7.17): a query or status call on an
 * object reached through an unknown name answers NotFound and creates no tables, and deleting an
 * informer leaves none behind.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parseInformerSpec } from "../../src/config/informer-spec.ts";

/** Tables this object created (workerd's own `_cf_*` bookkeeping aside). */
const tables = (name: string) =>
  runInDurableObject(env.INFORMER.getByName(name), (_, state) =>
    state.storage.sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'")
      .toArray()
      .map((row) => row.name),
  );

describe("InformerObject storage", () => {
  it("answers NotFound to every read while unconfigured and creates no tables", async () => {
    const name = `unconfigured-${crypto.randomUUID().slice(0, 8)}`;
    const stub = env.INFORMER.getByName(name);
    const answers = [
      await stub.status(),
      await stub.listObjects({}),
      await stub.getObject("default/x"),
      await stub.indexValues("namespace"),
      await stub.byIndex("namespace", "default", {}),
      await stub.subscriberIds(),
      await stub.readLog(0, 10),
    ];
    expect(answers.map((a) => (a.ok ? "ok" : a.error.code))).toEqual(new Array(answers.length).fill("NotFound"));
    expect(await stub.removeSubscriber("sub_x")).toBe(false);
    expect(await stub.ensureRunning()).toBe(false);
    expect(await tables(name)).toEqual([]);
  });

  it("creates its tables on configure and drops them all on destroy", async () => {
    const name = `configured-${crypto.randomUUID().slice(0, 8)}`;
    const stub = env.INFORMER.getByName(name);
    expect((await stub.configure(parseInformerSpec({ resource: "pods" }, name), { server: "http://127.0.0.1:1" })).ok).toBe(true);
    expect(await tables(name)).toContain("informer_spec");
    expect(await stub.destroy()).toEqual([]);
    expect(await tables(name)).toEqual([]);
    expect((await stub.status()).ok).toBe(false);
  });
});
