/**
 * What an operator, or a declaration in INFORMERS, changes about a subscription: creating it on
 * its informer, bringing a declared one in line with its declaration, sealing a new secret. The
 * Durable Object supplies the informer's registration (an RPC) and a new secret, and arms the alarm
 * afterwards as the answer says.
 *
 * Guarantees:
 * - A secret is sealed (stored-secrets.ts) before anything is registered or stored: without
 *   ENCRYPTION_KEY such a request changes nothing, and answers the 503 that names it.
 * - A subscription is stored only once its informer registered it, from the log position the
 *   informer answered, so it misses no event after its creation.
 * - A declared subscription keeps its position, outbox and retry state when its spec or secret
 *   changes; one that follows another informer (two declarations meeting on one id) is a Conflict.
 */
import { describeInformer, type InformerAddress } from "../clusters/cluster.ts";
import { attemptAsync, fail, ok, type Result } from "../errors.ts";
import type { Subscription } from "./subscription.ts";
import { type ParsedSpec, resolveSpec, type SigningKind } from "./subscription-spec.ts";
import { newSigningKeyPair } from "./ed25519-keys.ts";
import { newSecret } from "./sign.ts";

/** An informer's answer to a subscription registering: where its log ends, and its resync period. */
export type Registration = Result<{ tail: number; resyncPeriodSeconds: number }>;

/** Registers subscription `id` with the informer at `informer` (its object's `addSubscriber`). */
export type Register = (informer: InformerAddress, id: string) => Promise<Registration>;

/** Where a subscription's informer lives. */
export function addressOf(record: { cluster: string; informer: string }): InformerAddress {
  return { cluster: record.cluster, name: record.informer };
}

/** What an answer shows of a new secret: an HMAC secret itself (this once), or an Ed25519 key's public half. */
export type ShownSecret = { secret: string; publicKey?: never } | { publicKey: string; secret?: never };

/** A new secret of `kind` (a `whsec_` secret or a `whsk_` key) to store sealed, and what the answer shows of it. */
export async function newSigningSecret(kind: SigningKind): Promise<{ secret: string; shown: ShownSecret }> {
  if (kind === "ed25519") {
    const { signingKey, publicKey } = await newSigningKeyPair();
    return { secret: signingKey, shown: { publicKey } };
  }
  const secret = newSecret((n) => crypto.getRandomValues(new Uint8Array(n)));
  return { secret, shown: { secret } };
}

/** `secret` sealed for storage, or the 503 that names ENCRYPTION_KEY. */
export function sealSecret(subscription: Subscription, id: string, secret: string): Promise<Result<string>> {
  return attemptAsync(() => subscription.secrets.seal(id, secret));
}

/**
 * Creates the subscription on `informer` with `secret`, which it seals: registers with the
 * informer (which answers the log position to start from), then stores the spec. The caller arms
 * the alarm once it answers ok.
 */
export async function createSubscription(
  subscription: Subscription,
  register: Register,
  init: { id: string; informer: InformerAddress; spec: ParsedSpec; secret: string; declared: boolean },
): Promise<Result<void>> {
  const { id, informer, spec, declared } = init;
  if (subscription.store.get()) return fail("Conflict", `subscription '${id}' already exists`);
  // Sealed before anything is registered: without ENCRYPTION_KEY the request changes nothing.
  const sealed = await sealSecret(subscription, id, init.secret);
  if (!sealed.ok) return sealed;
  const registered = await register(informer, id);
  if (!registered.ok) return fail("NotFound", `${describeInformer(informer)} not found`);
  const { tail, resyncPeriodSeconds } = registered.value;
  subscription.create({ id, cluster: informer.cluster, informer: informer.name, secret: sealed.value, tail, declared, spec: resolveSpec(spec, resyncPeriodSeconds) });
  return ok(undefined);
}

/**
 * Brings a subscription declared in INFORMERS in line with its declaration: creates it with the
 * operator's secret, or updates its spec and secret in place (its position stays). The caller arms
 * the alarm for "created" and brings it forward for "updated".
 */
export async function declareSubscription(
  subscription: Subscription,
  register: Register,
  init: { id: string; informer: InformerAddress; spec: ParsedSpec; secret: string },
): Promise<Result<"created" | "updated" | "unchanged">> {
  const { id, informer, spec, secret } = init;
  const existing = subscription.store.get();
  if (!existing) {
    const created = await createSubscription(subscription, register, { ...init, declared: true });
    return created.ok ? ok("created") : created;
  }
  // Declared ids join names with '-', which names may contain: two declarations can meet here.
  // The first keeps the id; following another informer's log with this one's cursor would be wrong.
  if (existing.cluster !== informer.cluster || existing.informer !== informer.name) {
    const holder = addressOf(existing);
    return fail("Conflict", `subscription '${id}' already follows ${describeInformer(holder)}: rename one of the two declarations`);
  }
  const registered = await register(informer, id);
  if (!registered.ok) return fail("NotFound", `${describeInformer(informer)} not found`);
  const resolved = resolveSpec(spec, registered.value.resyncPeriodSeconds);
  const sameSecret = await subscription.secrets.open(id, existing.secret).then((held) => held === secret, () => false);
  if (JSON.stringify(resolved) === JSON.stringify(existing.spec) && sameSecret) return ok("unchanged");
  const sealed = sameSecret ? ok(existing.secret) : await sealSecret(subscription, id, secret);
  if (!sealed.ok) return sealed;
  subscription.updateSpec(resolved, sealed.value);
  return ok("updated");
}
