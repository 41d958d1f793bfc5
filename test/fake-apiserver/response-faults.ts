/**
 * Whole-response faults (types.ts `RedirectFault`, `OversizedBodyFault`): answers that replace a
 * list, a watch or a /version probe entirely, as a proxy or hostile server in front of an API server
 * would send them. An oversized body is streamed in chunks with back-pressure and stops as soon as
 * the client goes away, so a test may ask for far more bytes than any client should read.
 */
import type { ServerResponse } from "node:http";
import { ChunkedWriter } from "./http.ts";
import type { OversizedBodyFault, ResponseFault } from "./types.ts";

const PAD_CHUNK = "x".repeat(64 * 1024);

/** The JSON text around the padding: the padding is the one string value that makes the body long. */
function envelope(fault: OversizedBodyFault): [string, string] {
  if (fault.code !== undefined && fault.code !== 200) {
    return [`{"kind":"Status","apiVersion":"v1","status":"Failure","code":${fault.code},"message":"`, '"}'];
  }
  switch (fault.on) {
    case "watch":
      return ['{"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"huge","resourceVersion":"1"},"padding":"', '"}}\n'];
    case "list":
      return ['{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"huge"},"padding":"', '"}]}'];
    case "version":
      return ['{"gitVersion":"v1.34.0-fake","padding":"', '"}'];
  }
}

async function sendOversized(res: ServerResponse, fault: OversizedBodyFault): Promise<void> {
  res.writeHead(fault.code ?? 200, { "content-type": "application/json", "cache-control": "no-cache, private" });
  const [head, tail] = envelope(fault);
  const writer = new ChunkedWriter(res);
  await writer.write(head);
  for (let left = fault.bytes; left > 0 && !writer.gone; left -= PAD_CHUNK.length) {
    await writer.write(left >= PAD_CHUNK.length ? PAD_CHUNK : PAD_CHUNK.slice(0, left));
  }
  if (writer.gone) return;
  await writer.write(tail);
  await writer.end();
}

export async function serveResponseFault(res: ServerResponse, fault: ResponseFault): Promise<void> {
  if (fault.kind === "redirect") {
    res.writeHead(fault.code ?? 302, { location: fault.location, "content-type": "text/plain" });
    res.end(`redirecting to ${fault.location}\n`);
    return;
  }
  await sendOversized(res, fault);
}
