/**
 * The layers of src/ and the rules between them (docs/architecture.md "Layers").
 *
 *   npm run lint:deps      checks them (npm test runs it before the tests)
 *
 * LAYERS lists the layers from the bottom up. A module may import modules of its own layer and of
 * the layers below it, never of a layer above: an upward import is an error even when it imports
 * only a type (the check reads type imports too, tsPreCompilationDeps). No module may take part in
 * an import cycle, through types or not. The published client (src/client/) stands apart.
 *
 * A module belongs to the layer of its directory, except the few listed in FILED_ELSEWHERE: their
 * code belongs to another layer than the directory they sit in (each says why). They are to move
 * there once the splits of issue 21 have landed; until then this table places them.
 */

/** Bottom first. `paths` are regular expressions on paths from the repository's root. */
const LAYERS = [
  {
    name: "base",
    comment:
      "Shared primitives: SQL (sql.ts, sql-rows.ts), time, errors, logging, the Env type, network rules (net/) " +
      "and sealing (secrets/). They know no informer, cluster or route.",
    paths: ["^src/(sql|sql-rows|clock|errors|log|env)\\.ts$", "^src/net/", "^src/secrets/"],
  },
  {
    name: "kube",
    comment: "The Kubernetes API client: types, list and watch decoding, selectors, resources, resourceVersions, API errors.",
    paths: ["^src/kube/"],
  },
  {
    name: "engine",
    comment:
      "One informer's machinery (client-go's Reflector, DeltaFIFO, Indexer, event log) over one SQL database. " +
      "It knows no cluster, subscription, route or Durable Object.",
    paths: ["^src/cache/"],
  },
  {
    name: "clusters",
    comment: "Which API servers there are and how to reach them: names, connections, placement, stubs, upstream requests.",
    paths: ["^src/clusters/"],
  },
  {
    name: "auth",
    comment: "Who a request is and what it may do (credentials, Access JWTs, principals).",
    paths: ["^src/auth/"],
  },
  {
    name: "delivery",
    comment: "Webhook subscriptions: following an informer's log, filtering, signing, sending, retrying, recording.",
    paths: ["^src/delivery/"],
  },
  {
    name: "read API",
    comment: "What /k8s and /search answer from the cache: Kubernetes' list, watch, discovery and Table semantics.",
    paths: ["^src/k8s/", "^src/search/"],
  },
  {
    name: "configuration",
    comment:
      "Informer specs, validated once at the edge (config.ts; it composes the schemas of the layers below), " +
      "and where they are kept: the factory's registry and an informer object's spec row.",
    paths: ["^src/config\\.ts$"],
  },
  {
    name: "objects",
    comment: "The Durable Object classes: thin shells that wire the layers below to storage, alarms and RPC.",
    paths: ["^src/objects/"],
  },
  {
    name: "operations",
    comment: "/metrics and the status page's data: read from the objects over RPC, rendered for Prometheus.",
    paths: ["^src/metrics/"],
  },
  {
    name: "http",
    comment: "The Worker's hono routes: authentication, validation, guards, and calls to the objects.",
    paths: ["^src/http/"],
  },
  {
    name: "entry",
    comment: "The Worker's entry: fetch, the cron trigger, the exported classes (and the names behind Env's namespaces).",
    paths: ["^src/index\\.ts$"],
  },
];

/** Modules whose code belongs to another layer than their directory: path → [layer, why]. */
const FILED_ELSEWHERE = {
  "src/k8s/resource-description.ts": [
    "kube",
    "what a CustomResourceDefinition says about its resource: pure Kubernetes (zod only), read by clusters/ and cache/ too",
  ],
  "src/metrics/identity.ts": ["base", "who a log line or a sample is about ({cluster, informer[, subscription]}): log vocabulary for every layer"],
  "src/metrics/log-counters.ts": ["engine", "counts the event log in the log's own transactions (EventLog.compactInTx's beforeDelete)"],
  "src/metrics/delivery-counters.ts": ["delivery", "counts the delivery log in the subscription store's transactions, before each trim"],
  "src/cache/informer-registry.ts": ["configuration", "the factory's registry: stores informer specs (config.ts) and cluster connections"],
  "src/cache/spec-store.ts": ["configuration", "an informer object's spec row: its spec (config.ts) and its cluster's connection"],
};

