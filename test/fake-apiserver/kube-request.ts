/**
 * What every Kubernetes API handler receives: the cluster, the resolved resource and scope, the raw
 * query, the request's log entry (handlers add the faults they applied), and the node:http pair.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Cluster } from "./cluster.ts";
import type { ResourceDef } from "./resources.ts";
import type { RecordedRequest } from "./types.ts";

export interface KubeRequest {
  cluster: Cluster;
  def: ResourceDef;
  /** From the URL; undefined for all-namespaces and cluster-scoped requests. */
  namespace: string | undefined;
  params: URLSearchParams;
  record: RecordedRequest;
  req: IncomingMessage;
  res: ServerResponse;
}

export function noteFault(record: RecordedRequest, kind: string): void {
  (record.faults ??= []).push(kind);
}
