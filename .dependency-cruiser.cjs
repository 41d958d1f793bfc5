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
 * A module belongs to the layer of its directory (or, at the root of src/, of its name).
 */

/** Bottom first. `paths` are regular expressions on paths from the repository's root. */
const LAYERS = [
  {
    name: "base",
    comment:
      "Shared primitives: SQL (sql.ts, sql-rows.ts), time, errors, logging, bounded fan-out (concurrency.ts), the Env type, network rules (net/) " +
      "and sealing (secrets/), and whom a log line or a sample is about (log-identity.ts). They know no informer's " +
      "machinery, cluster or route.",
    paths: ["^src/(sql|sql-rows|clock|errors|log|log-identity|env|concurrency)\\.ts$", "^src/net/", "^src/secrets/"],
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
    paths: ["^src/config/"],
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



/** The modules of the layers at `indices`. */
function modulesOf(indices) {
  return { path: indices.flatMap((index) => LAYERS[index].paths) };
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
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "every-module-in-a-layer",
      comment:
        "Each module of src/ belongs to a layer (LAYERS) or is the published client: " +
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
      from: { path: ["^src/cache/", "^src/delivery/"] },
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
