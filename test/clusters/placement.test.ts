/**
 * A cluster's placement (src/clusters/placement.ts, review B11): `locationHint` and `jurisdiction`
 * validated with the rest of a cluster's configuration, objects addressed in the jurisdiction and
 * created near the hint, and a jurisdiction that cannot change under existing objects.
 */
import { describe, expect, it } from "vitest";
import { parseClusterBody, parseDeclaredClusters } from "../../src/clusters/cluster-spec.ts";
import { jurisdictionChangeRefusal, ownPlacement, type PlaceableNamespace, placedStub } from "../../src/clusters/placement.ts";
import { informerStub, subscriptionStub } from "../../src/clusters/stubs.ts";
import type { Env } from "../../src/env.ts";
import { ValidationError } from "../../src/errors.ts";

const egress = { CLUSTER_ALLOWED_HOSTS: "example.com" } as Pick<Env, "CLUSTER_ALLOWED_HOSTS">;
const server = "https://k8s.example.com";

/** A namespace that records how each stub was asked for. */
function recordingNamespace() {
  const calls: { jurisdiction?: string; name: string; options?: object }[] = [];
  const scoped = (jurisdiction?: string): PlaceableNamespace<string> => ({
    getByName: (name, options) => {
      calls.push({ ...(jurisdiction ? { jurisdiction } : {}), name, ...(options ? { options } : {}) });
      return `${jurisdiction ?? "global"}:${name}`;
    },
    jurisdiction: (j) => scoped(j),
  });
  return { namespace: scoped(), calls };
}

describe("cluster placement", () => {
  it("accepts Cloudflare's location hints and jurisdictions in PUT bodies and CLUSTERS entries", () => {
    expect(parseClusterBody({ server, locationHint: "weur", jurisdiction: "eu" }, egress)).toEqual({ server, locationHint: "weur", jurisdiction: "eu" });
    const declared = parseDeclaredClusters(JSON.stringify({ prod: { server, locationHint: "enam", jurisdiction: "fedramp" } }), egress);
    expect(declared).toEqual({ clusters: [{ name: "prod", connection: { server, locationHint: "enam", jurisdiction: "fedramp" } }], errors: [] });
  });

  it.each([
    [{ server, locationHint: "mars" }, /locationHint: must be one of wnam, enam, sam, weur, eeur, apac, oc, afr, me/],
    [{ server, jurisdiction: "EU" }, /jurisdiction: must be one of eu, fedramp, fedramp-high, us/],
    [{ server, jurisdiction: 1 }, /jurisdiction: must be one of/],
  ])("refuses %j with a message that lists the accepted values", (body, message) => {
    expect(() => parseClusterBody(body, egress)).toThrow(ValidationError);
    expect(() => parseClusterBody(body, egress)).toThrow(message);
    const declared = parseDeclaredClusters(JSON.stringify({ prod: { ...body, server } }), egress);
    expect(declared.clusters).toEqual([]);
    expect(declared.errors.join()).toMatch(message);
  });

  it("addresses an object in its jurisdiction and near its hint, and plainly without a placement", () => {
    const { namespace, calls } = recordingNamespace();
    expect(placedStub(namespace, "prod/pods", { jurisdiction: "eu", locationHint: "weur" })).toBe("eu:prod/pods");
    expect(placedStub(namespace, "pods", { locationHint: "apac" })).toBe("global:pods");
    expect(placedStub(namespace, "pods")).toBe("global:pods");
    expect(calls).toEqual([
      { jurisdiction: "eu", name: "prod/pods", options: { locationHint: "weur" } },
      { name: "pods", options: { locationHint: "apac" } },
      { name: "pods" },
    ]);
  });

  it("gets informer and subscription stubs through the placement", () => {
    const informers = recordingNamespace();
    const subscriptions = recordingNamespace();
    const env = { INFORMER: informers.namespace, SUBSCRIPTION: subscriptions.namespace } as unknown as Pick<Env, "INFORMER" | "SUBSCRIPTION">;
    informerStub(env, { cluster: "prod", name: "pods" }, { jurisdiction: "eu" });
    subscriptionStub(env, "sub_1", { jurisdiction: "eu", locationHint: "weur" });
    expect(informers.calls).toEqual([{ jurisdiction: "eu", name: "prod/pods" }]);
    expect(subscriptions.calls).toEqual([{ jurisdiction: "eu", name: "sub_1", options: { locationHint: "weur" } }]);
  });

  it("refuses a jurisdiction change only where objects exist", () => {
    expect(jurisdictionChangeRefusal("prod", { jurisdiction: "eu" }, { jurisdiction: "eu", locationHint: "weur" }, 3)).toBeUndefined();
    expect(jurisdictionChangeRefusal("prod", undefined, { jurisdiction: "eu" }, 0)).toBeUndefined();
    expect(jurisdictionChangeRefusal("prod", undefined, { jurisdiction: "eu" }, 2)).toMatch(
      /cluster 'prod' has 2 informer\(s\) in no jurisdiction: its objects cannot move to jurisdiction 'eu'/,
    );
    expect(jurisdictionChangeRefusal("prod", { jurisdiction: "eu" }, {}, 1)).toMatch(/in jurisdiction 'eu': its objects cannot move to no jurisdiction/);
  });
});

describe("ownPlacement", () => {
  it("is the jurisdiction an object's id carries, so a cluster's objects reach each other in it", () => {
    expect(ownPlacement({ jurisdiction: "eu" })).toEqual({ jurisdiction: "eu" });
    expect(ownPlacement({})).toEqual({});
    expect(ownPlacement({ jurisdiction: "mars" })).toEqual({}); // not one we place objects in
  });
});
