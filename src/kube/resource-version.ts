/**
 * Comparing resourceVersions where the API semantics demand it (a list "not older than" N). They are
 * opaque strings that happen to be decimal integers in every current API server: compare by length,
 * then text, never as JS numbers (they exceed 2^53; reference §1.7.2).
 */
export function compareResourceVersions(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
