/**
 * Schedules for the `/k8s` promises: a generated list of commands, run one after another against a
 * K8sSystem with WatchClients reading all the while, and the event loop let run between commands
 * (and, for lists and watch-lists, inside them: an ingest lands after a chosen number of turns).
 * fast-check shrinks a failing schedule to a short one.
 */
import fc from "fast-check";
import { SCAN_PER_TURN } from "../../src/cache/versioned-list.ts";
import { ClusterModel, KEY_COUNT, type Labels, type Selector } from "./cluster-model.ts";
import type { K8sSystem } from "./k8s-system.ts";
import { judgeList, same, show } from "./list-check.ts";
import { type Start, type Via, WatchClient } from "./watch-client.ts";

export type Command =
  | { kind: "change"; key: number; to: Labels | "deleted" }
  | { kind: "foreignWrite" }
  | { kind: "ingest"; count: number }
  | { kind: "bookmark" }
  | { kind: "relist"; pages: number; killAt?: "staged" | "committed" }
  | { kind: "kill" }
  | { kind: "reconfigure" }
  | { kind: "watcher"; selector: Selector; start: Start; via: Via; timeoutSeconds: number; ingestAfterTurns?: number }
  | { kind: "restartRelay" }
  | { kind: "cut"; client: number }
  | { kind: "rewind"; client: number; pick: number }
  | { kind: "list"; selector: Selector; limit?: number; ingestAfterTurns?: number }
  | { kind: "advance"; seconds: number };

const selector = fc.constantFrom<Selector>("all", "web");
const turns = fc.option(fc.nat({ max: 6 }), { nil: undefined });

export const command: fc.Arbitrary<Command> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("change"), key: fc.nat({ max: KEY_COUNT - 1 }), to: fc.constantFrom<Labels | "deleted">("web", "db", "deleted") }), weight: 10 },
  { arbitrary: fc.constant({ kind: "foreignWrite" as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("ingest"), count: fc.integer({ min: 1, max: 8 }) }), weight: 4 },
  { arbitrary: fc.constant({ kind: "bookmark" as const }), weight: 2 },
  {
    arbitrary: fc.record(
      { kind: fc.constant("relist"), pages: fc.integer({ min: 1, max: 3 }), killAt: fc.constantFrom<"staged" | "committed">("staged", "committed") },
      { requiredKeys: ["kind", "pages"] },
    ),
    weight: 2,
  },
  { arbitrary: fc.constant({ kind: "kill" as const }), weight: 2 },
  { arbitrary: fc.constant({ kind: "reconfigure" as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: "restartRelay" as const }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant("watcher"),
      selector,
      start: fc.constantFrom<Start>("list", "watchList"),
      via: fc.constantFrom<Via>("informer", "relay"),
      timeoutSeconds: fc.integer({ min: 30, max: 600 }),
      ingestAfterTurns: turns,
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant("cut"), client: fc.nat({ max: 7 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("rewind"), client: fc.nat({ max: 7 }), pick: fc.nat({ max: 49 }) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("list"), selector, limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), ingestAfterTurns: turns }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("advance"), seconds: fc.integer({ min: 1, max: 70 }) }), weight: 2 },
);

/** Catching up: a bookmark due to each watcher in turn, and a watch that ended meanwhile resumed. */
const CATCH_UP_STEPS = 12;

/**
 * A schedule: its commands, and whether the cluster also holds a filler of unchanging pods, more than
 * a heavy read scans in one turn (SCAN_PER_TURN), so that a selector's list yields mid-page (1 in 5:
 * each relist then stages the filler too).
 */
export const schedule = fc.record({
  filler: fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, { arbitrary: fc.constant(SCAN_PER_TURN + 100), weight: 1 }),
  commands: fc.array(command, { minLength: 1, maxLength: 40 }),
});
export type Schedule = typeof schedule extends fc.Arbitrary<infer T> ? T : never;

/** Runs event-loop turns until no client handled a frame for a few of them (the system is quiet). */
async function settle(clients: readonly WatchClient[]): Promise<void> {
  let quiet = 0;
  for (let turn = 0; turn < 1_000 && quiet < 6; turn++) {
    const before = clients.reduce((sum, c) => sum + c.frames, 0);
    await new Promise((resolve) => setTimeout(resolve, 0));
    quiet = clients.reduce((sum, c) => sum + c.frames, 0) === before ? quiet + 1 : 0;
  }
}

/**
 * Runs `step` (an ingest) at once and after each of the next `turns` event-loop turns while
 * `operation` runs: an ingest lands before its first read, and in the gaps a list or a watch-list
 * leaves when it yields (listInTurns, a watch-list's pages, a relist's drain).
 */
