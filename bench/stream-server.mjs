#!/usr/bin/env node
// A minimal Kubernetes list/watch server for the benchmarks (node:http, no dependencies).
//
//   GET  /api/v1/pods, /api/v1/namespaces/{ns}/pods      list (streamed) or watch (watch=true)
//   POST /__bench/config {listSize, watchEvents, watchPool?, watchFirstPod?, namespaces?, watchRate?, watchHold?,
//                         watchFraming?: "buffered" (~64 KB HTTP chunks, default) | "event" (a chunk per event)}
//                                                        new scenario, state reset
//   POST /__bench/release                                starts a held scenario's events (watchHold)
//   GET  /__bench/stats                                  timings of every list and watch served
//   GET  /__bench/emits                                  when each scripted event was first written
//   GET  /healthz
//
// Lists: `listSize` pods of ~3 KB, generated on the fly and written in ~64 KB chunks with
// backpressure, never built whole. `limit` + `continue` page a consistent snapshot (every page at
// the scenario's list RV); without `limit`, or at resourceVersion=0 (the watch cache ignores limit
// there), one response holds everything.
//
// Watches: the scenario's scripted events have RVs listRv+1 … listRv+watchEvents; a watch from RV r
// gets the events after r ("" and "0" mean from the list RV), written as fast as the socket takes
// them, then nothing until `timeoutSeconds` (capped by --max-watch-seconds), then the response ends.
// A watch from an RV older than the current scenario's list RV gets a 410 Expired ERROR event (it
// belongs to an earlier scenario). Event j touches pod `watchFirstPod + (j % watchPool)`
// (watchFirstPod defaults to listSize: new pods after the listed ones): the first touch of a pod is
// ADDED unless the pod is in the list; later touches, and every touch of a listed pod, are MODIFIED
// (a new RV, restart count and container ID). `watchFirstPod: 0` with `watchPool <= listSize` makes
// an update-only stream over cached objects (the update-heavy ingest benchmark).
//
// Paced scenarios (the fan-out benchmark): with `watchHold`, watches get no event until
// POST /__bench/release; with `watchRate` R > 0, event j is not written before
// release + j × 1000/R ms (a timeline: a watch that reconnects catches up at once, then follows it).
// The first write time of every event is kept (GET /__bench/emits), so receivers can measure lag.
//
// Usage: node bench/stream-server.mjs [--port 0] [--max-watch-seconds 900]
// Prints one line `{"port": N}` on stdout once listening. Only binds 127.0.0.1.
import http from "node:http";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    "max-watch-seconds": { type: "string", default: "900" },
  },
});
const MAX_WATCH_SECONDS = Number(args["max-watch-seconds"]);
const CHUNK_BYTES = 64 * 1024;
const RV_EPOCH = 10_000_000; // each scenario starts its RVs at a new multiple of this

const now = () => performance.timeOrigin + performance.now(); // epoch ms, comparable across processes

// ---------------------------------------------------------------------------------------------
// Pods: one realistic template (~3 KB as a list item), rendered by substituting a few slots.

const SLOT = (name) => `@@${name}@@`;

