/**
 * Reading a watch stream in tests: its NDJSON lines until it ends or has `count`, then the stream
 * is cancelled (the watcher's client goes away).
 */
/**
 * The lines a stream sends until it ends, or "open" when it has not ended after `openMs` (the timer
 * only keeps a failing test from hanging; the stream is then cancelled).
 */
export async function readToEnd(stream: ReadableStream<Uint8Array>, openMs: number): Promise<string[] | "open"> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const result = await Promise.race([reader.read(), new Promise<"open">((resolve) => setTimeout(() => resolve("open"), openMs))]);
    if (result === "open") {
      await reader.cancel().catch(() => {});
      return "open";
    }
    if (result.done) return text.split("\n").filter(Boolean);
    text += decoder.decode(result.value, { stream: true });
  }
}

export async function readLines(stream: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (text.split("\n").length - 1 < count) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel();
  return text.split("\n").filter(Boolean);
}