/**
 * The one cycle left, of types only, allowed by name until it can go: cache/informer.ts imports
 * metrics/log-counters.ts to count its log, and log-counters.ts's InformerMetrics names
 * cache/informer.ts's InformerProgress. It goes when InformerProgress moves out of informer.ts
 * (into cache-progress.ts, "the informer's progress"), which waits for the split of informer.ts
 * under way in issue 21. Only a cycle of exactly these two modules is let through: any other
 * cycle has a third module, which reports it.
 */
const KNOWN_CYCLE = ["^src/cache/informer\\.ts$", "^src/metrics/log-counters\\.ts$"];

const exact = (file) => `^${file.replace(/[.]/g, "\\.")}$`;
const layerIndex = (name) => {
  const index = LAYERS.findIndex((layer) => layer.name === name);
  if (index < 0) throw new Error(`.dependency-cruiser.cjs: FILED_ELSEWHERE names an unknown layer '${name}'`);
  return index;
};
const filed = Object.entries(FILED_ELSEWHERE).map(([file, [layer]]) => ({ file: exact(file), index: layerIndex(layer) }));

/** The modules of the layers at `indices`: their directories, plus the files filed there, minus the files filed elsewhere. */
function modulesOf(indices) {
  const inside = (index) => indices.includes(index);
  return {
    path: [...indices.flatMap((index) => LAYERS[index].paths), ...filed.filter((f) => inside(f.index)).map((f) => f.file)],
    pathNot: filed.filter((f) => !inside(f.index)).map((f) => f.file),
  };
}

const range = (from, to) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/** One rule per layer but the top one: nothing it holds imports a layer above it. */
const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer.name.replace(/ /g, "-")}`,
  comment: `${layer.name}: ${layer.comment} It imports only ${index === 0 ? "its own layer" : `itself and ${LAYERS.slice(0, index).map((l) => l.name).join(", ")}`}.`,
  severity: "error",
  from: modulesOf([index]),
  to: modulesOf(range(index + 1, LAYERS.length)),
}));

const everyLayer = modulesOf(range(0, LAYERS.length));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment:
        "No import cycles, of types either: a cycle makes module evaluation order matter and hides which module " +
        "is the lower one. Across layers the layer rules already rule cycles out; this catches them within one.",
      severity: "error",
      from: { pathNot: KNOWN_CYCLE },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "every-module-in-a-layer",
      comment:
        "Each module of src/ belongs to a layer (LAYERS or FILED_ELSEWHERE) or is the published client: " +
        "a new directory is placed in the table before it is used.",
      severity: "error",
      from: { path: "^src/", pathNot: [...everyLayer.path, "^src/client/"] },
      to: {},
    },
    {
      name: "every-import-in-a-layer",
      comment: "The same, seen from the importer: a module without imports of its own is placed too before it is imported.",
      severity: "error",
      from: {},
      to: { path: "^src/", pathNot: [...everyLayer.path, "^src/client/"] },
    },
    {
      name: "engine-and-delivery-off-the-platform",
      comment:
        "The engine and delivery import neither cloudflare:workers nor hono: they take a Db " +
        "and a Clock, and are tested as plain modules.",
      severity: "error",
      from: { path: ["^src/cache/", "^src/delivery/", "^src/metrics/(log|delivery)-counters\\.ts$"] },
      to: { path: ["^cloudflare:", "(^|/)node_modules/hono/"] },
    },
    {
      name: "client-stands-alone",
      comment:
        "src/client/ is what users import (the typed API client, webhook verification): it ships without the " +
        "server, so it imports nothing of src/ but Kubernetes' object types.",
      severity: "error",
      from: { path: "^src/client/" },
      to: { path: "^src/", pathNot: ["^src/client/", "^src/kube/types\\.ts$"] },
    },
    {
      name: "server-does-not-use-client",
      comment: "The server does not import the published client: the client follows the API, not the reverse.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/client/" },
      to: { path: "^src/client/" },
    },
  ],
  options: {
    // Type-only imports are dependencies too: a layer that names a type of the layer above depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "(^|/)node_modules/" },
    // The check reads src/ only; tests may import any layer.
    includeOnly: { path: ["^src/", "(^|/)node_modules/", "^cloudflare:"] },
  },
};