function podTemplate() {
  return {
    metadata: {
      name: SLOT("name"),
      generateName: SLOT("generateName"),
      namespace: SLOT("namespace"),
      uid: SLOT("uid"),
      resourceVersion: SLOT("rv"),
      creationTimestamp: "2026-11-20T08:14:03Z",
      labels: {
        app: SLOT("app"),
        "app.kubernetes.io/name": SLOT("app"),
        "app.kubernetes.io/version": "1.24.3",
        "pod-template-hash": "7d9f8c6b5",
        tier: "backend",
        team: SLOT("team"),
      },
      annotations: {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
      },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: SLOT("owner"),
          uid: SLOT("ownerUid"),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: "kube-controller-manager",
          operation: "Update",
          apiVersion: "v1",
          time: "2026-11-20T08:14:03Z",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:metadata": {
              "f:generateName": {},
              "f:labels": { ".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}, "f:team": {} },
              "f:ownerReferences": { ".": {}, 'k:{"uid":"owner"}': {} },
            },
            "f:spec": {
              'f:containers': { 'k:{"name":"app"}': { ".": {}, "f:env": {}, "f:image": {}, "f:name": {}, "f:ports": {}, "f:resources": {} } },
            },
          },
        },
        {
          manager: "kubelet",
          operation: "Update",
          apiVersion: "v1",
          time: "2026-11-20T08:14:09Z",
          fieldsType: "FieldsV1",
          fieldsV1: {
            "f:status": {
              "f:conditions": { 'k:{"type":"Ready"}': { ".": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {} } },
              "f:containerStatuses": {},
              "f:phase": {},
              "f:podIP": {},
            },
          },
          subresource: "status",
        },
      ],
    },
    spec: {
      containers: [
        {
          name: "app",
          image: "registry.example.com/storefront/api:1.24.3",
          ports: [
            { name: "http", containerPort: 8080, protocol: "TCP" },
          ],
          env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
          ],
          resources: { limits: { cpu: "1", memory: "512Mi" }, requests: { cpu: "250m", memory: "256Mi" } },
          volumeMounts: [
            { name: "config", mountPath: "/etc/app", readOnly: true },
            { name: "token", mountPath: "/var/run/secrets/tokens", readOnly: true },
          ],
          readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 10 },
          imagePullPolicy: "IfNotPresent",
        },
      ],
      volumes: [
        { name: "config", configMap: { name: "storefront-config", defaultMode: 420 } },
        { name: "token", projected: { sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: "token" } }] } },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      serviceAccountName: "storefront",
      nodeName: SLOT("node"),
      schedulerName: "default-scheduler",
      tolerations: [{ key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute" }],
    },
    status: {
      phase: "Running",
      conditions: [
        { type: "Ready", status: "True", lastTransitionTime: "2026-11-20T08:14:09Z" },
        { type: "ContainersReady", status: "True", lastTransitionTime: "2026-11-20T08:14:09Z" },
      ],
      hostIP: SLOT("hostIP"),
      podIP: SLOT("podIP"),
      startTime: "2026-11-20T08:14:03Z",
      containerStatuses: [
        {
          name: "app",
          state: { running: { startedAt: "2026-11-20T08:14:07Z" } },
          ready: true,
          restartCount: SLOT("restarts"),
          image: "registry.example.com/storefront/api:1.24.3",
          imageID: "registry.example.com/storefront/api@sha256:9b2f4c6e8a0c2e4f6a8c0e2a4c6e8a0c2e4f6a8c0e2a4c6e8a0c2e4f6a8c0e2a",
          containerID: SLOT("containerID"),
          started: true,
        },
      ],
      qosClass: "Burstable",
    },
  };
}

/** Splits the template's JSON at its slots: parts[0] slot0 parts[1] slot1 … */
function compile(object) {
  const json = JSON.stringify(object);
  const parts = [];
  const slots = [];
  const re = /@@([A-Za-z]+)@@/g;
  let last = 0;
  for (let m = re.exec(json); m; m = re.exec(json)) {
    // numeric slots were written as strings: drop their quotes
    const numeric = m[1] === "restarts";
    const start = numeric ? m.index - 1 : m.index;
    const end = numeric ? re.lastIndex + 1 : re.lastIndex;
    parts.push(json.slice(last, start));
    slots.push(m[1]);
    last = end;
  }
  parts.push(json.slice(last));
  return { parts, slots };
}

const ITEM = compile(podTemplate()); // list items: no kind/apiVersion
const OBJECT = compile({ kind: "Pod", apiVersion: "v1", ...podTemplate() }); // watch objects

const hex = (n, width) => n.toString(16).padStart(width, "0").slice(-width);
const uidOf = (seed) => `${hex(seed * 2654435761, 8)}-${hex(seed, 4)}-4${hex(seed >>> 4, 3)}-8${hex(seed >>> 8, 3)}-${hex(seed * 40503, 12)}`;

