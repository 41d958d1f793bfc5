/** What receivers import: signature verification and the event types. */
export { verifyWebhook, WebhookVerificationError } from "./verify.ts";
export type { KubernetesObject, WebhookBatch, WebhookEvent, WebhookEventType } from "./types.ts";
