/**
 * Who a metric sample or a log line is about. Every informer sample and log line is built from an
 * `InformerIdentity`, never from a hard-coded name, so issue 12 (many clusters in one deployment)
 * adds `cluster` here and every metric and line carries it without a rewrite.
 */

export interface InformerIdentity {
  informer: string;
  /** Issue 12: the cluster the informer watches; absent while a deployment has one cluster. */
  cluster?: string;
}

export interface SubscriptionIdentity extends InformerIdentity {
  subscription: string;
}

/** The labels an identity contributes, in a fixed order (cluster first, when there is one). */
export function identityLabels(identity: InformerIdentity | SubscriptionIdentity): Record<string, string> {
  return {
    ...(identity.cluster === undefined ? {} : { cluster: identity.cluster }),
    informer: identity.informer,
    ...("subscription" in identity ? { subscription: identity.subscription } : {}),
  };
}
