/**
 * A webhook subscription's configuration (API.md "Webhook subscriptions"), validated once at the
 * edge (DESIGN invariant 8): everything past this module receives parsed, defaulted values.
 *
 * Endpoints must be https. Plain http is accepted only for loopback hosts (`localhost`,
 * 127.0.0.0/8, `[::1]`) and only when the deployment allows unauthenticated development
 * (`ALLOW_UNAUTHENTICATED`): a signed body over plain http to a remote host would expose every
 * object of the cluster on the wire. Hosts follow the egress rules (net/egress.ts: no IP literals
 * but loopback, never the Worker's own host, `WEBHOOK_ALLOWED_HOSTS` required in a deployment unless
 * `ALLOW_ANY_EGRESS`), here when a URL is accepted and in the sender before each delivery.
 * Instead of a URL, a subscription may name a queue producer binding that WEBHOOK_QUEUES lists
 * (queue-target.ts): exactly one of the two.
 */
import * as z from "zod/mini";
import { DEFAULT_CLUSTER, type InformerAddress, informerObjectName } from "../clusters/cluster.ts";
import type { Env } from "../env.ts";
import { describeIssues, ValidationError } from "../errors.ts";
import { type EgressRule, type EgressSettings, egressRefusal, egressRule } from "../net/egress.ts";
import { isLoopbackHostname } from "../net/loopback.ts";
import { parseFieldSelector, parseLabelSelector } from "../kube/selectors.ts";
import { QUEUE_BINDING_PATTERN, type QueueTargets, queueTargets } from "./queue-target.ts";
import { ATTEMPT_TIMEOUT_MS, RETRY_BUDGET_MS } from "./retry-schedule.ts";
import { DELIVERY_FORMATS } from "./cloudevents.ts";

export const EVENT_TYPES = ["add", "update", "delete", "sync"] as const;
export const MAX_BATCH_SIZE = 100;
/** How deliveries are signed (sign.ts): a shared `whsec_` secret, or an Ed25519 key whose public half receivers hold. */
export const SIGNING_KINDS = ["hmac", "ed25519"] as const;
export type SigningKind = (typeof SIGNING_KINDS)[number];
const MAX_TIMEOUT_SECONDS = ATTEMPT_TIMEOUT_MS / 1000;

const int = (min: number, max: number) => z.int().check(z.gte(min), z.lte(max));
const selector = (parse: (text: string) => unknown) =>
  z.string().check(
    z.maxLength(4096),
    z.superRefine((text, ctx) => {
      try {
        parse(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : String(error), input: text });
      }
    }),
  );

