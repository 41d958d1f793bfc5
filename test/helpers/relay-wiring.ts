/**
 * Both ends of a watch relay (k8s/watch-relay.ts) wired as in production, without the Durable
 * Objects around them: the informer's side (its own watch hub and a RelayHost) and one relay (a
 * RelaySource and its hub), each call passed through structuredClone as RPC passes it. Tests of
 * the relay (test/k8s/watch-relay.test.ts) and the generated schedules (test/k8s/relay-schedules.test.ts)
 * share it.
 */
import { afterEach } from "vitest";
import { ReadAdmission } from "../../src/k8s/admission.ts";
import { RelayWatcherCaps } from "../../src/k8s/relay-places.ts";
import { type WatchOpened, type WatchRequest, WatchHub, type WatchSource } from "../../src/k8s/watch-hub.ts";
import { RelayHost, type RelayCall, RelaySource, type RelayUpstream } from "../../src/k8s/watch-relay.ts";
import { isRefusal } from "../../src/k8s/watcher-caps.ts";

/** One relay: its RelaySource and hub, with the relay object's own cap. */
export interface RelayEnd {
  relay: RelaySource;
  relayHub: WatchHub;
  /**
   * Opens a watch as WatchRelay.watch does (no listing: no admission): the batched `relayOpen`,
   * a place in the informer's count of the credential, the relay's own cap; "notReady" for an unsynced cache.
   */
  watch(request: WatchRequest): Promise<WatchOpened | "notReady">;
  stopPump(): Promise<void>;
  startPump(): void;
}

/** An informer's object (its own hub, a RelayHost) and one relay (a RelaySource and its hub), pumping. */
export interface Wiring extends RelayEnd {
  /** The informer side's hub: its `notify` is what the informer calls after every applied batch. */
  informerHub: WatchHub;
  host: RelayHost;
  /** Every relay of the informer (options.relays; the first is the Wiring's own fields). */
  relays: RelayEnd[];
  /** Calls the relays made of the informer's object (every RPC it answers them), by kind, and by op. */
  calls: { polls: number; reads: number; opens: number; ops: Record<string, number> };
  /** Opens a watch in the relay with the state `relayOpen` answers (the snapshot handed over directly: no place taken). */
  open(request: WatchRequest): ReadableStream<Uint8Array>;
  /** Makes every further call fail, as a restarting object's would. */
  breakUpstream(): void;
  /** The informer's object restarts: a new RelayHost (a new instance) over the same informer. */
  restartInformer(): void;
  stop(): void;
}

const running: Wiring[] = [];
afterEach(() => {
  for (const wiring of running.splice(0)) wiring.stop();
});

/**
 * @param options.pump false: no pump runs (a test hands the relay its snapshots itself, `relay.accept`).
 * @param options.now both hubs' clock.
 * @param options.hostNow the RelayHost's clock (its places' timeout, `active`).
 * @param options.relays how many relays poll the one informer (1).
 * @param options.perPrincipal each credential's watches across the relays at most (WATCHERS_PER_CREDENTIAL).
 */
export function wire(
  source: () => WatchSource | undefined,
  admission = new ReadAdmission(),
  options: { pump?: boolean; now?: () => number; hostNow?: () => number; relays?: number; perPrincipal?: number; synced?: () => boolean } = {},
): Wiring {
  const clock = options.now ? { now: options.now } : {};
  const informerHub = new WatchHub(source, { admission, ...clock });
  const newHost = () => new RelayHost(source, (ms) => informerHub.changed(ms), admission, options.hostNow, options.perPrincipal === undefined ? {} : { perPrincipal: options.perPrincipal });
  let host = newHost();
  const calls = { polls: 0, reads: 0, opens: 0, ops: {} as Record<string, number> };
  let broken = false;
  const failIfBroken = () => {
    if (broken) throw new Error("Durable Object reset because its code was updated.");
  };
  const upstream: RelayUpstream = {
    async open(ask) {
      calls.opens++;
      failIfBroken();
      const synced = options.synced?.() ?? true;
      const readiness = { synced };
      // As InformerWatchers.relayOpen answers.
      const opening = synced ? host.open(structuredClone(ask)) : undefined;
      return structuredClone({ ok: true as const, value: opening ? { readiness, ...opening } : { readiness } });
    },
    async poll(known, waitMs, report) {
      calls.polls++;
      failIfBroken();
      return structuredClone(await host.poll(structuredClone(known), waitMs, structuredClone(report)));
    },
    async call(incarnation, call: RelayCall) {
      calls.reads++;
      calls.ops[call.op] = (calls.ops[call.op] ?? 0) + 1;
      failIfBroken();
      return structuredClone(await host.call(incarnation, structuredClone(call)));
    },
  };
  const relayEnd = (): RelayEnd => {
    let relayHub!: WatchHub;
    const relay = new RelaySource(upstream, { changed: () => relayHub.notify(), closeAll: () => relayHub.closeAll() });
    const caps = new RelayWatcherCaps();
    relayHub = new WatchHub(() => relay.current(), { ...clock, caps });
    relay.open(host.snapshot());
    let pumping = false;
    let pumped = Promise.resolve();
    const startPump = () => {
      pumping = true;
      pumped = relay.pump(() => pumping, 10);
    };
    if (options.pump !== false) startPump();
    return {
      relay,
      relayHub,
      watch: async (request) => {
        const entered = await relay.enter(request.principal ?? "anonymous");
        if (!entered.ok) throw new Error(entered.error.message);
        if ("notReady" in entered.value) return "notReady";
        if (isRefusal(entered.value)) return entered.value;
        const { place } = entered.value;
        return caps.joining(place, () => relayHub.tryOpen(request));
      },
      stopPump: () => {
        pumping = false;
        return pumped;
      },
      startPump,
    };
  };
  const relays = Array.from({ length: options.relays ?? 1 }, relayEnd);
  const [first] = relays as [RelayEnd];
  const { relay, relayHub } = first;
  const wiring: Wiring = {
    ...first,
    informerHub,
    get host() {
      return host;
    },
    relays,
    calls,
    open: (request) => {
      relay.open(structuredClone(host.snapshot()));
      return relayHub.open(request);
    },
    breakUpstream: () => (broken = true),
    restartInformer: () => (host = newHost()),
    stop: () => {
      for (const end of relays) {
        void end.stopPump();
        end.relayHub.closeAll();
      }
      // The poll in flight returns now, not at its 20 s wait's end (a test's object is gone by then).
      host.closeAll();
      informerHub.notify();
    },
  };
  running.push(wiring);
  return wiring;
}

