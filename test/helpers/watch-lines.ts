/**
 * Reading a watch stream in tests: its NDJSON lines until it ends or has `count` (then the stream is
 * cancelled: the watcher's client goes away), and how it ended (WatchBody).
 */
/**
 * The lines a stream sends until it ends normally; "open" when it has not ended after `openMs` (the
 * timer only keeps a failing test from hanging; the stream is then cancelled), "broken" when a read
 * rejected (a body that broke off: WatchBody).
 */
export async function readToEnd(stream: ReadableStream<Uint8Array>, openMs: number): Promise<string[] | "open" | "broken"> {
  const body = new WatchBody(stream);
  const end = await body.toEnd(openMs);
  if (end === "open") await body.cancel();
  return end === "done" ? body.lines : end;
}

export async function readLines(stream: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let lines = 0;
  // Newlines counted per chunk, not over the whole text (a large text would be split again each read).
  while (lines < count) {
    const chunk = await reader.read();
    if (chunk.done) break;
    const piece = decoder.decode(chunk.value, { stream: true });
    for (let i = piece.indexOf("\n"); i !== -1; i = piece.indexOf("\n", i + 1)) lines++;
    text += piece;
  }
  await reader.cancel();
  return text.split("\n").filter(Boolean);
}

/**
 * A watch body read as a client reads it (issue 27 item 4): whole lines as they arrive, the bytes of a
 * line not yet ended, and how the body ended — `done` (a normal end of body, which client-go takes
 * as "re-watch from the last resourceVersion") or `broken` (a read rejected: over HTTP/2 a reset
 * stream, which client-go turns into an ERROR 500 and a relist).
 */
export class WatchBody {
  readonly lines: string[] = [];
  /** Bytes after the last newline: a line the body has not finished (yet, or ever). */
  partial = "";
  ended: "done" | "broken" | undefined;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #pending: Promise<ReadableStreamReadResult<Uint8Array> | { broken: unknown }> | undefined;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The events of the whole lines so far. */
  get events(): { type: string; object: any }[] {
    return this.lines.map((line) => JSON.parse(line));
  }

  /** The resourceVersion of the last event received: where its client resumes. */
  get lastResourceVersion(): string | undefined {
    return this.events.at(-1)?.object?.metadata?.resourceVersion;
  }

  /**
   * Reads until `count` lines in all have arrived or the body ended; "open" when neither happened
   * within `openMs` (the timer only keeps a failing test from hanging).
   */
  async until(count: number, openMs = 10_000): Promise<"open" | undefined> {
    const deadline = Date.now() + openMs;
    while (this.lines.length < count && this.ended === undefined) {
      let timer!: ReturnType<typeof setTimeout>;
      const late = new Promise<"open">((resolve) => (timer = setTimeout(() => resolve("open"), Math.max(1, deadline - Date.now()))));
      // A read still pending after "open" is kept for the next call: its chunk must not be lost.
      this.#pending ??= this.#reader.read().then(
        (result) => result,
        (error: unknown) => ({ broken: error }),
      );
      const result = await Promise.race([this.#pending, late]).finally(() => clearTimeout(timer));
      if (result === "open") return "open";
      this.#pending = undefined;
      if ("broken" in result) this.ended = "broken";
      else if (result.done) this.ended = "done";
      else this.#take(this.#decoder.decode(result.value, { stream: true }));
    }
    return undefined;
  }

  /** Reads to the end of the body: how it ended, or "open" after `openMs`. */
  async toEnd(openMs = 10_000): Promise<"done" | "broken" | "open"> {
    return (await this.until(Number.POSITIVE_INFINITY, openMs)) ?? this.ended!;
  }

  /** The client goes away. */
  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }

  #take(text: string): void {
    // A large line comes in many reads: it is split once, when its newline arrives.
    if (!text.includes("\n")) return void (this.partial += text);
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop()!;
    this.lines.push(...parts.filter((line) => line !== ""));
  }
}