export const subscriptionSpecSchema = z.strictObject({
  /** The receiver's endpoint; or, instead, `queue` (exactly one of the two: `checkTarget`). */
  url: z.optional(z.string().check(z.maxLength(2048))),
  /** A Cloudflare Queue producer binding the events go to instead of a URL (queue-target.ts). */
  queue: z.optional(z.string().check(z.regex(QUEUE_BINDING_PATTERN, "must name a queue producer binding (letters, digits, '_')"))),
  events: z._default(
    z.array(z.enum(EVENT_TYPES)).check(
      z.minLength(1, "list at least one event type (or leave 'events' out for all)"),
      z.refine((types) => new Set(types).size === types.length, "event types must not repeat"),
    ),
    [...EVENT_TYPES],
  ),
  namespace: z.optional(z.string().check(z.maxLength(63), z.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be a Kubernetes namespace name"))),
  labelSelector: z.optional(selector(parseLabelSelector)),
  fieldSelector: z.optional(selector(parseFieldSelector)),
  /** 0 = never; absent = the informer's `resyncPeriodSeconds`. */
  resyncPeriodSeconds: z.optional(int(0, 7 * 24 * 3600)),
  replayExisting: z._default(z.boolean(), true),
  maxBatchSize: z._default(int(1, MAX_BATCH_SIZE), 1),
  /** How long an event is retried before it is dead-lettered (short budgets suit tests and best-effort receivers). */
  retryBudgetSeconds: z._default(int(1, 7 * 24 * 3600), RETRY_BUDGET_MS / 1000),
  /** Per-attempt timeout; API.md promises at most 15 s. */
  timeoutSeconds: z._default(int(1, MAX_TIMEOUT_SECONDS), MAX_TIMEOUT_SECONDS),
  /** Absent: "hmac". Stored only when not the default, so specs from before issue 32 read the same. */
  signing: z.optional(z.enum(SIGNING_KINDS)),
  /** Absent: "edge-informer" (cloudevents.ts). */
  format: z.optional(z.enum(DELIVERY_FORMATS)),
});

/**
 * A subscription declared in `INFORMERS` next to its informer (wrangler.toml). Its secret is not in
 * the file: `secretBinding` names a Worker secret holding a `whsec_…` value, so the operator knows
 * it without it ever being shown by the API.
 */
export const declaredSubscriptionSchema = z.strictObject({
  ...subscriptionSpecSchema.shape,
  name: z.string().check(z.maxLength(40), z.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "must be a lower-case DNS label (a-z, 0-9, '-')")),
  /** Required with `url`; a queue subscription is not signed and needs none. */
  secretBinding: z.optional(z.string().check(z.maxLength(128), z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must name a Worker secret (letters, digits, '_')"))),
});

export type DeclaredSubscription = z.output<typeof declaredSubscriptionSchema>;

/**
 * Declared subscriptions have readable, stable ids; created ones are `sub_` + 32 hex digits and
 * never contain '-', so the two kinds cannot collide.
 */
export function declaredSubscriptionId(informer: InformerAddress, name: string): string {
  // The default cluster's ids are as they were before clusters, so declared subscriptions keep their state.
  return informer.cluster === DEFAULT_CLUSTER ? `sub_${informer.name}-${name}` : `sub_${informer.cluster}--${informer.name}-${name}`;
}

/**
 * The secretBindings that more than one declared subscription names, each with the subscriptions
 * (`informer.subscriptions.name`) that name it. Two subscriptions signing with one secret cannot be
 * told apart by a receiver holding it: one's deliveries verify as the other's (review A10).
 */
export function sharedSecretBindings(
  specs: readonly (InformerAddress & { subscriptions: readonly Pick<DeclaredSubscription, "name" | "secretBinding">[] })[],
): Map<string, string[]> {
  const users = new Map<string, string[]>();
  for (const spec of specs) {
    for (const subscription of spec.subscriptions) {
      const binding = subscription.secretBinding;
      if (binding === undefined) continue;
      const where = `${informerObjectName(spec)}.subscriptions.${subscription.name}`;
      users.set(binding, [...(users.get(binding) ?? []), where]);
    }
  }
  return new Map([...users].filter(([, where]) => where.length > 1));
}

/** A Standard Webhooks secret: `whsec_` + base64 of 24 to 64 bytes. */
export const SECRET_PATTERN = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

export type SubscriptionSpecInput = z.input<typeof subscriptionSpecSchema>;
/** A validated subscription spec; `resyncPeriodSeconds` is resolved against the informer's default. */
export type SubscriptionSpec = Omit<z.output<typeof subscriptionSpecSchema>, "resyncPeriodSeconds"> & {
  resyncPeriodSeconds: number;
};

export interface UrlPolicy {
  /** `ALLOW_UNAUTHENTICATED`: local development, where http://localhost receivers are normal. */
  allowLoopbackHttp: boolean;
  /** The receivers' egress rule (`WEBHOOK_ALLOWED_HOSTS` and the rest: net/egress.ts). */
  egress: EgressRule;
}

/**
 * The receiver URL policy the Worker's environment sets; `requestHost`: the Host of the request
 * that submits the URL (the Worker's own name, refused as a receiver).
 */
export function webhookUrlPolicy(env: EgressSettings, requestHost?: string): UrlPolicy {
  return { allowLoopbackHttp: env.ALLOW_UNAUTHENTICATED === "true", egress: egressRule(env, "WEBHOOK_ALLOWED_HOSTS", requestHost) };
}

/**
 * Validates a subscription body; throws ValidationError naming each bad field. `queues`: the queue
 * producer bindings it may name (none unless given).
 */
export function parseSubscriptionSpec(input: unknown, policy: UrlPolicy, queues: QueueTargets = queueTargets({})): z.output<typeof subscriptionSpecSchema> {
  const parsed = subscriptionSpecSchema.safeParse(input);
  if (!parsed.success) throw new ValidationError(`invalid subscription: ${describeIssues(parsed.error)}`);
  checkTarget(parsed.data, policy, queues);
  checkFormat(parsed.data);
  return parsed.data;
}

/** A subscription names exactly one target, one it may send to: an endpoint URL, or a queue binding (queue-target.ts). */
export function checkTarget(spec: { url?: string | undefined; queue?: string | undefined; signing?: string | undefined; format?: string | undefined }, policy: UrlPolicy, queues: QueueTargets): void {
  if ((spec.url === undefined) === (spec.queue === undefined)) {
    throw new ValidationError("invalid subscription: name exactly one of 'url' (an endpoint) and 'queue' (a queue producer binding)");
  }
  if (spec.url !== undefined) {
    checkEndpointUrl(spec.url, policy);
    return;
  }
  const target = queues.resolve(spec.queue!);
  if ("refusal" in target) throw new ValidationError(`invalid subscription: ${target.refusal}`);
  // Inside the account nothing is signed or shaped: a queue message is the event as JSON.
  if (spec.signing !== undefined || spec.format !== undefined) {
    throw new ValidationError("invalid subscription: 'signing' and 'format' apply to an endpoint 'url', not to a 'queue' (its messages are unsigned JSON events)");
  }
}

/** CloudEvents binary mode has no batch: one event is one request (cloudevents.ts). */
export function checkFormat(spec: Pick<ParsedSpec, "format" | "maxBatchSize">): void {
  if (spec.format === "cloudevents-binary" && spec.maxBatchSize > 1) {
    throw new ValidationError(
      "invalid subscription: format: cloudevents-binary carries one event per request: leave maxBatchSize at 1, or use cloudevents-structured (a batch as application/cloudevents-batch+json)",
    );
  }
}

export function checkEndpointUrl(text: string, policy: UrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ValidationError(`invalid subscription: url: '${text}' is not an absolute URL`);
  }
  if (url.username || url.password) {
    throw new ValidationError("invalid subscription: url: must not carry credentials (the signature authenticates us)");
  }
  if (url.hash) throw new ValidationError("invalid subscription: url: must not have a #fragment");
  const refusal = egressRefusal(url, policy.egress);
  if (refusal !== undefined) throw new ValidationError(`invalid subscription: url: ${refusal}`);
  if (url.protocol === "https:") return url;
  if (url.protocol === "http:" && isLoopbackHostname(url.hostname)) {
    if (policy.allowLoopbackHttp) return url;
    throw new ValidationError(
      "invalid subscription: url: http is accepted only for loopback receivers with ALLOW_UNAUTHENTICATED (local development); use https",
    );
  }
  throw new ValidationError(`invalid subscription: url: must be https (got ${url.protocol.replace(":", "")})`);
}

/** A spec as the API parsed it: its resync period may be absent (the informer's default). */
export type ParsedSpec = z.output<typeof subscriptionSpecSchema>;

/** The spec as stored: an absent resync period is the informer's default. */
export function resolveSpec(spec: ParsedSpec, informerResyncSeconds: number): SubscriptionSpec {
  const { url, queue, events, namespace, labelSelector, fieldSelector, replayExisting, maxBatchSize, retryBudgetSeconds, timeoutSeconds, signing, format } = spec;
  return {
    ...(url === undefined ? {} : { url }),
    ...(queue === undefined ? {} : { queue }),
    events,
    ...(namespace === undefined ? {} : { namespace }),
    ...(labelSelector === undefined ? {} : { labelSelector }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    resyncPeriodSeconds: spec.resyncPeriodSeconds ?? informerResyncSeconds,
    replayExisting,
    maxBatchSize,
    retryBudgetSeconds,
    timeoutSeconds,
    ...(signing === undefined || signing === "hmac" ? {} : { signing }),
    ...(format === undefined || format === "edge-informer" ? {} : { format }),
  };
}
