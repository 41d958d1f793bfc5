/**
 * Seeded pseudo-random numbers for reproducible demo data, seeding and churn (never Math.random).
 * A 32-bit state advanced by a Weyl increment and mixed with multiply/xor-shift steps: the same
 * seed always yields the same sequence, on every platform.
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  /** `length` characters from Kubernetes' name-suffix alphabet (no vowels, no look-alikes). */
  suffix(length: number): string {
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    let s = "";
    for (let i = 0; i < length; i++) s += alphabet[this.int(alphabet.length)];
    return s;
  }

  hex(length: number): string {
    let s = "";
    for (let i = 0; i < length; i++) s += "0123456789abcdef"[this.int(16)];
    return s;
  }

  /** A UUID-shaped string derived from the sequence (deterministic, unlike the store's uids). */
  uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
  }
}
