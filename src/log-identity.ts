/**
 * Who a metric sample or a log line is about. Every informer sample and log line is built from an
 * `InformerIdentity`, never from a hard-coded name, so each carries the informer's cluster.
 *
 * Issue 12: `cluster` is always present, `default` included, so every informer and subscription
 * series has the same label set whether a deployment mirrors one cluster or many (a query such as
 * `sum by (cluster) (...)` needs no `or` for series without the label), and a log filter on
 * `cluster` finds the default cluster's lines too. Informer names are unique only within a
 * cluster, so without it two clusters' `pods` informers would be one series.
 */
// Type aliases, not interfaces: they spread into log fields (LogFields has an index signature).
export type InformerIdentity = {
  /** The cluster the informer watches (clusters/cluster.ts; `default`: KUBE_API_URL). */
  cluster: string;
  informer: string;
};

export type SubscriptionIdentity = InformerIdentity & { subscription: string };

/**
 * The identity of the informer at `address` (an InformerAddress, clusters/cluster.ts, taken by its
 * shape: this module sits in the base layer, below clusters/; docs/architecture.md "Layers").
 */
export function informerIdentity(address: { cluster: string; name: string }): InformerIdentity {
  return { cluster: address.cluster, informer: address.name };
}

/** The identity of a subscription, from its stored record (`id`, its informer's `cluster` and name). */
export function subscriptionIdentity(record: { cluster: string; informer: string; id: string }): SubscriptionIdentity {
  return { cluster: record.cluster, informer: record.informer, subscription: record.id };
}

/** The labels an identity contributes, in a fixed order: cluster, informer, subscription. */
export function identityLabels(identity: InformerIdentity | SubscriptionIdentity): Record<string, string> {
  return {
    cluster: identity.cluster,
    informer: identity.informer,
    ...("subscription" in identity ? { subscription: identity.subscription } : {}),
  };
}
