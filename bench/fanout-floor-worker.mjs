// The fan-out floor probe's Worker (bench/fanout-floor.mjs): what one delivery costs in workerd with
// nothing of ours around it. A Durable Object POSTs a fixed body to a loopback receiver `n` times in
// a row, and reads the answer as our sender does (a 2xx body is cancelled unread). Modes:
//   fetch           the POST alone, unsigned
//   sign            Standard Webhooks headers, HMAC-SHA256 by WebCrypto with a key imported once
//   sign-lib        the same headers signed by `standardwebhooks` (new Webhook(secret).sign per call)
//   sign-only       WebCrypto signing, no POST
//   sign-sql        sign + POST + one UPDATE of a cursor row (the least a durable cursor needs)
//   sign-sql6       sign + POST + six small statements in one transaction (statement cost vs commit cost)
//   sign-sql-log    sign + POST + one INSERT … RETURNING into an AUTOINCREMENT table (as our delivery log)
//   sign-sql-body   sign + POST + the body written to a row and the previous one deleted (as our outbox)
//   sign-window     sign + POST, and before every 32nd one transaction: the cursor row and the next 32
//                   bodies in one row (as our delivery windows: the floor of a durable, signed delivery
//                   whose body is stored before it is sent, at one commit per window)
import { DurableObject } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";

const SECRET = "whsec_" + btoa("0123456789abcdefghijklmn");
const encoder = new TextEncoder();

function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
  return btoa(s);
}

export class Probe extends DurableObject {
  #key;

  async run(mode, url, n, bodyBytes, start) {
    if (mode.startsWith("sign-sql") || mode === "sign-window") {
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS cursor (id INTEGER PRIMARY KEY, v INTEGER)");
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS log (n INTEGER PRIMARY KEY AUTOINCREMENT, v INTEGER, s TEXT)");
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS box (id INTEGER PRIMARY KEY, body TEXT)");
    }
    this.#key ??= await crypto.subtle.importKey(
      "raw",
      Uint8Array.from(atob(SECRET.slice(6)), (c) => c.charCodeAt(0)),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const filler = "x".repeat(Math.max(0, bodyBytes - 60));
    let failed = 0;
    for (let i = 0; i < n; i++) {
      const id = `evt_${start + i}`;
      const body = `{"id":"${id}","object":"${filler}","sequence":${start + i}}`;
      const ts = String(Math.floor(Date.now() / 1000));
      let signature = null;
      if (mode === "sign-window" && i % 32 === 0) {
        const bodies = Array.from({ length: 32 }, (_, j) => `{"id":"evt_${start + i + j}","object":"${filler}","sequence":${start + i + j}}`);
        this.ctx.storage.transactionSync(() => {
          this.ctx.storage.sql.exec("INSERT OR REPLACE INTO cursor (id, v) VALUES (1, ?)", start + i);
          this.ctx.storage.sql.exec("INSERT OR REPLACE INTO box (id, body) VALUES (1, ?)", bodies.join(""));
        });
      }
      if (mode === "sign" || mode === "sign-only" || mode.startsWith("sign-sql") || mode === "sign-window") {
        const mac = await crypto.subtle.sign("HMAC", this.#key, encoder.encode(`${id}.${ts}.${body}`));
        signature = `v1,${base64(new Uint8Array(mac))}`;
      } else if (mode === "sign-lib") {
        signature = new Webhook(SECRET).sign(id, new Date(Number(ts) * 1000), body);
      }
      if (mode === "sign-only") continue;
      const headers = { "content-type": "application/json", "webhook-id": id, "user-agent": "probe" };
      if (signature) Object.assign(headers, { "webhook-timestamp": ts, "webhook-signature": signature });
      const response = await fetch(url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(15_000) });
      if (response.status >= 200 && response.status < 300) await response.body?.cancel();
      else {
        failed++;
        await response.text();
      }
      if (mode.startsWith("sign-sql")) this.ctx.storage.sql.exec("INSERT OR REPLACE INTO cursor (id, v) VALUES (1, ?)", start + i);
    }
    return failed;
  }
}

export default {
  async fetch(request, env) {
    const u = new URL(request.url);
    if (u.pathname === "/healthz") return new Response("ok");
    if (u.pathname !== "/run") return new Response("not found", { status: 404 });
    const mode = u.searchParams.get("mode");
    const objects = Number(u.searchParams.get("objects"));
    const n = Number(u.searchParams.get("n"));
    const bytes = Number(u.searchParams.get("bytes"));
    const target = u.searchParams.get("url");
    const started = Date.now();
    const failed = await Promise.all(
      Array.from({ length: objects }, (_, i) => env.PROBE.getByName(`p${i}`).run(mode, `${target}/s/${i}`, n, bytes, i * n)),
    );
    return Response.json({ ms: Date.now() - started, failed: failed.reduce((a, b) => a + b, 0) });
  },
};