async function alongside<T>(operation: Promise<T>, turns: number | undefined, step: () => Promise<void>): Promise<T> {
  let done = false;
  operation.then(
    () => (done = true),
    () => (done = true),
  );
  const steps: Promise<void>[] = [];
  for (let turn = 0; turns !== undefined && turn <= turns && !done; turn++) {
    if (turn > 0) await new Promise((resolve) => setTimeout(resolve, 0));
    if (!done) steps.push(step());
  }
  await Promise.all(steps);
  return operation;
}

export interface Outcome {
  violations: string[];
  clients: WatchClient[];
}

/** Runs `commands`, then catches everything up and checks every client and the cache against the cluster. */
export async function runSchedule(makeSystem: (cluster: ClusterModel) => K8sSystem, { filler, commands }: Schedule): Promise<Outcome> {
  const cluster = new ClusterModel(filler);
  for (let key = 0; key < 3; key++) cluster.upsert(key, key === 0 ? "db" : "web");
  const system = makeSystem(cluster);
  system.beforeKill = () => {
    for (const client of clients) client.cut();
  };
  await system.relist(1);
  const violations: string[] = [];
  const clients: WatchClient[] = [];
  try {
    for (const c of commands) {
      switch (c.kind) {
        case "change":
          if (c.to === "deleted") cluster.delete(c.key);
          else cluster.upsert(c.key, c.to);
          break;
        case "foreignWrite":
          cluster.foreignWrite();
          break;
        case "ingest":
          await system.ingest(c.count);
          break;
        case "bookmark":
          await system.bookmark();
          break;
        case "relist":
          await system.relist(c.pages, c.killAt);
          break;
        case "kill":
          await system.kill();
          break;
        case "reconfigure":
          await system.reconfigure();
          break;
        case "restartRelay":
          system.restartRelay();
          break;
        case "watcher": {
          const client = new WatchClient({ name: `client ${clients.length}`, selector: c.selector, start: c.start, via: c.via, cluster, endpoint: () => system, violations, timeoutSeconds: c.timeoutSeconds });
          clients.push(client);
          await alongside(client.begin(), c.ingestAfterTurns, () => system.ingest(1));
          break;
        }
        case "cut":
          clients[c.client % Math.max(1, clients.length)]?.cut();
          break;
        case "rewind":
          clients[c.client % Math.max(1, clients.length)]?.rewind(c.pick);
          break;
        case "list": {
          const between = c.ingestAfterTurns === undefined ? undefined : () => system.ingest(1);
          const listed = await alongside(system.list(c.selector, c.limit, between), c.ingestAfterTurns, () => system.ingest(1));
          const verdict = judgeList(cluster, listed, c.selector);
          if ("wrong" in verdict) violations.push(`a list (${c.selector}, limit ${c.limit ?? "none"}): ${verdict.wrong}`);
          break;
        }
        case "advance":
          system.clock.advance(c.seconds * 1000);
          system.notify();
          break;
      }
      // Cut streams (a kill, a client's own) come back once the incarnation is up.
      await settle(clients);
      for (const client of clients) if (client.cutPending) await client.reconnect();
      await settle(clients);
    }
    // Catch up: every change sent upstream and a bookmark at the cluster's RV, then a quiet minute.
    if (system.needsRelist) await system.relist(1);
    await system.ingest(Number.MAX_SAFE_INTEGER);
    await system.bookmark();
    // Time passes until each watcher was sent a bookmark at the cluster's RV: one a quiet minute
    // after its last frame, or 2 s before its deadline (watch-hub.ts).
    const caughtUp = () => clients.every((client) => client.stopped || client.lastBookmarkRv === cluster.rv);
    for (let step = 0; step < CATCH_UP_STEPS && !caughtUp(); step++) {
      // To the earliest bookmark a watcher still waits for (time jumps no deadline: that bookmark comes first).
      const due = Math.min(...clients.filter((client) => !client.stopped && client.lastBookmarkRv !== cluster.rv).map((client) => client.nextBookmarkDue()));
      system.clock.advance(Math.max(1, due - system.clock.now()));
      system.notify();
      await settle(clients);
    }
    const cacheRv = Number(system.informer.queryView().resourceVersion);
    if (cacheRv !== cluster.rv) violations.push(`the cache stands at ${cacheRv}, the cluster at ${cluster.rv}`);
    const cached = system.cached();
    const truth = cluster.stateAt(cluster.rv, "all");
    if (!same(cached, truth)) violations.push(`the cache holds ${show(cached)}, the cluster ${show(truth)}`);
    for (const client of clients) {
      if (!client.stopped && client.lastBookmarkRv !== cluster.rv) violations.push(`${client.name} did not catch up: its last bookmark is at ${client.lastBookmarkRv}, the cluster at ${cluster.rv} (${client.history.join(", ")})`);
    }
  } finally {
    for (const client of clients) {
      client.stopped = true;
      client.cut();
    }
    system.close();
    await settle([]);
  }
  return { violations, clients };
}
