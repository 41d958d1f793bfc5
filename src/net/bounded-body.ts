/**
 * Reads the start of an upstream body, never more than a bound (issue 17, review A9): an error
 * page, a probe answer or a receiver's reply may be large or endless, and several objects share
 * one isolate's 128 MB. Reading stops at `maxBytes`; the rest is cancelled unread, and the answer
 * says whether the body went on past the bound, so a caller can refuse an oversized one.
 */

export interface BodyStart {
  /** The first bytes (at most `maxBytes`), as UTF-8 text. */
  text: string;
  /** The body went on past `maxBytes` (and was cancelled there): `text` is not all of it. */
  exceeded: boolean;
}

/** The first `maxBytes` of `response`'s body. A body cut short by the network still has its start. */
export async function readBodyStart(response: Response, maxBytes: number): Promise<BodyStart> {
  const { bytes, exceeded } = await readBodyBytes(response, maxBytes);
  return { text: new TextDecoder().decode(bytes), exceeded };
}

/** The first `maxBytes` of `response`'s body as bytes (a binary body: an OpenAPI protobuf). */
export async function readBodyBytes(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array<ArrayBuffer>; exceeded: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(0), exceeded: false };
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
    reader.cancel().catch(() => {});
  }
  return { bytes: joined(chunks, length), exceeded };
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
