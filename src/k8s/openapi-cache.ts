/**
 * This isolate's copies of the `/k8s` OpenAPI documents (k8s/openapi.ts), one per key (cluster,
 * document, media type), kept in memory because the Cache API keeps nothing on workers.dev or
 * behind Access (review N6): so readers cost the cluster's API server, and the factory through
 * which it is read, about one request per document per isolate per DOCUMENT_TTL_MS.
 *
 * Guarantees:
 * - A document stands DOCUMENT_TTL_MS; a 404 (the upstream has no such document) NOT_FOUND_TTL_MS;
 *   any other failure is not kept: it answers only the requests that waited on that one read.
 * - Concurrent misses of one key share one read (single flight). A flight is a promise shared by
 *   requests, and a Worker may cancel the request it runs in (review B4): every request waits on it
 *   at most until FLIGHT_DEADLINE_MS after it began, then it is abandoned and the next miss reads
 *   again, so a flight that never ends holds neither its key nor its bytes.
 * - Memory: the documents kept plus the bytes being read by flights not abandoned stay within
 *   ISOLATE_BYTES (an isolate has 128 MB, shared with everything else it runs). A read that needs
 *   room evicts the least recently used documents; when reads in flight hold the room, it fails
 *   (503: retry) rather than grow. A document is read whole before anything is served from it, and
 *   a body that errors fails the read (never a truncated document); past MAX_OPENAPI_BYTES it is
 *   refused.
 */
import { MAX_OPENAPI_BYTES, OPENAPI_TIMEOUT_MS } from "../clusters/upstream-openapi.ts";
import { errorText } from "../log.ts";
import { joined } from "../net/bounded-body.ts";

/** How long a document stands: a CRD change shows up within this. */
export const DOCUMENT_TTL_MS = 600_000;
/** How long "the upstream has no such document" stands. */
export const NOT_FOUND_TTL_MS = 60_000;
/**
 * How long requests wait on one read (45 s): the upstream's head and body timeouts
 * (clusters/upstream-openapi.ts) and the factory call around them.
 */
export const FLIGHT_DEADLINE_MS = 2 * OPENAPI_TIMEOUT_MS + 5_000;
/**
 * Bytes this isolate holds for OpenAPI: documents kept and documents being read. Above the largest
 * document accepted (MAX_OPENAPI_BYTES), so one always fits; a quarter of the isolate.
 */
export const ISOLATE_BYTES = 32 * 1024 * 1024;
/** What a kept 404 counts for besides its message. */
const NOT_FOUND_BYTES = 256;

/** A document, or why there is none: 404 (no such document), 502/503 (it could not be read now). */
export type OpenApiDocument =
  | { ok: true; contentType: string; body: Uint8Array<ArrayBuffer> }
  | { ok: false; status: number; message: string };

/** What a flight's loader answers: a body to read (and what to do with it once read), or why not. */
export type OpenApiSource =
  | { ok: true; contentType: string; body: ReadableStream<Uint8Array>; read?: (bytes: Uint8Array<ArrayBuffer>) => Promise<void> }
  | { ok: false; status: number; message: string };

interface Kept {
  until: number;
  bytes: number;
  value: OpenApiDocument;
}

interface Flight {
  started: number;
  /** Bytes read so far (counted against ISOLATE_BYTES while the flight is not abandoned). */
  read: number;
  done: Promise<OpenApiDocument>;
}

export class OpenApiCache {
  readonly #now: () => number;
  readonly #isolateBytes: number;
  /** Least recently used first (a Map keeps insertion order; a hit moves its key last). */
  readonly #kept = new Map<string, Kept>();
  #keptBytes = 0;
  readonly #flights = new Map<string, Flight>();

