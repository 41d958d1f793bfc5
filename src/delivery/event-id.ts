/**
 * Event ids that stay the same across retries, restarts and re-reads of the log, so a receiver can
 * deduplicate (DESIGN invariant 4): derived from what identifies the change — informer, object key,
 * uid, resourceVersion and event type — never from delivery state.
 */

export interface EventIdentity {
  informer: string;
  key: string;
  uid: string;
  resourceVersion: string;
  type: string;
}

/** `evt_` + the first 128 bits of SHA-256 over the identity, base64url. */
export async function eventId(identity: EventIdentity): Promise<string> {
  const text = JSON.stringify([identity.informer, identity.key, identity.uid, identity.resourceVersion, identity.type]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  const base64 = btoa(String.fromCharCode(...digest.subarray(0, 16)));
  return `evt_${base64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}
