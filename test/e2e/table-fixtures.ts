/**
 * Objects of every kind kubectl-tables-kinds.e2e.test.ts prints, written by hand as a 1.32 API server
 * returns them (v1 defaults such as a port's protocol or a workload's replicas filled in), with and
 * without the optional fields each printers.go column branches on. Each kind also names the object
 * its `kubectl get -w` sees created, and `cells`: for some objects, the cells kubectl prints (wide
 * ones included), worked out by hand from the printers.go 1.32 rules, so that a rule both printers
 * got wrong the same way still fails. Times are days in the past, so the printed ages stay put for
 * the length of a run. Pure data: usable from Node and workerd. This module has what the fixtures
 * of each group (table-fixtures-*.ts) share.
 */
import type { FakeObject } from "../fake-apiserver/types.ts";

export const TABLES_NAMESPACE = "tables";
/** A second namespace, so `-A` lists across namespaces. */
export const OTHER_NAMESPACE = "tables-b";
export const DAY_MS = 24 * 3600 * 1000;
export const at = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
/** Ten days ago: HumanDuration prints "10d" all day long. */
export const TEN_DAYS_AGO_MS = Date.now() - 10 * DAY_MS;
export const TEN_DAYS_AGO = at(TEN_DAYS_AGO_MS);

export interface KindFixture {
  /** One name for all three: the informer's resource, kubectl's argument, the fake's control API. */
  resource: string;
  /** The informer's apiVersion, for a custom resource. */
  apiVersion?: string;
  objects: FakeObject[];
  /** Created while `kubectl get <resource> -A -w` runs. */
  watched: FakeObject;
  /** The header of `kubectl get <resource> -A -o wide`. */
  header: string[];
  /** Object name → column → the text kubectl prints (`-o wide`). */
  cells: Record<string, Record<string, string>>;
}

export type Json = Record<string, unknown>;

export function object(apiVersion: string, kind: string, name: string, body: Json, metadata: Json = {}, namespace = TABLES_NAMESPACE): FakeObject {
  return { apiVersion, kind, metadata: { name, namespace, ...metadata }, ...body };
}

export const containers = [
  { name: "app", image: "registry.example.com/app:1.4" },
  { name: "log", image: "fluent-bit:3.0" },
];
export const template = (labels: Record<string, string>, spec: Json = {}) => ({ metadata: { labels }, spec: { containers, ...spec } });