  constructor(options: { now?: () => number; isolateBytes?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#isolateBytes = options.isolateBytes ?? ISOLATE_BYTES;
  }

  /** The document at `key`: kept, being read, or read now through `load`. */
  async get(key: string, load: () => Promise<OpenApiSource>): Promise<OpenApiDocument> {
    const now = this.#now();
    const kept = this.#kept.get(key);
    if (kept && kept.until > now) {
      this.#kept.delete(key);
      this.#kept.set(key, kept);
      return kept.value;
    }
    if (kept) this.#drop(key);
    let flight = this.#flights.get(key);
    if (!flight || this.#abandoned(flight, now)) flight = this.#fly(key, load, now);
    return this.#waitOn(key, flight);
  }

  /** Bytes held: documents kept, and reads in flight. */
  get bytes(): number {
    return this.#keptBytes + this.#inFlight(this.#now());
  }

  #fly(key: string, load: () => Promise<OpenApiSource>, now: number): Flight {
    const flight: Flight = { started: now, read: 0, done: Promise.resolve(undefined as never) };
    const read = this.#load(flight, load).catch((error: unknown) => unavailable(errorText(error)));
    flight.done = read.then((value) => {
      if (this.#flights.get(key) === flight) this.#flights.delete(key);
      flight.read = 0;
      this.#keep(key, value);
      return value;
    });
    this.#flights.set(key, flight);
    return flight;
  }

  /** `flight`'s answer, or a 503 once it is abandoned (its request may have been cancelled). */
  async #waitOn(key: string, flight: Flight): Promise<OpenApiDocument> {
    let timer!: ReturnType<typeof setTimeout>;
    const abandoned = new Promise<OpenApiDocument>((resolve) => {
      timer = setTimeout(() => {
        if (this.#flights.get(key) === flight) this.#flights.delete(key);
        resolve(unavailable(`no answer within ${FLIGHT_DEADLINE_MS / 1000} s`));
      }, Math.max(0, flight.started + FLIGHT_DEADLINE_MS - this.#now()));
    });
    try {
      return await Promise.race([flight.done, abandoned]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #load(flight: Flight, load: () => Promise<OpenApiSource>): Promise<OpenApiDocument> {
    let source: OpenApiSource;
    try {
      source = await load();
    } catch (error) {
      return unavailable(errorText(error));
    }
    if (!source.ok) return source;
    const reader = source.body.getReader();
    const chunks: Uint8Array[] = [];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (flight.read + value.byteLength > MAX_OPENAPI_BYTES) return { ok: false, status: 502, message: `the document is larger than ${MiB(MAX_OPENAPI_BYTES)} (refused, not read)` };
        if (!this.#makeRoom(value.byteLength)) return unavailable(`documents being read in this isolate hold its ${MiB(this.#isolateBytes)} for OpenAPI`);
        chunks.push(value);
        flight.read += value.byteLength;
        if (this.#abandoned(flight, this.#now())) return unavailable(`no answer within ${FLIGHT_DEADLINE_MS / 1000} s`);
      }
    } catch (error) {
      return unavailable(`its body broke off: ${errorText(error)}`);
    } finally {
      reader.cancel().catch(() => {});
    }
    const body = joined(chunks, flight.read);
    await source.read?.(body).catch(() => {}); // a second level (the Cache API) is a help, never a failure
    return { ok: true, contentType: source.contentType, body };
  }

  /** Keeps a document or a 404, making room by evicting older ones; the rest is not kept. */
  #keep(key: string, value: OpenApiDocument): void {
    if (!value.ok && value.status !== 404) return;
    const bytes = value.ok ? value.body.byteLength : NOT_FOUND_BYTES + value.message.length;
    if (!this.#makeRoom(bytes)) return;
    this.#drop(key);
    this.#kept.set(key, { until: this.#now() + (value.ok ? DOCUMENT_TTL_MS : NOT_FOUND_TTL_MS), bytes, value });
    this.#keptBytes += bytes;
  }

  /** Whether `bytes` more fit within ISOLATE_BYTES, evicting the least recently used documents for them. */
  #makeRoom(bytes: number): boolean {
    const inFlight = this.#inFlight(this.#now());
    if (inFlight + bytes > this.#isolateBytes) return false;
    for (const key of this.#kept.keys()) {
      if (this.#keptBytes + inFlight + bytes <= this.#isolateBytes) break;
      this.#drop(key);
    }
    return true;
  }

  #drop(key: string): void {
    const kept = this.#kept.get(key);
    if (!kept) return;
    this.#kept.delete(key);
    this.#keptBytes -= kept.bytes;
  }

  #inFlight(now: number): number {
    let bytes = 0;
    for (const flight of this.#flights.values()) if (!this.#abandoned(flight, now)) bytes += flight.read;
    return bytes;
  }

  #abandoned(flight: Flight, now: number): boolean {
    return now - flight.started >= FLIGHT_DEADLINE_MS;
  }
}

function unavailable(why: string): OpenApiDocument {
  return { ok: false, status: 503, message: why };
}

const MiB = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/** This isolate's documents, shared by every `/k8s` OpenAPI request it serves. */
export const openApiDocuments = new OpenApiCache();