/** Slot values of pod `i` (list pods 0..listSize-1; watch pods continue the same numbering). */
function podValues(i, rv, generation, namespaces) {
  const app = `svc-${i % 97}`;
  const ns = `ns-${i % namespaces}`;
  return {
    name: `${app}-7d9f8c6b5-${hex(i, 6)}`,
    generateName: `${app}-7d9f8c6b5-`,
    namespace: ns,
    uid: uidOf(i + 1),
    rv: String(rv),
    app,
    team: `team-${i % 13}`,
    owner: `${app}-7d9f8c6b5`,
    ownerUid: uidOf(1_000_000 + (i % 97)),
    node: `node-${i % 500}`,
    hostIP: `10.0.${(i >> 8) & 255}.${i & 255}`,
    podIP: `10.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}`,
    restarts: String(generation),
    containerID: `containerd://${hex(i * 7919 + generation, 16)}${hex(rv, 16)}`,
  };
}

function render(compiled, values) {
  const { parts, slots } = compiled;
  let out = parts[0];
  for (let k = 0; k < slots.length; k++) out += values[slots[k]] + parts[k + 1];
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scenario state

let scenario;
let epoch = 0;
let release = {};
let emittedAt = new Float64Array(0);
const stats = { lists: [], watches: [] };
const openWatches = new Set();

function configure(body) {
  epoch++;
  const listSize = Math.max(0, Math.floor(Number(body.listSize ?? 0)));
  const watchEvents = Math.max(0, Math.floor(Number(body.watchEvents ?? 0)));
  const watchPool = Math.max(1, Math.floor(Number(body.watchPool ?? 10_000)));
  const watchFirstPod = Math.max(0, Math.floor(Number(body.watchFirstPod ?? listSize)));
  const namespaces = Math.max(1, Math.floor(Number(body.namespaces ?? 50)));
  const watchRate = Math.max(0, Number(body.watchRate ?? 0));
  const watchHold = body.watchHold === true;
  // "buffered": ~64 KB HTTP chunks; "event": one chunk per event, as kube-apiserver writes them
  const watchFraming = body.watchFraming === "event" ? "event" : "buffered";
  scenario = { epoch, listSize, watchEvents, watchPool, watchFirstPod, namespaces, watchRate, watchHold, watchFraming, listRv: epoch * RV_EPOCH };
  // one timeline per scenario: when it was released, and when each event was first written (0: not yet)
  release.resolve?.(false); // watches held by the previous scenario stop waiting (they are cut below)
  release = { at: watchHold ? null : now(), resolve: null, promise: null };
  if (watchHold) release.promise = new Promise((resolve) => (release.resolve = resolve));
  emittedAt = new Float64Array(watchEvents);
  stats.lists = [];
  stats.watches = [];
  // Watches of the previous scenario end: their RVs are older than the new list RV.
  for (const res of openWatches) res.destroy();
  openWatches.clear();
  return scenario;
}
configure({});

function sampleSizes() {
  const item = render(ITEM, podValues(12345, scenario.listRv, 0, scenario.namespaces));
  const event = `{"type":"MODIFIED","object":${render(OBJECT, podValues(12345, scenario.listRv + 1, 1, scenario.namespaces))}}\n`;
  return { listItemBytes: Buffer.byteLength(item), watchEventBytes: Buffer.byteLength(event) };
}

// ---------------------------------------------------------------------------------------------
// HTTP

function sendJson(res, code, body) {
  const text = JSON.stringify(body);
  res.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function status(code, reason, message) {
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code };
}

/** Writes `text`; resolves when the socket can take more (backpressure). Rejects if the client left. */
function write(res, text) {
  if (res.destroyed || res.writableEnded) return Promise.reject(new Error("client gone"));
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onDrain = () => {
      res.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      res.off("drain", onDrain);
      reject(new Error("client gone"));
    };
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}

function encodeContinue(token) {
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}

function decodeContinue(text) {
  try {
    return JSON.parse(Buffer.from(text, "base64url").toString());
  } catch {
    return undefined;
  }
}

async function serveList(res, url, namespace) {
  const sc = scenario;
  const record = { arrivedAt: now(), url: url.pathname + url.search, items: 0, bytes: 0, lastByteAt: null, error: null };
  stats.lists.push(record);
  const rvParam = url.searchParams.get("resourceVersion");
  const limitParam = url.searchParams.get("limit");
  const continueParam = url.searchParams.get("continue");
  const nsIndex = namespace === undefined ? -1 : Number(/^ns-(\d+)$/.exec(namespace)?.[1] ?? -2);

  let start = 0;
  if (continueParam) {
    const token = decodeContinue(continueParam);
    if (!token || token.epoch !== sc.epoch) {
      record.error = "410 continue expired";
      return sendJson(res, 410, status(410, "Expired", "The provided continue parameter is too old to display a consistent list result."));
    }
    start = token.start;
  } else if (rvParam && rvParam !== "0" && Number(rvParam) > sc.listRv + sc.watchEvents) {
    record.error = "504 too large RV";
    return sendJson(res, 504, status(504, "Timeout", `Too large resource version: ${rvParam}, current: ${sc.listRv}`));
  }
  // The watch cache ignores limit at RV 0; no limit means everything.
  const paged = limitParam !== null && !(rvParam === "0" && !continueParam);
  const limit = paged ? Math.max(1, Number(limitParam)) : Number.POSITIVE_INFINITY;
  // pod indices in this listing: all, or the namespace's (i % namespaces === nsIndex)
  const step = nsIndex === -1 ? 1 : sc.namespaces;
  const first = nsIndex === -1 ? 0 : nsIndex;
  const inScope = nsIndex === -1 || (nsIndex >= 0 && nsIndex < sc.namespaces);
  const total = !inScope ? 0 : nsIndex === -1 ? sc.listSize : Math.max(0, Math.ceil((sc.listSize - first) / step));
  const end = Math.min(total, start + limit);
  const more = end < total;
  const meta = { resourceVersion: String(sc.listRv) };
  if (more) {
    meta.continue = encodeContinue({ epoch: sc.epoch, start: end });
    meta.remainingItemCount = total - end;
  }
  res.writeHead(200, { "content-type": "application/json" });
  const head = `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[`;
  let buffer = head;
  try {
    for (let k = start; k < end; k++) {
      const i = first + k * step;
      buffer += (k > start ? "," : "") + render(ITEM, podValues(i, sc.listRv, 0, sc.namespaces));
      record.items++;
      if (buffer.length >= CHUNK_BYTES) {
        record.bytes += buffer.length;
        await write(res, buffer);
        buffer = "";
      }
    }
    buffer += "]}";
    record.bytes += buffer.length;
    await new Promise((resolve) => res.end(buffer, resolve));
    record.lastByteAt = now();
  } catch (error) {
    record.error = error.message;
  }
}

async function serveWatch(req, res, url, namespace) {
  const sc = scenario;
  const record = {
    arrivedAt: now(),
    url: url.pathname + url.search,
    fromRv: url.searchParams.get("resourceVersion") ?? "",
    events: 0,
    bytes: 0,
    lastEventWrittenAt: null,
    endedAt: null,
    error: null,
  };
  stats.watches.push(record);
  const rvText = record.fromRv;
  const fromRv = rvText === "" || rvText === "0" ? sc.listRv : Number(rvText);
  const requested = Number(url.searchParams.get("timeoutSeconds") ?? MAX_WATCH_SECONDS);
  const timeoutMs = Math.min(Number.isFinite(requested) && requested > 0 ? requested : MAX_WATCH_SECONDS, MAX_WATCH_SECONDS) * 1000;
  res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
  res.flushHeaders();
  openWatches.add(res);
  const timer = setTimeout(() => res.end(), timeoutMs);
  res.on("close", () => {
    clearTimeout(timer);
    openWatches.delete(res);
    record.endedAt = now();
  });

  if (!Number.isFinite(fromRv) || fromRv < sc.listRv) {
    record.error = "410 too old";
    const event = { type: "ERROR", object: status(410, "Expired", `too old resource version: ${rvText} (${sc.listRv})`) };
    res.end(`${JSON.stringify(event)}\n`);
    return;
  }
  const nsIndex = namespace === undefined ? -1 : Number(/^ns-(\d+)$/.exec(namespace)?.[1] ?? -2);
  let buffer = "";
  const pending = []; // indices of the events in `buffer`
  const flush = async () => {
    record.bytes += buffer.length;
    const text = buffer;
    buffer = "";
    await write(res, text);
    const t = now();
    for (const j of pending) if (emittedAt[j] === 0) emittedAt[j] = t;
    pending.length = 0;
  };
  try {
    if (sc.watchHold && release.at === null) {
      const released = await Promise.race([release.promise, new Promise((resolve) => res.once("close", () => resolve(false)))]);
      if (released === false || sc !== scenario) throw new Error("client gone");
    }
    const interval = sc.watchRate > 0 ? 1000 / sc.watchRate : 0;
    for (let j = fromRv - sc.listRv; j < sc.watchEvents; j++) {
      if (interval > 0) {
        const due = release.at + j * interval;
        if (due > now()) {
          if (buffer.length > 0) await flush();
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - now())));
          if (res.destroyed || sc !== scenario) throw new Error("client gone");
        }
      }
      const pod = sc.watchFirstPod + (j % sc.watchPool); // by default, watch pods follow the listed ones
      if (nsIndex !== -1 && pod % sc.namespaces !== nsIndex) continue;
      // a listed pod is at generation 0 in the list, so its first watch touch is already generation 1
      const generation = Math.floor(j / sc.watchPool) + (pod < sc.listSize ? 1 : 0);
      const type = generation === 0 ? "ADDED" : "MODIFIED";
      const rv = sc.listRv + j + 1;
      buffer += `{"type":"${type}","object":${render(OBJECT, podValues(pod, rv, generation, sc.namespaces))}}\n`;
      pending.push(j);
      record.events++;
      if (buffer.length >= CHUNK_BYTES || sc.watchFraming === "event") await flush();
    }
    if (buffer.length > 0) await flush();
    // "last byte written": handed to the kernel (the write's callback)
    await new Promise((resolve) => (res.writableLength === 0 ? resolve() : res.write("", resolve)));
    if (record.events > 0) record.lastEventWrittenAt = now();
  } catch (error) {
    record.error = error.message;
  }
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://localhost");
  try {
    if (url.pathname === "/healthz") return sendJson(res, 200, { ok: true });
    if (url.pathname === "/__bench/config" && req.method === "POST") {
      let text = "";
      for await (const chunk of req) text += chunk;
      const sc = configure(text ? JSON.parse(text) : {});
      return sendJson(res, 200, { ...sc, ...sampleSizes() });
    }
    if (url.pathname === "/__bench/stats") return sendJson(res, 200, { scenario, ...stats, now: now() });
    if (url.pathname === "/__bench/release" && req.method === "POST") {
      if (release.at === null) {
        release.at = now();
        release.resolve(true);
      }
      return sendJson(res, 200, { releasedAt: release.at });
    }
    if (url.pathname === "/__bench/emits") {
      // rv of event j = listRv + j + 1; 0 = not written yet
      return sendJson(res, 200, { scenario, releasedAt: release.at, emittedAt: Array.from(emittedAt) });
    }
    const match = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/pods$/.exec(url.pathname);
    if (match && req.method === "GET") {
      const namespace = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
      if (url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1") {
        return await serveWatch(req, res, url, namespace);
      }
      return await serveList(res, url, namespace);
    }
    sendJson(res, 404, status(404, "NotFound", `the server could not find ${url.pathname}`));
  } catch (error) {
    if (!res.headersSent) sendJson(res, 500, status(500, "InternalError", String(error?.message ?? error)));
    else res.destroy();
  }
});
server.keepAliveTimeout = 5_000;
server.requestTimeout = 0; // watches and big lists are long

server.listen(Number(args.port), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});

const shutdown = () => {
  for (const res of openWatches) res.destroy();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
