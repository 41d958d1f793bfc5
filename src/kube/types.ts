/** The slice of the Kubernetes object model the informer reads. Everything else passes through untouched. */

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  managedFields?: unknown;
  [field: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** metav1.Status: the body of every API error and of watch ERROR events. */
export interface Status {
  kind: "Status";
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: StatusCause[]; retryAfterSeconds?: number; [field: string]: unknown };
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}
