// j. RBAC: CPU per request (`npm run bench -- --only rbac`; BENCHMARKS.md "RBAC: CPU per request",
// issue 31): what src/auth/rbac/rbac-authorizer.ts costs a /k8s request on a cluster whose
// authorization is `rbac`, at a realistic cluster's size, in this Node process (V8, as workerd; the
// authorizer is pure JavaScript, no I/O).
//
// The cluster (generated, seeded; `rbacCluster`): --rbac-cluster-roles (500) ClusterRoles, the
// bootstrap ones' shapes among them (cluster-admin, admin/edit/view as the aggregation controller
// stores them, system:discovery, system:basic-user, system:public-info-viewer, controllers' roles),
// --rbac-roles (2,000) Roles and --rbac-role-bindings (5,000) RoleBindings over --rbac-namespaces
// (1,000) namespaces, --rbac-cluster-role-bindings (50) ClusterRoleBindings. Every object is the JSON
// text an informer holds (no managedFields), with metadata as the API server writes it.
// Users are each in 3 groups (plus system:authenticated, as the apiserver adds it).
//
// Measured:
// 1. the one-time cost of a build: a new RbacSource's first `authorizer()` (auth/rbac/rbac-source.ts,
//    what a Worker isolate does for a cluster's first request and whenever an RBAC informer moved),
//    with its own `informerReader` over the four informers answering their items from memory (the
//    RPCs and their copy are not in it): the items' JSON.parse, whatever the source keeps of them,
//    and `new RbacAuthorizer`; median of R runs; apart, JSON.parse alone and the index alone; and
//    the heap the held authorizer keeps (after a full GC);
// 2. per call: `authorize` for namespaced get/list, cluster-wide list and a non-resource get, each
//    allowed and denied, and `listScope` for users whose scope is the cluster, hundreds of
//    namespaces, tens, or none. Each case runs in batches of ~30 ms (the count calibrated first),
//    after a warm-up; per call = the batch's process CPU (user + system) / its calls, median and
//    range over the batches; plus single calls timed one by one (wall) for the p99.
// The decisions are checked against the expected ones (a case with the wrong answer fails the run).
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { prng, round } from "./lib.mjs";
import { log } from "./harness.mjs";
import { RbacAuthorizer } from "../src/auth/rbac/rbac-authorizer.ts";
import { informerReader, RbacSource } from "../src/auth/rbac/rbac-source.ts";
import { authenticatedUser } from "../src/auth/rbac/subjects.ts";

export const RBAC_OPTIONS = {
  "rbac-cluster-roles": { type: "string", default: "500" },
  "rbac-roles": { type: "string", default: "2000" },
  "rbac-role-bindings": { type: "string", default: "5000" },
  "rbac-cluster-role-bindings": { type: "string", default: "50" },
  "rbac-namespaces": { type: "string", default: "1000" },
  "rbac-batches": { type: "string", default: "15" },
  "rbac-builds": { type: "string", default: "15" },
};

export function rbacDeadlineMs() {
  return 10 * 60_000;
}

// ---------------------------------------------------------------------------------------------
// The cluster

const READ = ["get", "list", "watch"];
const WRITE = ["create", "delete", "deletecollection", "patch", "update"];

