// A Queue consumer Worker, as a user would deploy next to edge-informer: miniflare runs it beside
// the Worker under test (vitest.config.ts `miniflare.workers`), consuming the queue the test
// Worker's EVENTS producer binding sends to. It records every message it receives, in the order
// it receives them, in a Durable Object; the tests read them back through the QUEUE_CONSUMER
// service binding: GET /received?subscription=<id> answers `[{id, attempts, body}]`, oldest first.
// Plain JavaScript: miniflare loads auxiliary Workers as they are, untranspiled.
import { DurableObject } from "cloudflare:workers";

export class ReceivedMessages extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS received (n INTEGER PRIMARY KEY AUTOINCREMENT, subscription TEXT, id TEXT, attempts INTEGER, body TEXT)",
    );
  }

  record(messages) {
    for (const m of messages) {
      this.ctx.storage.sql.exec(
        "INSERT INTO received (subscription, id, attempts, body) VALUES (?, ?, ?, ?)",
        m.body?.subscription ?? null,
        m.id,
        m.attempts,
        JSON.stringify(m.body),
      );
    }
  }

  list(subscription) {
    return this.ctx.storage.sql
      .exec("SELECT id, attempts, body FROM received WHERE subscription = ? ORDER BY n", subscription)
      .toArray()
      .map((row) => ({ id: row.id, attempts: row.attempts, body: JSON.parse(row.body) }));
  }
}

const log = (env) => env.RECEIVED.get(env.RECEIVED.idFromName("all"));

export default {
  async queue(batch, env) {
    await log(env).record(batch.messages.map((m) => ({ id: m.id, attempts: m.attempts, body: m.body })));
    batch.ackAll();
  },
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== "/received") return new Response("not found", { status: 404 });
    return Response.json(await log(env).list(url.searchParams.get("subscription") ?? ""));
  },
};
