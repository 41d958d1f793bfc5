/**
 * Both ends of a watch relay (k8s/watch-relay.ts) wired as in production, without the Durable
 * Objects around them: the informer's side (its own watch hub and a RelayHost) and one relay (a
 * RelaySource and its hub), each call passed through structuredClone as RPC passes it. Tests of
 * the relay (test/k8s/watch-relay.test.ts) and the generated schedules (test/k8s/relay-schedules.test.ts)
 * share it.
 */
import { afterEach } from "vitest";
import { ReadAdmission } from "../../src/k8s/admission.ts";
import { type WatchRequest, WatchHub, type WatchSource } from "../../src/k8s/watch-hub.ts";
import { RelayHost, type RelayCall, RelaySource, type RelayUpstream } from "../../src/k8s/watch-relay.ts";

/** An informer's object (its own hub, a RelayHost) and one relay (a RelaySource and its hub), pumping. */
export interface Wiring {
  /** The informer side's hub: its `notify` is what the informer calls after every applied batch. */
  informerHub: WatchHub;
  host: RelayHost;
  relayHub: WatchHub;
  relay: RelaySource;
  /** Calls the relay made of the informer's object, by kind. */
  calls: { polls: number; reads: number };
  /** Opens a watch in the relay as WatchRelay.watch does: with the state `relayOpen` answers. */
  open(request: WatchRequest): ReadableStream<Uint8Array>;
  /** Makes every further call fail, as a restarting object's would. */
  breakUpstream(): void;
  /** The relay's pump stops at its next poll's answer (its last watcher left); resolves once it has. */
  stopPump(): Promise<void>;
  /** The relay's pump runs again (a watcher came). */
  startPump(): void;
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
 */
export function wire(source: () => WatchSource | undefined, admission = new ReadAdmission(), options: { pump?: boolean; now?: () => number } = {}): Wiring {
  const clock = options.now ? { now: options.now } : {};
  const informerHub = new WatchHub(source, { admission, ...clock });
  const newHost = () => new RelayHost(source, (ms) => informerHub.changed(ms), admission);
  let host = newHost();
  const calls = { polls: 0, reads: 0 };
  let broken = false;
  const upstream: RelayUpstream = {
    async poll(known, waitMs) {
      calls.polls++;
      if (broken) throw new Error("Durable Object reset because its code was updated.");
      return structuredClone(await host.poll(structuredClone(known), waitMs));
    },
    async call(incarnation, call: RelayCall) {
      calls.reads++;
      if (broken) throw new Error("Durable Object reset because its code was updated.");
      return structuredClone(await host.call(incarnation, structuredClone(call)));
    },
  };
  let relayHub!: WatchHub;
  const relay = new RelaySource(upstream, { changed: () => relayHub.notify(), closeAll: () => relayHub.closeAll() });
  relayHub = new WatchHub(() => relay.current(), clock);
  relay.open(host.snapshot());
  let pumping = false;
  let pumped = Promise.resolve();
  const startPump = () => {
    pumping = true;
    pumped = relay.pump(() => pumping, 10);
  };
  if (options.pump !== false) startPump();
  const wiring: Wiring = {
    informerHub,
    get host() {
      return host;
    },
    relayHub,
    relay,
    calls,
    open: (request) => {
      relay.open(structuredClone(host.snapshot()));
      return relayHub.open(request);
    },
    breakUpstream: () => (broken = true),
    stopPump: () => {
      pumping = false;
      return pumped;
    },
    startPump,
    restartInformer: () => (host = newHost()),
    stop: () => {
      pumping = false;
      relayHub.closeAll();
      // The poll in flight returns now, not at its 20 s wait's end (a test's object is gone by then).
      host.closeAll();
      informerHub.notify();
    },
  };
  running.push(wiring);
  return wiring;
}

