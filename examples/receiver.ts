/**
 * A tiny edge-informer webhook receiver: it verifies each delivery, drops duplicates and events
 * older than what it holds, and keeps a mirror of the subscribed objects in memory
 * (receiver-mirror.ts). State is keyed on the signed body's `cluster`, never on the
 * `x-edge-informer-cluster` header, which the signature does not cover.
 *
 *   WEBHOOK_SECRET=whsec_... PORT=3000 npx node examples/receiver.ts     (signing: hmac)
 *   WEBHOOK_SECRET=whpk_... PORT=3000 npx node examples/receiver.ts      (signing: ed25519: the public key)
 *
 * Any body format is read (edge-informer JSON, CloudEvents binary or structured): verifyWebhook
 * returns the same events.
 *
 * Node ≥ 22.18 runs this TypeScript file directly (type stripping). See examples/README.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { verifyWebhook, type WebhookEvent, WebhookVerificationError } from "../src/client/index.ts";
import { ReceiverMirror } from "./receiver-mirror.ts";

const secret = process.env.WEBHOOK_SECRET ?? "";
const port = Number(process.env.PORT ?? 3000);
if (!secret.startsWith("whsec_") && !secret.startsWith("whpk_")) {
  console.error(
    "set WEBHOOK_SECRET to the subscription's secret (whsec_..., shown once when it was created) " +
      "or, for signing: ed25519, its public key (whpk_..., GET /subscriptions/{id}/signing-key)",
  );
  process.exit(1);
}

const mirror = new ReceiverMirror();

/** Batches are at most 100 events; Kubernetes objects at most ~1.5 MB each. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

function logApplied(event: WebhookEvent): void {
  const flags = [event.initialList && "initial-list", event.finalStateUnknown && "final-state-unknown"].filter(Boolean);
  console.log(
    `${new Date().toISOString()} #${event.sequence} ${event.type} ${event.informer} ${event.key} rv=${event.resourceVersion}` +
      `${flags.length > 0 ? ` (${flags.join(", ")})` : ""} → ${mirror.objects(event).size} objects`,
  );
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function reply(response: ServerResponse, status: number, message?: string): void {
  response.writeHead(status, message === undefined ? {} : { "content-type": "text/plain; charset=utf-8" });
  response.end(message);
}

async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== "POST") return reply(response, 405, "POST webhook deliveries here\n");
  const body = await readBody(request);
  if (body === undefined) return reply(response, 413, "body too large\n");
  let events: WebhookEvent[];
  try {
    events = await verifyWebhook(secret, body, request.headers); // the raw text: re-serialized JSON would not verify
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      console.warn(`${new Date().toISOString()} rejected a delivery: ${error.message}`);
      return reply(response, 401, "bad signature\n");
    }
    console.error(error);
    return reply(response, 500);
  }
  for (const event of events) {
    const outcome = mirror.receive(event);
    if (outcome === "applied") logApplied(event);
    else if (outcome === "duplicate") console.log(`${new Date().toISOString()} #${event.sequence} duplicate ${event.id}, skipped`);
    else console.log(`${new Date().toISOString()} #${event.sequence} ${event.key} rv=${event.resourceVersion} is older than the state held, skipped`);
  }
  reply(response, 204); // any 2xx acknowledges; anything else is retried
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => {
    console.error(error);
    if (response.headersSent) response.destroy();
    else reply(response, 500);
  });
});

server.listen(port, () => console.log(`receiving edge-informer webhooks on http://localhost:${port}/`));
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => server.close(() => process.exit(0)));
