/** What users import: the typed API client, webhook signature verification, and the types of both. */
export { EdgeInformerApiError, EdgeInformerClient } from "./api.ts";
export type { EdgeInformerClientOptions, EdgeInformerErrorCode, FetchLike } from "./api.ts";
export type {
  Cluster,
  ClusterSpec,
  CreatedSubscription,
  DeadLetter,
  DeliveryAttempt,
  InformerSpec,
  InformerStatus,
  ObjectList,
  ObjectQuery,
  PageQuery,
  PutInformerResult,
  RedeliverResult,
  SearchPage,
  SearchQuery,
  SigningKey,
  SubscriptionEventType,
  SubscriptionFormat,
  SubscriptionSigning,
  SubscriptionSpec,
  SubscriptionState,
  SubscriptionStatus,
} from "./api-types.ts";
export { verifyWebhook, WebhookVerificationError } from "./verify.ts";
export type { KubernetesObject, QueueMessageBody, WebhookBatch, WebhookEvent, WebhookEventType } from "./types.ts";
