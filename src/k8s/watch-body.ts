/**
 * A `/k8s` watch body as its client receives it (issue 27 item 4, review N5): whatever happens to the
 * stream it is read from — the relay or informer object serving it restarted (a deploy, an eviction,
 * a crash), an RPC broke — it ends with a normal end of body, and only ever at a line boundary.
 *
 * Why: client-go's StreamWatcher takes EOF (and io.ErrUnexpectedEOF, net.IsProbableEOF) as the end of
 * a watch, and its reflector re-watches from the last resourceVersion it decoded; any other read
 * error — over HTTP/2, the "stream error: … INTERNAL_ERROR" of a reset stream, which is what a Worker
 * response whose body errors becomes — is an ERROR 500, and the reflector relists. A source that
 * breaks off is, to the client, an API server going away, whose streams just end (no ERROR event:
 * kubernetes-api-server-facts.md §4 timeoutSeconds, §6 slow watchers); so this one ends. The watch
 * hub (watch-hub.ts) makes any prefix of a stream resumable from its last resourceVersion, so ending
 * there loses nothing. Where the API server does send an ERROR event (410 Expired, a 500 from a
 * failing watcher), the hub writes it, then ends the stream normally.
 *
 * Guarantees:
 * - The body ends normally whatever its source does; `broke` hears the source's error.
 * - Only whole lines leave: bytes after a chunk's last newline wait for the rest of their line, and a
 *   line the source never finished is dropped. A client thus never decodes half an event (client-go
 *   would take it as io.ErrUnexpectedEOF, a normal end; clients that split on "\n" and parse each
 *   part, as the Python client does, would fail), and the resourceVersion it resumes from is that of
 *   an event it received whole.
 * - Backpressure passes through: the source is read at most READ_AHEAD_BYTES ahead of the client,
 *   so the hub's queue, which closes unresponsive clients (watch-queues.ts), sees the client's pace.
 * - A client that goes away cancels the source (reader.cancel): the relay's or the informer's
 *   watcher ends — at its next write at the latest, as the platform tells an RPC stream's sender of
 *   a cancel no sooner.
 * - Cost (issue 28 measures watch delivery): one await per source chunk, no per-line work. A chunk
 *   that ends with a newline (the hub writes whole frames) passes as it is; only a chunk cut
 *   mid-line is searched for its last newline (natively), and only its unfinished tail is copied.
 */

const NEWLINE = 0x0a;
/** What the body may read ahead of its client: a few frames, small beside the hub's queue bound. */
export const READ_AHEAD_BYTES = 64 * 1024;

/** `source` as a watch body that ends normally, at a line boundary, whatever `source` does. */
export function endingCleanly(source: ReadableStream<Uint8Array>, broke: (error: unknown) => void = () => {}): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  /** The pieces of the line not yet ended, oldest first: sent once its newline comes. */
  let unfinished: Uint8Array[] = [];
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          let read: ReadableStreamReadResult<Uint8Array>;
          try {
            read = await reader.read();
          } catch (error) {
            unfinished = [];
            controller.close();
            broke(error);
            return;
          }
          if (read.done) {
            unfinished = []; // only whole events leave, at any end
            controller.close();
            return;
          }
          const chunk = read.value;
          const last = chunk.length > 0 && chunk[chunk.length - 1] === NEWLINE ? chunk.length - 1 : chunk.lastIndexOf(NEWLINE);
          if (last < 0) {
            if (chunk.length > 0) unfinished.push(chunk);
            continue; // no line ended: the client's read still waits
          }
          for (const piece of unfinished) controller.enqueue(piece);
          unfinished = [];
          if (last === chunk.length - 1) controller.enqueue(chunk);
          else {
            // A copy: the sent part's buffer may be handed on (and detached) while the tail waits.
            unfinished.push(chunk.slice(last + 1));
            controller.enqueue(chunk.subarray(0, last + 1));
          }
          return;
        }
      },
      cancel(reason) {
        unfinished = [];
        return reader.cancel(reason);
      },
    },
    // Read ahead up to READ_AHEAD_BYTES: in lockstep with the client's reads (highWaterMark 0) each
    // chunk crossed the RPC stream alone, waiting on the write before it, and watch delivery cost
    // 4× the CPU (122 µs an event against 28 at 100 watchers, `npm run bench -- --only k8s`).
    new ByteLengthQueuingStrategy({ highWaterMark: READ_AHEAD_BYTES }),
  );
}
