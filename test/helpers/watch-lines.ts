/**
 * Reading a watch stream in tests: its NDJSON lines until it ends or has `count`, then the stream
 * is cancelled (the watcher's client goes away).
 */
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
