// The sealer alone: the envelope, rotation, legacy plain text, binding, tampering and refusals.
import { describe, expect, it } from "vitest";
import { MIN_KEY_CHARS, SEALED_PREFIX, SecretSealer, SecretsAtRestError } from "../../src/secrets/secret-sealer.ts";

const KEY_A = "a".repeat(16) + "-first-key-of-at-least-32-chars";
const KEY_B = "b".repeat(16) + "-second-key-of-at-least-32-char";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const BINDING = "webhook-secret:sub-1";

const sealer = (key?: string, previousKey?: string, allowPlaintext = false) => new SecretSealer({ key, previousKey, allowPlaintext });

describe("SecretSealer", () => {
  it("seals into the versioned envelope, with no plain text in it, and opens it again", async () => {
    const sealed = await sealer(KEY_A).seal(SECRET, BINDING);
    expect(sealed).toMatch(/^enc:v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET.slice(6));
    // A new sealer (a restarted object) derives the same key from the same ENCRYPTION_KEY.
    expect(await sealer(KEY_A).open(sealed, BINDING)).toEqual({ value: SECRET, stale: false });
  });

  it("uses a fresh IV per value", async () => {
    const s = sealer(KEY_A);
    const [one, two] = [await s.seal(SECRET, BINDING), await s.seal(SECRET, BINDING)];
    expect(one).not.toBe(two);
    expect(one.split(":")[3]).not.toBe(two.split(":")[3]); // enc, v1, key id, IV, ciphertext
  });

  it("opens a value sealed with ENCRYPTION_KEY_PREVIOUS during a rotation, as stale, and reseals it with the new key", async () => {
    const old = await sealer(KEY_A).seal(SECRET, BINDING);
    const rotating = sealer(KEY_B, KEY_A);
    expect(await rotating.open(old, BINDING)).toEqual({ value: SECRET, stale: true });
    const resealed = (await rotating.reseal(old, BINDING))!;
    expect(resealed.split(":")[2]).not.toBe(old.split(":")[2]); // another key id
    expect(await sealer(KEY_B).open(resealed, BINDING)).toEqual({ value: SECRET, stale: false });
    expect(await rotating.reseal(resealed, BINDING)).toBeUndefined();
  });

  it("reads plain text from earlier releases, stale while a key is set", async () => {
    expect(await sealer(KEY_A).open(SECRET, BINDING)).toEqual({ value: SECRET, stale: true });
    const resealed = (await sealer(KEY_A).reseal(SECRET, BINDING))!;
    expect(resealed.startsWith(SEALED_PREFIX)).toBe(true);
    expect(await sealer(undefined, undefined, true).open(SECRET, BINDING)).toEqual({ value: SECRET, stale: false });
  });

  it("refuses a ciphertext moved to another row (another binding)", async () => {
    const sealed = await sealer(KEY_A).seal(SECRET, "cluster-token:prod");
    await expect(sealer(KEY_A).open(sealed, "cluster-token:staging")).rejects.toThrow(
      "the stored cluster-token:staging does not decrypt: it was altered, or it belongs to another row",
    );
  });

  it.each([
    ["a flipped ciphertext character", (parts: string[]) => parts.with(4, flip(parts[4]!))],
    ["a flipped IV character", (parts: string[]) => parts.with(3, flip(parts[3]!))],
  ])("refuses a tampered value: %s", async (_, tamper) => {
    const sealed = await sealer(KEY_A).seal(SECRET, BINDING);
    const tampered = tamper(sealed.split(":")).join(":");
    await expect(sealer(KEY_A).open(tampered, BINDING)).rejects.toThrow(/does not decrypt: it was altered/);
  });

  it("names the key ids, never a value, when no configured key matches", async () => {
    const sealed = await sealer(KEY_A).seal(SECRET, BINDING);
    const error = await refusal(sealer(KEY_B).open(sealed, BINDING));
    expect(error).toBeInstanceOf(SecretsAtRestError);
    expect(error.message).toMatch(/^the stored webhook-secret:sub-1 was encrypted with key id \S{8}, which no configured key matches \(ENCRYPTION_KEY \(key id \S{8}\)\)$/);
    await expect(sealer().open(sealed, BINDING)).rejects.toThrow(/neither ENCRYPTION_KEY nor ENCRYPTION_KEY_PREVIOUS is set/);
  });

  it("refuses to store a secret without ENCRYPTION_KEY, with a 503 naming the setting", async () => {
    const error = await refusal(sealer().seal(SECRET, BINDING));
    expect(error).toBeInstanceOf(SecretsAtRestError);
    expect([error.status, error.code]).toEqual([503, "ServiceUnavailable"]);
    expect(error.message).toContain("ENCRYPTION_KEY is not set");
    expect(error.message).toContain("wrangler secret put ENCRYPTION_KEY");
  });

  it("stores plain text without a key only where allowed (local development)", async () => {
    expect(await sealer(undefined, undefined, true).seal(SECRET, BINDING)).toBe(SECRET);
  });

  it.each([
    ["ENCRYPTION_KEY", sealer("x".repeat(MIN_KEY_CHARS - 1))],
    ["ENCRYPTION_KEY_PREVIOUS", sealer(KEY_A, "short")],
  ])("refuses a %s shorter than 32 characters", async (setting, s) => {
    await expect(s.seal(SECRET, BINDING)).rejects.toThrow(`${setting} is too short: use a random string of at least 32 characters`);
  });
});

function flip(text: string): string {
  const first = text[0] === "A" ? "B" : "A";
  return first + text.slice(1);
}

/** The error a refused call threw (the test fails if it did not throw). */
async function refusal(call: Promise<unknown>): Promise<SecretsAtRestError> {
  return call.then(
    () => expect.unreachable("expected a refusal"),
    (error: unknown) => error as SecretsAtRestError,
  );
}
