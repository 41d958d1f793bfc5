/**
 * Reads the start of an upstream body, never more than a bound (issue 17, review A9): an error
 * page, a probe answer or a receiver's reply may be large or endless, and several objects share
 * one isolate's 128 MB. Reading stops at `maxBytes`; the rest is cancelled unread, and the answer
 * says whether the body went on past the bound, so a caller can refuse an oversized one. With a
 * `deadline`, reading also stops when it aborts (review A9a: a body that trickles would otherwise
 * hold its reader for as long as the server likes), and the answer says so.
 */

export interface BodyStart {
  /** The first bytes (at most `maxBytes`), as UTF-8 text. */
  text: string;
  /** The body went on past `maxBytes` (and was cancelled there): `text` is not all of it. */
  exceeded: boolean;
  /** The deadline aborted before the body ended (it was cancelled there): `text` is what arrived. */
  expired: boolean;
}

/** The first `maxBytes` of `response`'s body, read until `deadline` aborts at most. A body cut short by the network still has its start. */
export async function readBodyStart(response: Response, maxBytes: number, deadline?: AbortSignal): Promise<BodyStart> {
  const { bytes, exceeded, expired } = await readBodyBytes(response, maxBytes, deadline);
  return { text: new TextDecoder().decode(bytes), exceeded, expired };
}

/** The first `maxBytes` of `response`'s body as bytes (a binary body: an OpenAPI protobuf), read until `deadline` aborts at most. */
export async function readBodyBytes(
  response: Response,
  maxBytes: number,
  deadline?: AbortSignal,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; exceeded: boolean; expired: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(0), exceeded: false, expired: false };
  // Cancelling the reader ends a read in progress (as done): what arrived until then is the answer.
  const expire = () => void reader.cancel().catch(() => {});
  if (deadline?.aborted) expire();
  deadline?.addEventListener("abort", expire);
  // Chunks are kept as they come and joined once: a large bound costs nothing for a small body.
  const chunks: Uint8Array[] = [];
  let length = 0;
  let exceeded = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, maxBytes - length);
      chunks.push(part);
      length += part.length;
      if (part.length < value.length) {
        exceeded = true; // stop here: the rest stays unread
        break;
      }
    }
  } catch {
    // a broken body: what arrived is all there is
  } finally {
    deadline?.removeEventListener("abort", expire);
    reader.cancel().catch(() => {});
  }
  return { bytes: joined(chunks, length), exceeded, expired: !exceeded && deadline?.aborted === true };
}

/** `chunks` as one array of `length` bytes (their total). */
export function joined(chunks: readonly Uint8Array[], length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
