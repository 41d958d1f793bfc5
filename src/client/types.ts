/**
 * What a webhook receiver gets from edge-informer (API.md "The request a subscriber receives").
 * Objects are the Kubernetes objects as the informer cached them (managedFields dropped by default).
 */
import type { KubeObject } from "../kube/types.ts";

export type WebhookEventType = "add" | "update" | "delete" | "sync";

/** One change of one object, as delivered to a subscriber. */
export interface WebhookEvent<T = KubernetesObject> {
  /** Stable across retries: deduplicate on it. */
  id: string;
  type: WebhookEventType;
  /**
   * The cluster the informer watches (`default`: KUBE_API_URL). Key receiver state on this signed
   * field: the `x-edge-informer-cluster` header says the same but is not covered by the signature.
   */
  cluster: string;
  informer: string;
  /** "namespace/name", or "name" for cluster-scoped objects. */
  key: string;
  /** The new state; for a delete, the last known state (possibly stale when finalStateUnknown). */
  object: T;
  /** The previous state, for update and sync. */
  oldObject?: T;
  /** True for adds from an initial list or a replay. */
  initialList: boolean;
  /** True for a delete inferred at a relist (client-go DeletedFinalStateUnknown). */
  finalStateUnknown: boolean;
  /** The change's; for a delete inferred at a relist, the relist's (its object says the same). */
  resourceVersion: string;
  /** Increasing per subscription. */
  sequence: number;
}

/** The body when a subscription's maxBatchSize is above 1. */
export interface WebhookBatch<T = KubernetesObject> {
  events: WebhookEvent<T>[];
}

/**
 * A queue subscription's message body (`message.body` in a consumer Worker, docs/api.md "Queue
 * subscriptions"): the event, and the subscription that sent it (sequence numbers are per subscription).
 */
export type QueueMessageBody<T = KubernetesObject> = WebhookEvent<T> & { subscription: string };

/** A Kubernetes object as the informer cached it: the same shape the engine reads. */
export type KubernetesObject = KubeObject;
