/**
 * Reading a `/k8s` request as kube-apiserver reads it: query parameters (an empty value is absent),
 * booleans as apimachinery converts them, ListOptions, field selectors checked against the
 * resource's field labels, and the informer object that serves the request's resource.
 */
import type { Context } from "hono";
import { type InformerAddress } from "../clusters/cluster.ts";
import { informerStub as clusterInformerStub } from "../clusters/stubs.ts";
import type { ListOptionsQuery } from "../k8s/list-options.ts";
import type { ServedResource } from "../k8s/served.ts";
import { statusErrors } from "../k8s/status.ts";
import { type IncludeObject, parseIncludeObject } from "../k8s/table.ts";
import { parseFieldSelector, SelectorError } from "../kube/selectors.ts";
import type { AppEnv } from "./app-env.ts";
import { clusterOf } from "./auth.ts";

export type K8sContext = Context<AppEnv>;

/** Where app.ts mounts this request's API server: `/k8s`, or `/k8s/clusters/{cluster}`. */
export function apiRootOf(c: K8sContext): string {
  const cluster = c.req.param("cluster");
  return cluster === undefined ? "/k8s" : `/k8s/clusters/${cluster}`;
}

/** The request's path below its API server's root (`/api/v1/pods`, `/version`). */
export function apiPathOf(c: K8sContext): string {
  return c.req.path.slice(apiRootOf(c).length) || "/";
}

/** The ListOptions the server's validation reads (list-options.ts), empty values read as absent. */
export function listOptionsQuery(c: K8sContext, watch: boolean): ListOptionsQuery {
  const sendInitialEvents = c.req.query("sendInitialEvents");
  return {
    watch,
    resourceVersion: queryParam(c, "resourceVersion"),
    resourceVersionMatch: queryParam(c, "resourceVersionMatch"),
    continue: queryParam(c, "continue"),
    sendInitialEvents: sendInitialEvents === undefined ? undefined : isTrue(sendInitialEvents),
  };
}

/** Headers of a streamed answer; its content-encoding comes from k8s/compression.ts. */
export const STREAM_HEADERS = { "content-type": "application/json", "cache-control": "no-cache, private" };

/** A query parameter, with an empty value read as absent (as the API server reads these). */
export function queryParam(c: K8sContext, name: string): string | undefined {
  const value = c.req.query(name);
  return value === undefined || value === "" ? undefined : value;
}

export function included(value: string | undefined): IncludeObject {
  try {
    return parseIncludeObject(value);
  } catch (error) {
    throw statusErrors.badRequest(error instanceof Error ? error.message : String(error));
  }
}

/**
 * A boolean query parameter as apimachinery reads one (Convert_Slice_string_To_bool): absent is
 * false; present, anything but "0" or "false" (any case) is true — clients send "true", "1", "True".
 */
export const isTrue = (value: string | undefined) => value !== undefined && value !== "0" && value.toLowerCase() !== "false";

export function informerStub(c: K8sContext, served: ServedResource) {
  return clusterInformerStub(c.env, addressOf(c, served), c.get("placement"));
}

export function addressOf(c: K8sContext, served: ServedResource): InformerAddress {
  return { cluster: clusterOf(c), name: served.informer };
}

/** Field selectors name metadata.name, metadata.namespace, the type's field labels, or an indexed field. */
export function checkFieldSelector(text: string, served: ServedResource): void {
  let requirements;
  try {
    requirements = parseFieldSelector(text).requirements;
  } catch (error) {
    if (error instanceof SelectorError) throw statusErrors.badRequest(`invalid selector: '${text}'; ${error.message}`);
    throw error;
  }
  const labels = served.info.fieldLabels;
  if (labels === null) return;
  for (const { path } of requirements) {
    if (path === "metadata.name" || path === "metadata.namespace" || labels.includes(path) || served.indexedFields.includes(path)) continue;
    throw statusErrors.badRequest(
      labels.length > 0
        ? `field label not supported: ${path}`
        : `"${path}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
    );
  }
}
