/**
 * A subscription's signing secrets at rest (issue 17 item 11): the current secret and, during a
 * rotation's grace period, the one it replaced are stored sealed (secrets/secret-sealer.ts) in the
 * subscription's row, and opened only to sign a delivery.
 *
 * Guarantees:
 * - Both are bound to the subscription (`webhook-secret:<id>`): a sealed secret copied into another
 *   subscription's row does not open there.
 * - Opened values are kept in memory per sealed text (a subscription signs every delivery with
 *   the same one or two), never written anywhere.
 * - `resealed` answers what the row should hold instead: stale secrets (plain text from an earlier
 *   release, or sealed under ENCRYPTION_KEY_PREVIOUS) sealed under the current key, and a previous
 *   secret whose grace period ended dropped, since it signs nothing any more and point-in-time
 *   recovery would keep it for 30 days more.
 */
import type { SecretSealer } from "../secrets/secret-sealer.ts";
import { isSigningKey, publicKeyOf } from "./ed25519-keys.ts";

export const webhookSecretBinding = (subscriptionId: string) => `webhook-secret:${subscriptionId}`;

/** The secret columns of a subscription row: `secret`, `previous_secret` and its grace period's end. */
export interface StoredSecrets {
  id: string;
  secret: string;
  previousSecret: { secret: string; until: number } | null;
}

/** Most opened secrets kept: the current and the previous one, and the pair after one rotation. */
const MAX_OPENED = 4;

export class SubscriptionSecrets {
  readonly #sealerNow: () => SecretSealer;
  readonly #opened = new Map<string, string>();

  /** `sealer` is asked at each use: the settings it reflects may change (a test, a new deployment). */
  constructor(sealer: () => SecretSealer) {
    this.#sealerNow = sealer;
  }

  get #sealer(): SecretSealer {
    return this.#sealerNow();
  }

  /** A new secret sealed for the subscription `id`; throws SecretsAtRestError without ENCRYPTION_KEY. */
  seal(id: string, secret: string): Promise<string> {
    return this.#sealer.seal(secret, webhookSecretBinding(id));
  }

  /** The secrets to sign with at `now`: the current one, and the previous one within its grace period. */
  async signing(stored: StoredSecrets, now: number): Promise<{ current: string; previous?: string }> {
    const current = await this.open(stored.id, stored.secret);
    const previous = stored.previousSecret !== null && now < stored.previousSecret.until ? await this.open(stored.id, stored.previousSecret.secret) : undefined;
    return previous === undefined ? { current } : { current, previous };
  }

  /**
   * The `whpk_` public keys of the Ed25519 keys signing at `now` (ed25519-keys.ts): the current
   * one (undefined when it is an HMAC secret), and a previous Ed25519 key within its grace period.
   */
  async publicKeys(stored: StoredSecrets, now: number): Promise<{ current?: string; previous?: { publicKey: string; until: number } }> {
    const { current, previous } = await this.signing(stored, now);
    const previousKey = previous !== undefined && isSigningKey(previous) ? { publicKey: await publicKeyOf(previous), until: stored.previousSecret!.until } : undefined;
    return {
      ...(isSigningKey(current) ? { current: await publicKeyOf(current) } : {}),
      ...(previousKey === undefined ? {} : { previous: previousKey }),
    };
  }

  async open(id: string, sealed: string): Promise<string> {
    const known = this.#opened.get(sealed);
    if (known !== undefined) return known;
    const { value } = await this.#sealer.open(sealed, webhookSecretBinding(id));
    if (this.#opened.size >= MAX_OPENED) this.#opened.clear();
    this.#opened.set(sealed, value);
    return value;
  }

  /** What the row's secret columns should hold instead; undefined when they are fine as stored. */
  async resealed(stored: StoredSecrets, now: number): Promise<Omit<StoredSecrets, "id"> | undefined> {
    const binding = webhookSecretBinding(stored.id);
    const secret = await this.#sealer.reseal(stored.secret, binding);
    const previous = stored.previousSecret;
    const expired = previous !== null && previous.until <= now;
    const previousSecret = previous === null || expired ? undefined : await this.#sealer.reseal(previous.secret, binding);
    if (secret === undefined && previousSecret === undefined && !expired) return undefined;
    return {
      secret: secret ?? stored.secret,
      previousSecret: previous === null || expired ? null : { secret: previousSecret ?? previous.secret, until: previous.until },
    };
  }
}
