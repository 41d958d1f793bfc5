/**
 * Secrets at rest (issue 17 item 11): cluster tokens and webhook secrets are stored in Durable
 * Object SQLite, and point-in-time recovery keeps every past state of a database for 30 days, so a
 * rotated or deleted secret lives on in plain text unless it was encrypted. This module seals such
 * values before they are written and opens them when they are used.
 *
 * Guarantees:
 * - A sealed value is `enc:v1:<keyId>:<iv>:<ciphertext>` (base64url): AES-256-GCM under a key
 *   derived with HKDF-SHA-256 from the `ENCRYPTION_KEY` secret (any string of at least
 *   MIN_KEY_CHARS characters), a fresh random 96-bit IV per value, and the value's `binding` (e.g.
 *   `cluster-token:prod`) as additional data: a ciphertext copied to another row does not open.
 * - `keyId` is derived from the key (never the key itself), so a value sealed under
 *   `ENCRYPTION_KEY_PREVIOUS` still opens during a rotation and is reported `stale`, as is a value
 *   stored in plain text by an earlier release; owners re-seal stale values when they next write
 *   or wake (`reseal`).
 * - Without a key nothing new is sealed: `seal` throws SecretsAtRestError (503, naming
 *   ENCRYPTION_KEY) before the caller changes anything, unless plain text is allowed (local
 *   development, ALLOW_UNAUTHENTICATED), which is logged once per isolate.
 * - No message carries a value, sealed or not: errors name the binding and the key ids only.
 *
 * Does not: protect against someone holding the Worker's secrets, or hide which rows hold secrets.
 */
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { logger } from "../log.ts";
import { fromBase64url, toBase64url } from "../net/byte-encoding.ts";

export const SEALED_PREFIX = "enc:v1:";
/** Shorter keys are refused: HKDF stretches a key, it cannot add the entropy a short one lacks. */
export const MIN_KEY_CHARS = 32;
const IV_BYTES = 12;
const KEY_ID_BYTES = 6;
/** HKDF salt and info strings: fixed, so one ENCRYPTION_KEY always derives the same keys. */
const HKDF_SALT = "edge-informer secrets at rest";
const AES_INFO = "v1 aes-256-gcm";
const KEY_ID_INFO = "v1 key id";

/** Storing or opening a secret is impossible as configured; a 503 that names the setting to fix. */
export class SecretsAtRestError extends ApiError {
  constructor(message: string) {
    super("ServiceUnavailable", message);
  }
}

/** What the sealer needs of the environment: the key material, and whether plain text is allowed. */
export interface SealingSettings {
  key?: string | undefined;
  previousKey?: string | undefined;
  /** Local development (ALLOW_UNAUTHENTICATED): without a key, store values unencrypted. */
  allowPlaintext: boolean;
}

type SealingEnv = Pick<Env, "ENCRYPTION_KEY" | "ENCRYPTION_KEY_PREVIOUS" | "ALLOW_UNAUTHENTICATED">;

let lastSealer: { settings: string; sealer: SecretSealer } | undefined;

/**
 * The sealer for a Worker's settings, read at each use (so a test may change them) and derived
 * once per isolate while they stay the same: HKDF runs once, not per value.
 */
export function sealerFor(env: SealingEnv): SecretSealer {
  const settings: SealingSettings = { key: env.ENCRYPTION_KEY, previousKey: env.ENCRYPTION_KEY_PREVIOUS, allowPlaintext: env.ALLOW_UNAUTHENTICATED === "true" };
  const text = JSON.stringify(settings);
  if (lastSealer?.settings !== text) lastSealer = { settings: text, sealer: new SecretSealer(settings) };
  return lastSealer.sealer;
}

/** An opened value, and whether its stored form should be sealed again under the current key. */
export interface Opened {
  value: string;
  stale: boolean;
}

interface DerivedKey {
  id: string;
  key: CryptoKey;
}

let warnedPlaintext = false;

export class SecretSealer {
  readonly #settings: SealingSettings;
  #keys: Promise<{ current?: DerivedKey; previous?: DerivedKey }> | undefined;

  constructor(settings: SealingSettings) {
    this.#settings = settings;
  }

