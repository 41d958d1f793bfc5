/**
 * workerd logs, on stderr, every exception it also hands to JavaScript, with a native stack of bare
 * addresses. Tests that abort Durable Objects on purpose (`abortAllDurableObjects`, the chaos and
 * durability tests) or refuse and reset connections on purpose (receivers that are down, fault
 * injection) thus print dozens of traces in a green run, and a real one drowns among them.
 *
 * This filter drops exactly those, line by line: each pattern is a whole line of one known benign
 * message (the exact error text, no wildcards in it) and a `stack:` line right after one of them
 * (workerd's native addresses only). Anything else passes untouched; a JS stack (`at …` frames)
 * never matches. What was dropped is counted, and `vitest.config.ts` prints the counts at exit:
 * set SHOW_RUNTIME_NOISE=1 to see the lines themselves.
 *
 * Limitation, stated: workerd also logs "Uncaught (in promise) … Network connection lost." for a
 * failed fetch whose rejection *was* handled; a truly unhandled one prints the same line, so it is
 * dropped only as part of a failed fetch's group (right after the connection error it follows).
 */
/** The reason tests give `ctx.abort()` when they restart one Durable Object on purpose. */
export const DELIBERATE_RESTART = "a deliberate restart by a test";

export const BENIGN_RUNTIME_LINES: { name: string; pattern: RegExp; after?: string }[] = [
  // A test's deliberate restart of one object (`state.abort(DELIBERATE_RESTART)`), once per abandoned call.
  { name: "deliberate restart", pattern: /^uncaught exception; exception = workerd\/api\/actor-state\.c\+\+:\d+: failed: broken\.outputGateBroken; jsg\.Error: a deliberate restart by a test$/ },
  // The tests' deliberate aborts (cloudflare:test abortAllDurableObjects), once per aborted object.
  { name: "abortAllDurableObjects", pattern: /^exception = workerd\/api\/unsafe\.c\+\+:\d+: failed: jsg\.Error: Application called abortAllDurableObjects\(\)\.$/ },
  { name: "abortAllDurableObjects", pattern: /^failed to invoke drain\(\) on IncomingRequest before destroying it; kj::getStackTrace\(\) =( \S+workerd@[0-9a-f]+)+$/ },
  // A test's client cancelling a watch body on purpose: the pipe from the object serving it is cut.
  { name: "watch client went away", pattern: /^exception = kj\/async-io\.c\+\+:\d+: disconnected: (abortRead\(\) has been called|read end of pipe was aborted)$/ },
  // A fetch to a port nobody listens on, or a connection the other side reset, on purpose.
  { name: "refused or reset connection", pattern: /^exception = rust\/worker\/ffi\.rs:\d+: disconnected: (Connection refused \(os error 111\)|Connection reset by peer \(os error 104\)|client error \(SendRequest\)|HTTP body: error reading a body from connection)$/ },
  { name: "refused or reset connection", after: "refused or reset connection", pattern: /^uncaught exception; source = Uncaught \(in promise\); stack = Error: Network connection lost\.$/ },
  { name: "refused or reset connection", after: "refused or reset connection", pattern: /^uncaught exception; exception = workerd\/jsg\/value\.h:\d+: disconnected: jsg\.Error: Network connection lost\.$/ },
  // The sender's TLS test fetches from a receiver with a self-signed certificate on purpose; JavaScript
  // sees only "internal error; reference = <id>", the log says why. The id is the one variable part.
  { name: "untrusted TLS certificate", pattern: /^(workerd\/jsg\/util\.c\+\+:\d+: error: )?e = rust\/worker\/ffi\.rs:\d+: failed: TLS handshake failed: invalid peer certificate: Other\(OtherError\(CaUsedAsEndEntity\)\)$/ },
  { name: "untrusted TLS certificate", after: "untrusted TLS certificate", pattern: /^uncaught exception; source = Uncaught \(in promise\); stack = Error: internal error; reference = [0-9a-z]+$/ },
  { name: "untrusted TLS certificate", after: "untrusted TLS certificate", pattern: /^uncaught exception; exception = workerd\/jsg\/value\.h:\d+: failed: jsg\.Error: internal error; reference = [0-9a-z]+$/ },
];
/** workerd's native addresses, and for an internal error the reference it was logged under. */
const NATIVE_STACK = /^stack:( \S+workerd@[0-9a-f]+)+(; sentryErrorContext = jsgInternalError; wdErrId = [0-9a-z]+)?$/;

export class RuntimeNoiseFilter {
  /** Counts by kind; filters of several streams may share one map. */
  readonly dropped: Map<string, number>;

  constructor(dropped = new Map<string, number>()) {
    this.dropped = dropped;
  }
  /** The benign message the previous line belonged to, if any (its `stack:` line may follow). */
  #previous: string | undefined;

  /** The lines of `text` to keep (whole lines; workerd's logger writes whole messages). */
  filter(text: string): string {
    const lines = text.split("\n");
    const kept: string[] = [];
    lines.forEach((line, i) => {
      if (i === lines.length - 1 && line === "") return kept.push(line);
      const name = this.#benign(line);
      if (name === undefined) {
        this.#previous = undefined;
        kept.push(line);
        return;
      }
      this.#previous = name;
      this.dropped.set(name, (this.dropped.get(name) ?? 0) + 1);
    });
    return kept.join("\n");
  }

  #benign(line: string): string | undefined {
    if (NATIVE_STACK.test(line)) return this.#previous;
    const match = BENIGN_RUNTIME_LINES.find((b) => b.pattern.test(line) && (b.after === undefined || b.after === this.#previous));
    return match?.name;
  }

  summary(): string | undefined {
    if (this.dropped.size === 0) return undefined;
    const counts = [...this.dropped].map(([name, count]) => `${name}: ${count}`).join(", ");
    return `(silenced ${[...this.dropped.values()].reduce((a, b) => a + b, 0)} expected workerd log lines from deliberate aborts and refused connections — ${counts}; SHOW_RUNTIME_NOISE=1 shows them)`;
  }
}

/**
 * Filters the writes of `stream` through a RuntimeNoiseFilter counting into `dropped`; answers the
 * filter. Both stdout and stderr need one: the pool writes workerd's error and warning logs to
 * stderr, the rest (the refused connections among them) to stdout.
 */
export function quietRuntimeNoise(stream: NodeJS.WriteStream, dropped?: Map<string, number>): RuntimeNoiseFilter {
  const noise = new RuntimeNoiseFilter(dropped);
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) return write(chunk, ...rest);
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    const kept = noise.filter(text);
    if (kept === text) return write(chunk, ...rest);
    if (kept === "") {
      const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
      callback?.();
      return true;
    }
    return write(kept, ...rest);
  }) as typeof stream.write;
  return noise;
}
