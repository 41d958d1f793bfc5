/**
 * k8s/list-consistency.ts: which resourceVersion a `/k8s` list is served at, and the answer when the
 * cache is not there — without an informer: reads and waits are faked, so a wait costs no time.
 */
import { describe, expect, it } from "vitest";
import type { Consistency } from "../../src/k8s/consistent-reads.ts";
import { type Freshness, getResourceVersion, listResourceVersion, readAt } from "../../src/k8s/list-consistency.ts";
import type { ListOptionsQuery } from "../../src/k8s/list-options.ts";
import { StatusError } from "../../src/k8s/status.ts";

/** A cache at `rvs[0]`, then at each later RV once it is waited for (a `reach` answers the next). */
function cache(...rvs: string[]) {
  let at = 0;
  let consistency: Consistency | undefined;
  const calls: string[] = [];
  return {
    calls,
    reads: {
      read: async () => {
        calls.push(`read ${rvs[at]}`);
        return { resourceVersion: rvs[at]! };
      },
      reach: async (rv: string, waitMs: number): Promise<Freshness> => {
        calls.push(`reach ${rv} within ${waitMs}`);
        at = Math.min(at + 1, rvs.length - 1);
        return { current: rvs[at]! };
      },
      consistent: async (): Promise<Consistency> => {
        calls.push("consistent");
        return consistency ?? { current: rvs[at]! };
      },
    },
    /** What the next consistency check answers. */
    consistentAs(value: Consistency) {
      consistency = value;
    },
  };
}

async function statusOf(promise: Promise<unknown>) {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!(error instanceof StatusError)) throw new Error(`expected a StatusError, got ${String(error)}`);
  return error.status;
}

const list = (o: Partial<ListOptionsQuery>): ListOptionsQuery => ({ watch: false, ...o });

describe("listResourceVersion", () => {
  it.each([
    ["unset: the most recent (consistent)", {}, 5, { match: "latest" }, 5],
    ["unset with a continue: the token's", { continue: "t" }, 5, { match: "any" }, 5],
    ["0: the watch cache's whole list", { resourceVersion: "0" }, 5, { match: "any" }, undefined],
    ["0 with a continue: etcd's page, limit kept", { resourceVersion: "0", continue: "t" }, 5, { match: "any" }, 5],
    ["N without limit", { resourceVersion: "7" }, undefined, { match: "notOlderThan", rv: "7" }, undefined],
    ["N NotOlderThan with limit", { resourceVersion: "7", resourceVersionMatch: "NotOlderThan" }, 5, { match: "notOlderThan", rv: "7" }, 5],
    ["N with limit: the legacy exact list", { resourceVersion: "7" }, 5, { match: "exact", rv: "7" }, 5],
    ["N Exact", { resourceVersion: "7", resourceVersionMatch: "Exact" }, undefined, { match: "exact", rv: "7" }, undefined],
    ["limit 0: no limit", {}, 0, { match: "latest" }, undefined],
  ] as const)("%s", (_name, options, limit, at, pageLimit) => {
    expect(listResourceVersion(list(options), limit)).toEqual({ at, limit: pageLimit });
  });

  it("refuses a continue with a resourceVersion other than 0, as etcd3 does", () => {
    expect(() => listResourceVersion(list({ resourceVersion: "7", continue: "t" }), 5)).toThrow("specifying resource version is not allowed when using continue");
  });
});

describe("readAt", () => {
  it("reads the cache as it is for any resourceVersion, and for one it is at or past (NotOlderThan)", async () => {
    for (const at of [{ match: "any" }, { match: "notOlderThan", rv: "10" }, { match: "notOlderThan", rv: "12" }] as const) {
      const c = cache("12");
      expect(await readAt(at, c.reads)).toEqual({ resourceVersion: "12" });
      expect(c.calls).toEqual(["read 12"]);
    }
  });

  it("waits up to 3 s for a NotOlderThan resourceVersion ahead of the cache, then reads again", async () => {
    const c = cache("10", "15");
    expect(await readAt({ match: "notOlderThan", rv: "14" }, c.reads)).toEqual({ resourceVersion: "15" });
    expect(c.calls).toEqual(["read 10", "reach 14 within 3000", "read 15"]);
  });

  it("answers 504 Too large resource version, naming the cache's RV after the wait, when the wait ends behind", async () => {
    const c = cache("10", "12");
    expect(await statusOf(readAt({ match: "notOlderThan", rv: "14" }, c.reads, 50))).toMatchObject({
      code: 504,
      reason: "Timeout",
      message: "Timeout: Too large resource version: 14, current: 12",
      details: { retryAfterSeconds: 1 },
    });
    expect(c.calls).toEqual(["read 10", "reach 14 within 50"]);
  });

  it("answers 410 at once for a resourceVersion of the API server the cluster moved away from (F16)", async () => {
    for (const match of ["notOlderThan", "exact"] as const) {
      const calls: string[] = [];
      const reads = {
        read: async () => ({ resourceVersion: "100" }),
        reach: async (rv: string): Promise<Freshness> => {
          calls.push(rv);
          return "earlierServer";
        },
        consistent: async (): Promise<Consistency> => ({ current: "100" }),
      };
      expect(await statusOf(readAt({ match, rv: "5000" }, reads))).toMatchObject({ code: 410, message: "The resourceVersion for the provided list is too old." });
      expect(calls).toEqual(["5000"]);
    }
  });

  it("serves an Exact list only at the cache's RV: older 410, ahead 504 without waiting", async () => {
    expect(await readAt({ match: "exact", rv: "12" }, cache("12").reads)).toEqual({ resourceVersion: "12" });
    expect(await statusOf(readAt({ match: "exact", rv: "11" }, cache("12").reads))).toMatchObject({
      code: 410,
      reason: "Expired",
      message: "The resourceVersion for the provided list is too old.",
    });
    const ahead = cache("12");
    expect(await statusOf(readAt({ match: "exact", rv: "14" }, ahead.reads))).toMatchObject({ code: 504 });
    expect(ahead.calls).toEqual(["read 12", "reach 14 within 0"]);
  });
});

describe("consistent reads (resourceVersion unset)", () => {
  it("asks for consistency before reading, and answers 504 naming the upstream's RV when the cache stayed behind", async () => {
    const fresh = cache("12");
    expect(await readAt({ match: "latest" }, fresh.reads)).toEqual({ resourceVersion: "12" });
    expect(fresh.calls).toEqual(["consistent", "read 12"]);
    const behind = cache("12");
    behind.consistentAs({ behind: { target: "20", current: "12" } });
    expect(await statusOf(readAt({ match: "latest" }, behind.reads))).toMatchObject({ code: 504, message: "Timeout: Too large resource version: 20, current: 12" });
    expect(behind.calls).toEqual(["consistent"]);
  });

  it("reads a get's resourceVersion as the server: unset latest, 0 any, N at least N, abc 400", () => {
    expect(getResourceVersion(undefined)).toEqual({ match: "latest" });
    expect(getResourceVersion("0")).toEqual({ match: "any" });
    expect(getResourceVersion("7")).toEqual({ match: "notOlderThan", rv: "7" });
    expect(() => getResourceVersion("abc")).toThrow('invalid resource version: resourceVersion: Invalid value: "abc"');
  });
});