/** view's rules as the aggregation controller stores them (Kubernetes 1.32's bootstrap policy). */
const VIEW_RULES = [
  { apiGroups: [""], resources: ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status"], verbs: READ },
  { apiGroups: [""], resources: ["bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status", "resourcequotas", "resourcequotas/status"], verbs: READ },
  { apiGroups: [""], resources: ["namespaces"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  { apiGroups: ["apps"], resources: ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"], verbs: READ },
  { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers", "horizontalpodautoscalers/status"], verbs: READ },
  { apiGroups: ["batch"], resources: ["cronjobs", "cronjobs/status", "jobs", "jobs/status"], verbs: READ },
  { apiGroups: ["extensions"], resources: ["daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "ingresses", "ingresses/status", "networkpolicies", "replicasets", "replicasets/scale", "replicasets/status", "replicationcontrollers/scale"], verbs: READ },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets", "poddisruptionbudgets/status"], verbs: READ },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "ingresses/status", "networkpolicies"], verbs: READ },
  { apiGroups: ["metrics.k8s.io"], resources: ["pods", "nodes"], verbs: READ },
];
const EDIT_ONLY_RULES = [
  { apiGroups: [""], resources: ["pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "secrets", "services/proxy"], verbs: READ },
  { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"] },
  { apiGroups: [""], resources: ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy"], verbs: ["create", "delete", "deletecollection", "patch", "update"] },
  { apiGroups: [""], resources: ["pods/eviction"], verbs: ["create"] },
  { apiGroups: [""], resources: ["configmaps", "events", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"], verbs: WRITE },
  { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] },
  { apiGroups: ["apps"], resources: ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"], verbs: WRITE },
  { apiGroups: ["autoscaling"], resources: ["horizontalpodautoscalers"], verbs: WRITE },
  { apiGroups: ["batch"], resources: ["cronjobs", "jobs"], verbs: WRITE },
  { apiGroups: ["extensions"], resources: ["daemonsets", "deployments", "deployments/rollback", "deployments/scale", "ingresses", "networkpolicies", "replicasets", "replicasets/scale", "replicationcontrollers/scale"], verbs: WRITE },
  { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs: WRITE },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "networkpolicies"], verbs: WRITE },
  { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: WRITE },
];
const ADMIN_ONLY_RULES = [
  { apiGroups: ["authorization.k8s.io"], resources: ["localsubjectaccessreviews"], verbs: ["create"] },
  { apiGroups: ["rbac.authorization.k8s.io"], resources: ["rolebindings", "roles"], verbs: [...READ, ...WRITE] },
];
// Aggregated roles list their own rules first, then the aggregated ones (as stored).
const EDIT_RULES = [...EDIT_ONLY_RULES, ...VIEW_RULES];
const ADMIN_RULES = [...ADMIN_ONLY_RULES, ...EDIT_RULES];

const CORE_RESOURCES = ["pods", "services", "endpoints", "configmaps", "secrets", "events", "nodes", "persistentvolumeclaims", "persistentvolumes", "serviceaccounts", "namespaces", "replicationcontrollers"];
const APPS_RESOURCES = ["deployments", "replicasets", "statefulsets", "daemonsets", "controllerrevisions"];

/** Metadata as the API server writes it (the informer drops managedFields). */
function metadata(random, name, namespace, extra = {}) {
  const hex = (digits) => Array.from({ length: digits }, () => Math.floor(random() * 16).toString(16)).join("");
  const uid = `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  return {
    name,
    ...(namespace ? { namespace } : {}),
    uid,
    resourceVersion: String(1000 + Math.floor(random() * 9_000_000)),
    creationTimestamp: "2026-10-01T08:00:00Z",
    ...extra,
  };
}

const BOOTSTRAP = { labels: { "kubernetes.io/bootstrapping": "rbac-defaults" }, annotations: { "rbac.authorization.kubernetes.io/autoupdate": "true" } };

function pick(random, values, count) {
  const out = new Set();
  while (out.size < Math.min(count, values.length)) out.add(values[Math.floor(random() * values.length)]);
  return [...out];
}

/** A ClusterRole of an operator or a team: 1–10 rules over its own API groups and a few core ones. */
function customRules(random, index) {
  const rules = [];
  const count = 1 + Math.floor(random() * 10);
  for (let r = 0; r < count; r++) {
    if (random() < 0.3) rules.push({ apiGroups: [""], resources: pick(random, CORE_RESOURCES, 1 + Math.floor(random() * 4)), verbs: random() < 0.6 ? READ : [...READ, ...WRITE] });
    else rules.push({ apiGroups: [`operator-${index % 60}.example.io`], resources: [`widgets-${r}`, `widgets-${r}/status`], verbs: random() < 0.5 ? READ : ["*"] });
  }
  if (random() < 0.1) rules.push({ apiGroups: [""], resources: ["configmaps"], resourceNames: [`config-${index}`], verbs: ["get", "update"] });
  return rules;
}

/**
 * The cluster's four lists as the informers hold them (each item a JSON text), and the namespaces.
 * Namespaces `ns-0000`…; teams `team-0`…`team-99` (edit in 1% of namespaces each, view in another
 * 1%), `developers` (view in 30% of namespaces), `sre` (view cluster-wide), `oncall-0`…`oncall-19`.
 */
export function rbacCluster(sizes, seed = 31) {
  const random = prng(seed);
  const ns = (i) => `ns-${String(i).padStart(4, "0")}`;
  const clusterRoles = [
    { metadata: metadata(random, "cluster-admin", "", BOOTSTRAP), rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }, { nonResourceURLs: ["*"], verbs: ["*"] }] },
    { metadata: metadata(random, "admin", "", BOOTSTRAP), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } }] }, rules: ADMIN_RULES },
    { metadata: metadata(random, "edit", "", { ...BOOTSTRAP, labels: { ...BOOTSTRAP.labels, "rbac.authorization.k8s.io/aggregate-to-admin": "true" } }), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } }] }, rules: EDIT_RULES },
    { metadata: metadata(random, "view", "", { ...BOOTSTRAP, labels: { ...BOOTSTRAP.labels, "rbac.authorization.k8s.io/aggregate-to-edit": "true" } }), aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } }] }, rules: VIEW_RULES },
    { metadata: metadata(random, "system:discovery", "", BOOTSTRAP), rules: [{ nonResourceURLs: ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"], verbs: ["get"] }] },
    { metadata: metadata(random, "system:basic-user", "", BOOTSTRAP), rules: [{ apiGroups: ["authorization.k8s.io"], resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], verbs: ["create"] }, { apiGroups: ["authentication.k8s.io"], resources: ["selfsubjectreviews"], verbs: ["create"] }] },
    { metadata: metadata(random, "system:public-info-viewer", "", BOOTSTRAP), rules: [{ nonResourceURLs: ["/healthz", "/livez", "/readyz", "/version", "/version/"], verbs: ["get"] }] },
    { metadata: metadata(random, "system:monitoring", "", BOOTSTRAP), rules: [{ nonResourceURLs: ["/healthz", "/healthz/*", "/livez", "/livez/*", "/metrics", "/metrics/slis", "/readyz", "/readyz/*"], verbs: ["get"] }] },
  ];
  // The controllers' roles: a few rules each over core and apps resources, as the bootstrap policy's.
  const CONTROLLERS = 70;
  for (let i = 0; i < CONTROLLERS && clusterRoles.length < sizes.clusterRoles; i++) {
    const rules = [
      { apiGroups: [""], resources: pick(random, CORE_RESOURCES, 2 + Math.floor(random() * 3)), verbs: [...READ, "update"] },
      { apiGroups: ["apps"], resources: pick(random, APPS_RESOURCES, 1 + Math.floor(random() * 3)), verbs: READ },
      { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch", "update"] },
    ];
    if (random() < 0.5) rules.push({ apiGroups: [""], resources: ["pods/status", "nodes/status"], verbs: ["patch", "update"] });
    clusterRoles.push({ metadata: metadata(random, `system:controller:controller-${i}`, "", BOOTSTRAP), rules });
  }
  for (let i = 0; clusterRoles.length < sizes.clusterRoles; i++) {
    const aggregate = random() < 0.2 ? { labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } } : {};
    clusterRoles.push({ metadata: metadata(random, `operator-${i % 60}-role-${i}`, "", aggregate), rules: customRules(random, i) });
  }

  const roles = [];
  for (let i = 0; roles.length < sizes.roles; i++) {
    const namespace = ns(i % sizes.namespaces);
    // One of each in every namespace while they last: app-reader in the first round, deployer in the next.
    if (Math.floor(i / sizes.namespaces) % 2 === 0) roles.push({ metadata: metadata(random, "app-reader", namespace), rules: [{ apiGroups: [""], resources: ["configmaps", "secrets"], resourceNames: [`app-${i % 7}-config`, `app-${i % 7}-secret`], verbs: ["get"] }, { apiGroups: [""], resources: ["pods", "pods/log"], verbs: READ }] });
    else roles.push({ metadata: metadata(random, "deployer", namespace), rules: [{ apiGroups: ["apps"], resources: ["deployments", "replicasets"], verbs: [...READ, ...WRITE] }, { apiGroups: [""], resources: ["services", "configmaps"], verbs: [...READ, ...WRITE] }] });
  }

  const binding = (name, namespace, subjects, roleRef) => ({
    metadata: metadata(random, name, namespace),
    subjects,
    roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
  });
  const group = (name) => ({ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name });
  const user = (name) => ({ kind: "User", apiGroup: "rbac.authorization.k8s.io", name });
  const serviceAccount = (name, namespace) => ({ kind: "ServiceAccount", name, namespace });
  const roleBindings = [];
  // Five kinds in turn, namespace by namespace: each namespace gets one of each while they last.
  for (let i = 0; roleBindings.length < sizes.roleBindings; i++) {
    const n = Math.floor(i / 5) % sizes.namespaces;
    const namespace = ns(n);
    switch (i % 5) {
      case 0:
        roleBindings.push(binding(`team-${n % 100}-edit`, namespace, [group(`team-${n % 100}`)], { kind: "ClusterRole", name: "edit" }));
        break;
      case 1:
        roleBindings.push(binding(`team-${(n * 7 + 3) % 100}-view`, namespace, [group(`team-${(n * 7 + 3) % 100}`)], { kind: "ClusterRole", name: "view" }));
        break;
      case 2:
        if (n % 10 < 3) roleBindings.push(binding("developers-view", namespace, [group("developers")], { kind: "ClusterRole", name: "view" }));
        else roleBindings.push(binding(`owner-admin`, namespace, [user(`owner-${n}@example.com`)], { kind: "ClusterRole", name: "admin" }));
        break;
      case 3:
        roleBindings.push(binding("ci-deployer", namespace, [serviceAccount("ci", namespace)], { kind: "Role", name: "deployer" }));
        break;
      default:
        roleBindings.push(binding("app-readers", namespace, [user(`dev-${n % 250}@example.com`), group(`oncall-${n % 20}`)], { kind: "Role", name: "app-reader" }));
    }
  }

  const clusterRoleBindings = [
    binding("cluster-admin", "", [group("system:masters")], { kind: "ClusterRole", name: "cluster-admin" }),
    binding("system:discovery", "", [group("system:authenticated")], { kind: "ClusterRole", name: "system:discovery" }),
    binding("system:basic-user", "", [group("system:authenticated")], { kind: "ClusterRole", name: "system:basic-user" }),
    binding("system:public-info-viewer", "", [group("system:authenticated"), group("system:unauthenticated")], { kind: "ClusterRole", name: "system:public-info-viewer" }),
    binding("system:monitoring", "", [group("system:monitoring")], { kind: "ClusterRole", name: "system:monitoring" }),
    binding("sre-view", "", [group("sre")], { kind: "ClusterRole", name: "view" }),
    binding("platform-admins", "", [group("platform-admins")], { kind: "ClusterRole", name: "cluster-admin" }),
  ];
  for (let i = 0; clusterRoleBindings.length < sizes.clusterRoleBindings; i++) {
    const role = clusterRoles[8 + (i % (clusterRoles.length - 8))].metadata.name;
    clusterRoleBindings.push(binding(role, "", [serviceAccount(`controller-${i}`, "kube-system")], { kind: "ClusterRole", name: role }));
  }

  const texts = (items) => items.map((item) => JSON.stringify(item));
  return {
    lists: { clusterRoles: texts(clusterRoles), roles: texts(roles), roleBindings: texts(roleBindings), clusterRoleBindings: texts(clusterRoleBindings) },
    namespace: ns,
  };
}

/**
 * The env a source's informerReader reads through: each RBAC informer's `searchAt` answered from
 * `lists` as the informer object answers it (items as JSON texts, at most `limit` of them).
 */
function memoryInformers(lists) {
  const byInformer = { "rbac-roles": lists.roles, "rbac-rolebindings": lists.roleBindings, "rbac-clusterroles": lists.clusterRoles, "rbac-clusterrolebindings": lists.clusterRoleBindings };
  const stub = (items) => ({
    searchAt: async ({ limit }) => ({
      ok: true,
      value: { value: { items: items.slice(0, limit), expired: false, ...(items.length > limit ? { next: "more" } : {}) }, synced: true, resourceVersion: "1000" },
    }),
  });
  return {
    INFORMER: {
      getByName: (objectName) => {
        const name = objectName.slice(objectName.lastIndexOf("/") + 1);
        if (!byInformer[name]) throw new Error(`rbac: no informer '${objectName}' in the bench`);
        return stub(byInformer[name]);
      },
    },
  };
}

/** A new source's first authorizer for the bench's cluster: a whole build. */
const buildThroughSource = (env) => new RbacSource(() => 0).authorizer("bench", informerReader(env, "bench"));

/** The four lists parsed, as rbac-source.ts parses an informer's items. */
function parseLists(lists) {
  return {
    clusterRoles: lists.clusterRoles.map((text) => JSON.parse(text)),
    roles: lists.roles.map((text) => JSON.parse(text)),
    roleBindings: lists.roleBindings.map((text) => JSON.parse(text)),
    clusterRoleBindings: lists.clusterRoleBindings.map((text) => JSON.parse(text)),
  };
}

// ---------------------------------------------------------------------------------------------
// Timing

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

let sink = 0; // every result feeds it, so no call is optimised away

/** CPU µs per call of `fn` (median and range over batches of ~30 ms) and single calls' wall p50/p99. */
function perCall(fn, batches) {
  for (let i = 0; i < 2_000; i++) sink += fn();
  let calls = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) sink += fn();
    const ms = performance.now() - t0;
    if (ms >= 5) {
      calls = Math.max(1, Math.round((calls * 30) / ms));
      break;
    }
    calls *= 2;
  }
  const cpu = [];
  const wall = [];
  for (let b = 0; b < batches; b++) {
    const c0 = cpuMicros();
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) sink += fn();
    wall.push(((performance.now() - t0) * 1000) / calls);
    cpu.push((cpuMicros() - c0) / calls);
  }
  const singles = [];
  for (let i = 0; i < 2_000; i++) {
    const t0 = process.hrtime.bigint();
    sink += fn();
    singles.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return {
    callsPerBatch: calls,
    cpuMicros: { median: round(median(cpu), 2), min: round(Math.min(...cpu), 2), max: round(Math.max(...cpu), 2) },
    wallMicros: { median: round(median(wall), 2) },
    singleCallWallMicros: { p50: round(quantile(singles, 0.5), 2), p99: round(quantile(singles, 0.99), 2) },
  };
}

/** Median and range of `runs` timings (ms, CPU) of `fn` (awaited when it answers a promise). */
async function perRun(fn, runs) {
  await fn();
  const cpu = [];
  for (let r = 0; r < runs; r++) {
    const c0 = cpuMicros();
    sink += (await fn()) ? 1 : 0;
    cpu.push((cpuMicros() - c0) / 1000);
  }
  return { cpuMs: { median: round(median(cpu), 2), min: round(Math.min(...cpu), 2), max: round(Math.max(...cpu), 2) } };
}

// ---------------------------------------------------------------------------------------------

export async function runRbac({ opts }) {
  const sizes = {
    clusterRoles: Number(opts["rbac-cluster-roles"]),
    roles: Number(opts["rbac-roles"]),
    roleBindings: Number(opts["rbac-role-bindings"]),
    clusterRoleBindings: Number(opts["rbac-cluster-role-bindings"]),
    namespaces: Number(opts["rbac-namespaces"]),
  };
  for (const [name, value] of Object.entries(sizes)) if (!(Number.isSafeInteger(value) && value > 0)) throw new Error(`rbac: ${name} must be a whole number > 0 (got ${value})`);
  if (sizes.clusterRoles < 90 || sizes.clusterRoleBindings < 8) throw new Error("rbac: at least 90 ClusterRoles and 8 ClusterRoleBindings (the bootstrap ones and the bench's users')");
  const batches = Number(opts["rbac-batches"]);
  const builds = Number(opts["rbac-builds"]);
  const { lists, namespace } = rbacCluster(sizes);
  const bytes = Object.fromEntries(Object.entries(lists).map(([name, items]) => [name, items.reduce((sum, text) => sum + Buffer.byteLength(text), 0)]));
  log(`rbac: ${sizes.clusterRoles} ClusterRoles, ${sizes.roles} Roles, ${sizes.roleBindings} RoleBindings over ${sizes.namespaces} namespaces, ${sizes.clusterRoleBindings} ClusterRoleBindings (${round(Object.values(bytes).reduce((a, b) => a + b, 0) / 1024 / 1024, 2)} MB of JSON)`);

  // 1. The one-time cost of a build, and what the result holds.
  const env = memoryInformers(lists);
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc");
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const authorizer = await buildThroughSource(env); // the one the calls below ask
  gc();
  const heldMB = round((process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024, 1);
  const source = await perRun(() => buildThroughSource(env), builds);
  const parsed = parseLists(lists);
  const parse = await perRun(() => parseLists(lists).roleBindings.length, builds);
  const parseEach = {};
  for (const name of Object.keys(lists)) parseEach[name] = await perRun(() => lists[name].map((text) => JSON.parse(text)).length, builds);
  const build = await perRun(() => new RbacAuthorizer(parsed), builds);
  log(`rbac: a build through RbacSource ${source.cpuMs.median} ms; JSON.parse of the four lists alone ${parse.cpuMs.median} ms, new RbacAuthorizer alone ${build.cpuMs.median} ms (CPU, median of ${builds})`);

  // 2. Per call.
  const teamNamespace = (team) => namespace(team); // team-t has edit in ns-t (and every 100th after)
  const developersOnly = (() => {
    // a namespace where alice's only binding is developers' view (n % 10 < 3, not her teams')
    for (let n = 0; n < sizes.namespaces; n++) if (n % 10 < 3 && n % 100 !== 7 && n % 100 !== 42 && (n * 7 + 3) % 100 !== 7 && (n * 7 + 3) % 100 !== 42) return namespace(n);
    throw new Error("rbac: no developers-only namespace");
  })();
  const bobOutside = (() => {
    for (let n = 0; n < sizes.namespaces; n++) if (n % 100 !== 13 && (n * 7 + 3) % 100 !== 13 && n % 20 !== 3 && n % 10 >= 3) return namespace(n);
    throw new Error("rbac: no namespace outside bob's");
  })();
  const users = {
    alice: authenticatedUser("alice@example.com", ["team-7", "team-42", "developers"]),
    bob: authenticatedUser("bob@example.com", ["team-13", "oncall-3", "contractors"]),
    carol: authenticatedUser("carol@example.com", ["sre", "team-1", "developers"]),
    guest: authenticatedUser("guest@example.com", ["guests", "visitors", "contractors"]),
  };
  const pods = { apiGroup: "", resource: "pods" };
  const cases = [
    { id: "get.namespaced.allowed", what: "get a pod in her team's namespace (RoleBinding → edit)", user: "alice", attrs: { verb: "get", ...pods, namespace: teamNamespace(7), name: "web-1" }, allowed: true },
    { id: "get.namespaced.allowedLate", what: "get a deployment where only `developers` may (the 3rd group's binding → view)", user: "alice", attrs: { verb: "get", apiGroup: "apps", resource: "deployments", namespace: developersOnly, name: "web" }, allowed: true },
    { id: "get.namespaced.denied", what: "get a secret where she has view only (every grant tried)", user: "alice", attrs: { verb: "get", apiGroup: "", resource: "secrets", namespace: developersOnly, name: "db" }, allowed: false },
    { id: "get.namespaced.deniedNoBinding", what: "get a pod in a namespace with no binding of his", user: "bob", attrs: { verb: "get", ...pods, namespace: bobOutside, name: "web-1" }, allowed: false },
    { id: "list.namespaced.allowed", what: "list pods in her team's namespace", user: "alice", attrs: { verb: "list", ...pods, namespace: teamNamespace(42) }, allowed: true },
    { id: "list.namespaced.denied", what: "list secrets where she has view only", user: "alice", attrs: { verb: "list", apiGroup: "", resource: "secrets", namespace: developersOnly }, allowed: false },
    { id: "list.cluster.allowed", what: "list pods cluster-wide (ClusterRoleBinding sre → view)", user: "carol", attrs: { verb: "list", ...pods }, allowed: true },
    { id: "list.cluster.denied", what: "list pods cluster-wide (RoleBindings only)", user: "alice", attrs: { verb: "list", ...pods }, allowed: false },
    { id: "watch.cluster.denied", what: "watch pods cluster-wide, no binding at all", user: "guest", attrs: { verb: "watch", ...pods }, allowed: false },
    { id: "nonResource.allowed", what: "get /version (system:public-info-viewer, system:discovery)", user: "guest", attrs: { verb: "get", path: "/version" }, allowed: true },
  ];
  const scopes = [
    { id: "listScope.cluster", what: "list pods: cluster-wide (ClusterRoleBinding)", user: "carol" },
    { id: "listScope.hundreds", what: "list pods: her namespaces (two teams + developers' 30%)", user: "alice" },
    { id: "listScope.tens", what: "list pods: his namespaces (a team, an oncall group)", user: "bob" },
    { id: "listScope.none", what: "list pods: no namespace", user: "guest" },
  ];
  const measured = [];
  for (const c of cases) {
    const user = users[c.user];
    const decision = authorizer.authorize(user, c.attrs);
    if (decision.allowed !== c.allowed) throw new Error(`rbac: ${c.id} answered allowed=${decision.allowed}, expected ${c.allowed} (${decision.reason})`);
    const figures = perCall(() => (authorizer.authorize(user, c.attrs).allowed ? 1 : 0), batches);
    measured.push({ id: c.id, what: `${c.user}: ${c.what}`, allowed: c.allowed, reason: decision.reason.slice(0, 160), ...figures });
    log(`rbac: ${c.id}: ${figures.cpuMicros.median} µs CPU per call (p99 single ${figures.singleCallWallMicros.p99} µs)`);
  }
  for (const s of scopes) {
    const user = users[s.user];
    const scope = authorizer.listScope(user, { verb: "list", ...pods });
    const namespaces = scope.all ? "all" : scope.namespaces.size;
    const figures = perCall(() => {
      const answer = authorizer.listScope(user, { verb: "list", ...pods });
      return answer.all ? 1 : answer.namespaces.size;
    }, batches);
    measured.push({ id: s.id, what: `${s.user}: ${s.what}`, namespaces, ...figures });
    log(`rbac: ${s.id} (${namespaces} namespaces): ${figures.cpuMicros.median} µs CPU per call`);
  }
  const worst = Math.max(...measured.filter((m) => !m.id.startsWith("listScope")).map((m) => m.cpuMicros.median));
  return {
    ok: true,
    sizes,
    users: Object.fromEntries(Object.entries(users).map(([name, user]) => [name, user.groups])),
    bytes,
    rebuild: { source, parse, parseEach, build, heldHeapMB: heldMB },
    calls: measured,
    // A watch re-checks its authorization at most once a second (the lead's design, issue 31): an
    // event costs no authorization of its own; a watch costs at most one authorize a second.
    perWatchSecondMicrosAtMost: worst,
    sink: sink % 1000,
  };
}

export function rbacRows(r) {
  if (!r.ok) return [["rbac", `FAILED: ${r.error}`, "", ""]];
  const rows = [["RBAC (CPU, this Node process)", "median", "range", "single call p99 (wall)"]];
  rows.push(["a build through RbacSource (parse, keep, index)", `${r.rebuild.source.cpuMs.median} ms`, `${r.rebuild.source.cpuMs.min}–${r.rebuild.source.cpuMs.max} ms`, ""]);
  rows.push([`  JSON.parse of the 4 lists alone (${round(Object.values(r.bytes).reduce((a, b) => a + b, 0) / 1024 / 1024, 2)} MB)`, `${r.rebuild.parse.cpuMs.median} ms`, `${r.rebuild.parse.cpuMs.min}–${r.rebuild.parse.cpuMs.max} ms`, ""]);
  rows.push(["  new RbacAuthorizer(parsed objects) alone", `${r.rebuild.build.cpuMs.median} ms`, `${r.rebuild.build.cpuMs.min}–${r.rebuild.build.cpuMs.max} ms`, ""]);
  rows.push(["heap the held authorizer keeps (after a full GC)", `${r.rebuild.heldHeapMB} MB`, "", ""]);
  for (const m of r.calls) {
    const label = m.namespaces === undefined ? `authorize ${m.id} (${m.allowed ? "allowed" : "denied"})` : `${m.id} (${m.namespaces} namespaces)`;
    rows.push([label, `${m.cpuMicros.median} µs`, `${m.cpuMicros.min}–${m.cpuMicros.max} µs`, `${m.singleCallWallMicros.p99} µs`]);
  }
  return rows;
}
