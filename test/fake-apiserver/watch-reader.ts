/**
 * Reads a watch response line by line for tests (fetch only; runs in workerd and Node). Keeps what a
 * test needs to tell apart: a parsed event, a line that is not JSON, a clean end of body, a broken
 * connection (with the partial line received), and "nothing arrived in time".
 */

export interface WatchEventJson {
  type: string;
  // `any`: tests inspect arbitrary fields of event objects.
  object: any;
}

export type ReadResult =
  | { kind: "event"; event: WatchEventJson }
  | { kind: "malformed"; line: string }
  | { kind: "end" }
  | { kind: "broken"; partial: string; error: unknown }
  | { kind: "timeout" };

type Chunk = { done: true } | { done: false; value: Uint8Array } | { failed: unknown };

export class WatchReader {
  readonly response: Response;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private buffer = "";
  private pending: Promise<Chunk> | undefined;
  private finished: ReadResult | undefined;

  private constructor(response: Response) {
    this.response = response;
    this.reader = response.body!.getReader();
  }

  /** Opens the watch; rejects with the status and body if the server did not answer 200. */
  static async open(url: string, init?: RequestInit): Promise<WatchReader> {
    const response = await fetch(url, init);
    if (response.status !== 200) {
      throw new Error(`watch answered ${response.status}: ${await response.text()}`);
    }
    return new WatchReader(response);
  }

  async next(timeoutMs = 5_000): Promise<ReadResult> {
    for (;;) {
      const newline = this.buffer.indexOf("\n");
      if (newline !== -1) {
        const line = this.buffer.slice(0, newline);
        this.buffer = this.buffer.slice(newline + 1);
        if (line.trim() === "") continue;
        try {
          return { kind: "event", event: JSON.parse(line) as WatchEventJson };
        } catch {
          return { kind: "malformed", line };
        }
      }
      if (this.finished) return this.finished;
      this.pending ??= this.reader.read().then(
        (r): Chunk => (r.done ? { done: true } : { done: false, value: r.value }),
        (failed: unknown): Chunk => ({ failed }),
      );
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
      const chunk = await Promise.race([this.pending, timeout]);
      clearTimeout(timer);
      if (chunk === "timeout") return { kind: "timeout" };
      this.pending = undefined;
      if ("failed" in chunk) {
        this.finished = { kind: "broken", partial: this.buffer, error: chunk.failed };
        this.buffer = "";
      } else if (chunk.done) {
        this.finished = this.buffer.trim() === "" ? { kind: "end" } : { kind: "broken", partial: this.buffer, error: "unterminated line" };
        this.buffer = "";
      } else {
        this.buffer += this.decoder.decode(chunk.value, { stream: true });
      }
    }
  }

  /** The next `count` events; throws if anything else comes first. */
  async events(count: number, timeoutMs = 5_000): Promise<WatchEventJson[]> {
    const events: WatchEventJson[] = [];
    while (events.length < count) {
      const r = await this.next(timeoutMs);
      if (r.kind !== "event") throw new Error(`expected event #${events.length + 1} of ${count}, got ${JSON.stringify(r)}`);
      events.push(r.event);
    }
    return events;
  }

  /** Reads until the stream ends (or breaks, or goes quiet for `timeoutMs`): events and how it ended. */
  async rest(timeoutMs = 5_000): Promise<{ events: WatchEventJson[]; malformed: string[]; ending: ReadResult }> {
    const events: WatchEventJson[] = [];
    const malformed: string[] = [];
    for (;;) {
      const r = await this.next(timeoutMs);
      if (r.kind === "event") events.push(r.event);
      else if (r.kind === "malformed") malformed.push(r.line);
      else return { events, malformed, ending: r };
    }
  }

  cancel(): void {
    this.reader.cancel().catch(() => {});
  }
}
