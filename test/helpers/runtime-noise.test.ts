import { describe, expect, it } from "vitest";
import { RuntimeNoiseFilter } from "./runtime-noise.ts";

const STACK = "stack: /x/node_modules/@cloudflare/workerd-linux-64/bin/workerd@284dcb4 /x/bin/workerd@2858c0d";
const ABORT = "exception = workerd/api/unsafe.c++:218: failed: jsg.Error: Application called abortAllDurableObjects().";
const REFUSED = "exception = rust/worker/ffi.rs:110: disconnected: Connection refused (os error 111)";
const UNCAUGHT = "uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.";
const LOST = "uncaught exception; exception = workerd/jsg/value.h:1535: disconnected: jsg.Error: Network connection lost.";

describe("RuntimeNoiseFilter", () => {
  it("drops a deliberate abort and a refused connection with their native stacks, and counts them", () => {
    const noise = new RuntimeNoiseFilter();
    expect(noise.filter(`${ABORT}\n${STACK}\n`)).toBe("");
    expect(noise.filter(`${REFUSED}\n`) + noise.filter(`${STACK}\n`) + noise.filter(`${UNCAUGHT}\n${LOST}\n${STACK}\n`)).toBe("");
    expect(Object.fromEntries(noise.dropped)).toEqual({ abortAllDurableObjects: 2, "refused or reset connection": 5 });
    expect(noise.summary()).toMatch(/silenced 7 expected workerd log lines/);
  });

  it("drops a test's deliberate restart of one object and its watch clients going away, with their native stacks", () => {
    const noise = new RuntimeNoiseFilter();
    const lines = [
      "uncaught exception; exception = workerd/api/actor-state.c++:1249: failed: broken.outputGateBroken; jsg.Error: a deliberate restart by a test",
      STACK,
      "exception = kj/async-io.c++:1697: disconnected: abortRead() has been called",
      STACK,
      "exception = kj/async-io.c++:763: disconnected: read end of pipe was aborted",
    ];
    expect(noise.filter(`${lines.join("\n")}\n`)).toBe("");
    expect(Object.fromEntries(noise.dropped)).toEqual({ "deliberate restart": 2, "watch client went away": 3 });
    // The same failure for any other reason is kept.
    expect(noise.filter("uncaught exception; exception = workerd/api/actor-state.c++:1249: failed: broken.outputGateBroken; jsg.Error: boom\n")).not.toBe("");
  });

  it("drops the deliberate TLS failure against the self-signed receiver, reference ids and all", () => {
    const noise = new RuntimeNoiseFilter();
    const lines = [
      "e = rust/worker/ffi.rs:110: failed: TLS handshake failed: invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
      `${STACK}; sentryErrorContext = jsgInternalError; wdErrId = ph2ap7lj7lbbl1385v0uvmn4`,
      "uncaught exception; source = Uncaught (in promise); stack = Error: internal error; reference = ph2ap7lj7lbbl1385v0uvmn4",
      "uncaught exception; exception = workerd/jsg/value.h:1535: failed: jsg.Error: internal error; reference = ph2ap7lj7lbbl1385v0uvmn4",
      STACK,
    ];
    expect(noise.filter(`${lines.join("\n")}\n`)).toBe("");
    expect(Object.fromEntries(noise.dropped)).toEqual({ "untrusted TLS certificate": 5 });
    // An internal error that follows no TLS failure is kept.
    expect(new RuntimeNoiseFilter().filter("uncaught exception; source = Uncaught (in promise); stack = Error: internal error; reference = abc\n")).not.toBe("");
  });

  it.each([
    ["a failing test's output", " FAIL  workerd  test/x.test.ts > something\nAssertionError: expected 1 to be 2\n"],
    ["an error of another kind", "exception = workerd/api/unsafe.c++:218: failed: jsg.Error: something else\n"],
    // Not preceded by a failed fetch: maybe our own unhandled rejection.
    ["an unhandled rejection on its own", `${UNCAUGHT}\n`],
    ["an unhandled rejection with JS frames", "uncaught exception; source = Uncaught (in promise); stack = Error: Network connection lost.\n    at send (src/delivery/sender.ts:40:7)\n"],
    ["a stack that follows a line it keeps", `Error: boom\n${STACK}\n`],
  ])("keeps %s", (_, text) => {
    const noise = new RuntimeNoiseFilter();
    expect(noise.filter(text)).toBe(text);
    expect(noise.summary()).toBeUndefined();
  });

  it("keeps what follows a dropped message when it is something else", () => {
    const noise = new RuntimeNoiseFilter();
    expect(noise.filter(`${ABORT}\n${STACK}\nreal trouble\n${STACK}\n`)).toBe(`real trouble\n${STACK}\n`);
  });
});
