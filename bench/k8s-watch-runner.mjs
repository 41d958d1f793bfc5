#!/usr/bin/env node
// The watchers of the /k8s fan-out benchmark (bench/k8s.mjs starts it, one process, over IPC): W
// concurrent Kubernetes watches (`?watch=true&resourceVersion=RV`) on one URL, read with node:http.
// Every event line is recorded by its resourceVersion: arrival[w * span + (rv − startRv − 1)] = when
// watcher w received it (epoch ms, comparable across processes). The object's resourceVersion is
// found without parsing the ~3 KB line (the first `"resourceVersion":"` in it, which is the
// object's metadata.resourceVersion); every 64th line is parsed whole to check that shortcut.
//
// IPC: parent → {cmd: "start", url, watchers, startRv, span, headers?, headersList?}; runner → {ready, opened: [...]}
//      (headersList: watcher i also sends headersList[i % headersList.length], e.g. its credential)
//      parent → {cmd: "wait", lastRv, timeoutMs}; runner → {progress} every 5 s, then {done, stats}
//      parent → {cmd: "dump", file}: the arrivals are written to `file` (Float64 little-endian), {dumped}
import fs from "node:fs";
import http from "node:http";

const now = () => performance.timeOrigin + performance.now();
const RV_KEY = Buffer.from('"resourceVersion":"');
const TYPE_PREFIX = Buffer.from('{"type":"');

let config;
let arrival;
const watchers = [];

class Watcher {
  constructor(i) {
    this.i = i;
    this.status = 0;
    this.openedMs = null;
    this.events = 0;
    this.bytes = 0;
    this.lastRv = config.startRv;
    this.outOfOrder = 0;
    this.duplicates = 0;
    this.outOfRange = 0;
    this.unparsed = 0;
    this.checked = 0;
    this.checkMismatches = 0;
    this.types = { ADDED: 0, MODIFIED: 0, DELETED: 0, BOOKMARK: 0, ERROR: 0, other: 0 };
    this.errorEvents = [];
    this.ended = null; // why the stream ended, if it did
    this.endedAt = null;
    this.lastEventAt = null; // when the last line arrived (epoch ms)
    this.pending = null; // bytes of an incomplete line
  }

  open() {
    const t0 = now();
    const url = new URL(config.url);
    url.searchParams.set("watch", "true");
    url.searchParams.set("resourceVersion", String(config.startRv));
    url.searchParams.set("timeoutSeconds", String(config.timeoutSeconds ?? 900));
    return new Promise((resolve) => {
      const own = config.headersList?.length ? config.headersList[this.i % config.headersList.length] : {};
      const req = http.get(url, { agent: false, headers: { accept: "application/json", ...(config.headers ?? {}), ...own } }, (res) => {
        this.status = res.statusCode;
        this.openedMs = now() - t0;
        resolve();
        res.on("data", (chunk) => this.onData(chunk, now()));
        res.on("end", () => this.end("the server ended the stream"));
        res.on("error", (error) => this.end(`error: ${error.message}`));
      });
      req.on("error", (error) => {
        this.end(`request error: ${error.message}`);
        resolve();
      });
      this.req = req;
    });
  }

  /** Why and when (epoch ms) the stream ended, the first time it does. */
  end(why) {
    if (this.ended) return;
    this.ended = why;
    this.endedAt = now();
  }

