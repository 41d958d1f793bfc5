/**
 * Legacy (non-aggregated) discovery documents shaped like a kube-apiserver's: /version, /api (APIVersions),
 * /api/v1 and /apis/{g}/{v} (APIResourceList), /apis (APIGroupList), /apis/{g} (APIGroup). kubectl falls
 * back to these when the server does not answer with aggregated discovery.
 */
import { RESOURCES, type ResourceDef } from "./resources.ts";

/** Verbs the fake actually serves on every resource. */
const VERBS = ["create", "delete", "get", "list", "update", "watch"];

export function versionInfo(): object {
  return {
    major: "1",
    minor: "34",
    emulationMajor: "1",
    emulationMinor: "34",
    minCompatibilityMajor: "1",
    minCompatibilityMinor: "33",
    gitVersion: "v1.34.0-fake",
    gitCommit: "0000000000000000000000000000000000000000",
    gitTreeState: "clean",
    buildDate: "2025-08-27T00:00:00Z",
    goVersion: "go1.24.6",
    compiler: "gc",
    platform: "linux/amd64",
  };
}

export function apiVersions(serverAddress: string): object {
  return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }] };
}

function groupEntry(group: string): object {
  const versions = [...new Set(RESOURCES.filter((r) => r.group === group).map((r) => r.version))].map((version) => ({
    groupVersion: `${group}/${version}`,
    version,
  }));
  return { name: group, versions, preferredVersion: versions[0] };
}

export function groupList(): object {
  const groups = [...new Set(RESOURCES.map((r) => r.group).filter((g) => g !== ""))];
  return { kind: "APIGroupList", apiVersion: "v1", groups: groups.map(groupEntry) };
}

export function apiGroup(group: string): object {
  return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(group) };
}

/** A stable stand-in for storageVersionHash (8 bytes, base64), derived from the group/kind. */
function storageVersionHash(def: ResourceDef): string {
  let h = 2166136261;
  for (const ch of `${def.group}/${def.version}/${def.kind}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const bytes = new Uint8Array(8);
  for (let i = 0; i < 8; i++) bytes[i] = (h >>> ((i % 4) * 8)) & 0xff ^ i;
  return Buffer.from(bytes).toString("base64");
}

export function resourceList(group: string, version: string): object {
  const resources = RESOURCES.filter((r) => r.group === group && r.version === version).map((r) => {
    const entry: Record<string, unknown> = {
      name: r.name,
      singularName: r.singularName,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: VERBS,
    };
    if (r.shortNames.length) entry.shortNames = r.shortNames;
    if (r.categories.length) entry.categories = r.categories;
    entry.storageVersionHash = storageVersionHash(r);
    return entry;
  });
  const groupVersion = group === "" ? version : `${group}/${version}`;
  // The core group's list has no apiVersion field; named groups' lists do.
  return group === ""
    ? { kind: "APIResourceList", groupVersion, resources }
    : { kind: "APIResourceList", apiVersion: "v1", groupVersion, resources };
}
