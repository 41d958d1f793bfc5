/**
 * A `/k8s` watch body as its client receives it (issue 27 item 4, review N5): whatever happens to the
 * stream it is read from — the relay or informer object serving it restarted (a deploy, an eviction,
 * a crash), an RPC broke — it ends with a normal end of body.
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
 * - The body ends normally whatever its source does, and when `stop` aborts (the source is then
 *   cancelled); `ended` hears why the pipe stopped early (the source's error, the client having gone
 *   away, the stop).
 * - It is the runtime's own pipe (IdentityTransformStream), no JavaScript per chunk: a JavaScript
 *   stream here, reading whole lines, cost watch delivery 20 µs of CPU per delivered event at 100
 *   watchers (26 → 46) and an 18-fold latency (`npm run bench -- --only k8s`, BENCHMARKS.md).
 *   So bytes pass as they come: the hub writes whole frames, one or more a chunk, and an RPC stream
 *   breaks between chunks; a chunk that came cut would reach the client cut, which client-go takes
 *   as io.ErrUnexpectedEOF, a normal end, resuming from the last event it decoded whole.
 * - Backpressure passes through (a chunk or so of read-ahead), so the hub's queue, which closes
 *   unresponsive clients (watch-queues.ts), sees the client's pace.
 * - A client that goes away cancels the source when the pipe next writes: the relay's or the
 *   informer's watcher ends at its next frame (a change, a bookmark) or its deadline, as the
 *   platform tells an RPC stream's sender of a cancel no sooner.
 */

/** What else ends a watch body, and who hears that it ended. */
export interface BodyEnds {
  /** Hears why the pipe stopped early: the source's error, the client having gone away, or `stop`'s reason. */
  ended?: (error: unknown) => void;
  /** Ends the body normally when aborted (a revoked watch: watch-revocation.ts), cancelling the source. */
  stop?: AbortSignal;
  /** Called once the pipe has stopped, for any reason. */
  settled?: () => void;
}

/** `source` as a watch body that ends normally, whatever `source` does. */
export function endingCleanly(source: ReadableStream<Uint8Array>, ends: BodyEnds | ((error: unknown) => void) = {}): ReadableStream<Uint8Array> {
  const { ended = () => {}, stop, settled = () => {} } = typeof ends === "function" ? { ended: ends } : ends;
  const { readable, writable } = new IdentityTransformStream();
  source
    .pipeTo(writable, { preventAbort: true, ...(stop ? { signal: stop } : {}) })
    .catch(async (error: unknown) => {
      ended(error);
      await writable.close().catch(() => {}); // already errored when the client went away
    })
    .finally(settled);
  return readable;
}