  onData(chunk, t) {
    this.bytes += chunk.length;
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      if (nl > start) this.onLine(buf, start, nl, t);
      start = nl + 1;
    }
    if (start < buf.length) this.pending = buf.subarray(start);
  }

  onLine(buf, start, end, t) {
    this.events++;
    this.lastEventAt = t;
    let type = "other";
    if (buf.compare(TYPE_PREFIX, 0, TYPE_PREFIX.length, start, start + TYPE_PREFIX.length) === 0) {
      const from = start + TYPE_PREFIX.length;
      const to = buf.indexOf(34, from);
      if (to !== -1 && to < end) type = buf.toString("latin1", from, to);
    }
    if (!(type in this.types)) type = "other";
    this.types[type]++;
    if (type === "ERROR" || type === "other") {
      if (this.errorEvents.length < 3) this.errorEvents.push(buf.toString("utf8", start, Math.min(end, start + 600)));
      return;
    }
    if (type === "BOOKMARK") return;
    const k = buf.indexOf(RV_KEY, start);
    if (k === -1 || k >= end) {
      this.unparsed++;
      return;
    }
    const q = buf.indexOf(34, k + RV_KEY.length);
    const rvText = buf.toString("latin1", k + RV_KEY.length, q);
    const rv = Number(rvText);
    if (this.events % 64 === 1) {
      this.checked++;
      try {
        const parsed = JSON.parse(buf.toString("utf8", start, end));
        if (parsed.type !== type || parsed.object?.metadata?.resourceVersion !== rvText) this.checkMismatches++;
      } catch {
        this.checkMismatches++;
      }
    }
    const j = rv - config.startRv - 1;
    if (!(j >= 0 && j < config.span)) {
      this.outOfRange++;
      return;
    }
    const slot = this.i * config.span + j;
    if (arrival[slot] !== 0) {
      this.duplicates++;
      return;
    }
    arrival[slot] = t;
    if (rv <= this.lastRv) this.outOfOrder++;
    else this.lastRv = rv;
  }

  stats() {
    const { req: _req, pending: _pending, i, ...rest } = this;
    return { i, ...rest };
  }
}

async function start(message) {
  config = message;
  arrival = new Float64Array(config.watchers * config.span);
  for (let i = 0; i < config.watchers; i++) watchers.push(new Watcher(i));
  const t0 = now();
  await Promise.all(watchers.map((w) => w.open()));
  process.send({
    ready: true,
    openSeconds: (now() - t0) / 1000,
    statuses: watchers.reduce((a, w) => ({ ...a, [w.status]: (a[w.status] ?? 0) + 1 }), {}),
    openedMs: watchers.map((w) => w.openedMs),
    ended: watchers.filter((w) => w.ended).map((w) => ({ i: w.i, ended: w.ended, errorEvents: w.errorEvents })),
  });
}

async function wait({ lastRv, timeoutMs, stallMs = 30_000 }) {
  const t0 = now();
  let total = -1;
  let changedAt = now();
  let reportedAt = now();
  let outcome;
  for (;;) {
    const behind = watchers.filter((w) => w.lastRv < lastRv && !w.ended);
    const sum = watchers.reduce((a, w) => a + w.events, 0);
    if (sum !== total) {
      total = sum;
      changedAt = now();
    }
    if (behind.length === 0) {
      outcome = watchers.every((w) => w.lastRv >= lastRv) ? "done" : "ended";
      break;
    }
    if (now() - changedAt > stallMs) {
      outcome = "stalled";
      break;
    }
    if (now() - t0 > timeoutMs) {
      outcome = "timeout";
      break;
    }
    if (now() - reportedAt > 5_000) {
      reportedAt = now();
      process.send({ progress: true, behind: behind.length, minRv: Math.min(...behind.map((w) => w.lastRv)), lastRv });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.send({ done: true, outcome, waitedSeconds: (now() - t0) / 1000, stats: watchers.map((w) => w.stats()) });
}

process.on("message", (message) => {
  if (message.cmd === "start") void start(message);
  else if (message.cmd === "wait") void wait(message);
  else if (message.cmd === "dump") {
    fs.writeFileSync(message.file, Buffer.from(arrival.buffer, arrival.byteOffset, arrival.byteLength));
    process.send({ dumped: true });
  } else if (message.cmd === "close") {
    for (const w of watchers) w.req?.destroy();
    process.exit(0);
  }
});
process.on("disconnect", () => process.exit(0));