  /** Seals `value` for the row `binding` names; plain text only where allowed without a key. */
  async seal(value: string, binding: string): Promise<string> {
    const { current } = await this.#derived();
    if (!current) {
      if (!this.#settings.allowPlaintext) {
        throw new SecretsAtRestError(
          "ENCRYPTION_KEY is not set: secrets (cluster tokens, webhook secrets) are stored only encrypted. " +
            `Set it to a random string of at least ${MIN_KEY_CHARS} characters (wrangler secret put ENCRYPTION_KEY)`,
        );
      }
      if (!warnedPlaintext) {
        warnedPlaintext = true;
        logger.warn("ENCRYPTION_KEY is not set: secrets are stored unencrypted (ALLOW_UNAUTHENTICATED, local development only)", {
          cause: "config",
        });
      }
      return value;
    }
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const ciphertext = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: utf8(binding) }, current.key, utf8(value));
    return `${SEALED_PREFIX}${current.id}:${toBase64url(iv)}:${toBase64url(new Uint8Array(ciphertext))}`;
  }

  /** Opens a stored value: sealed (under either key) or plain text written by an earlier release. */
  async open(stored: string, binding: string): Promise<Opened> {
    const keys = await this.#derived();
    if (!stored.startsWith(SEALED_PREFIX)) return { value: stored, stale: keys.current !== undefined };
    const [keyId, iv, ciphertext, extra] = stored.slice(SEALED_PREFIX.length).split(":");
    if (keyId === undefined || iv === undefined || ciphertext === undefined || extra !== undefined) {
      throw new SecretsAtRestError(`the stored ${binding} is not a valid sealed value`);
    }
    const key = [keys.current, keys.previous].find((k) => k?.id === keyId);
    if (!key) {
      const known = [keys.current && `ENCRYPTION_KEY (key id ${keys.current.id})`, keys.previous && `ENCRYPTION_KEY_PREVIOUS (key id ${keys.previous.id})`];
      const have = known.filter(Boolean).join(" and ") || "neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS is set";
      throw new SecretsAtRestError(`the stored ${binding} was encrypted with key id ${keyId}, which no configured key matches (${have})`);
    }
    try {
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: fromBase64url(iv), additionalData: utf8(binding) },
        key.key,
        fromBase64url(ciphertext),
      );
      return { value: new TextDecoder().decode(plain), stale: key !== keys.current };
    } catch {
      // GCM's tag check: the value was altered, or it was sealed for another row (another binding).
      throw new SecretsAtRestError(`the stored ${binding} does not decrypt: it was altered, or it belongs to another row`);
    }
  }

  /** The value sealed again under the current key when it is stale; undefined when it is fine as stored. */
  async reseal(stored: string, binding: string): Promise<string | undefined> {
    const opened = await this.open(stored, binding);
    return opened.stale ? this.seal(opened.value, binding) : undefined;
  }

  #derived(): Promise<{ current?: DerivedKey; previous?: DerivedKey }> {
    this.#keys ??= (async () => {
      const current = await deriveKey(this.#settings.key, "ENCRYPTION_KEY");
      const previous = await deriveKey(this.#settings.previousKey, "ENCRYPTION_KEY_PREVIOUS");
      return { ...(current ? { current } : {}), ...(previous ? { previous } : {}) };
    })();
    // A refused key stays refused, with the same message, on every use.
    return this.#keys;
  }
}

async function deriveKey(material: string | undefined, setting: string): Promise<DerivedKey | undefined> {
  if (material === undefined || material === "") return undefined;
  if (material.length < MIN_KEY_CHARS) {
    throw new SecretsAtRestError(`${setting} is too short: use a random string of at least ${MIN_KEY_CHARS} characters (e.g. openssl rand -base64 48)`);
  }
  const base = await crypto.subtle.importKey("raw", utf8(material), "HKDF", false, ["deriveKey", "deriveBits"]);
  const params = (info: string) => ({ name: "HKDF", hash: "SHA-256", salt: utf8(HKDF_SALT), info: utf8(info) });
  const key = await crypto.subtle.deriveKey(params(AES_INFO), base, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
  const id = toBase64url(new Uint8Array(await crypto.subtle.deriveBits(params(KEY_ID_INFO), base, KEY_ID_BYTES * 8)));
  return { id, key };
}

const utf8 = (text: string) => new TextEncoder().encode(text);
