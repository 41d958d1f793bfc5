/**
 * Injected faults of one cluster. Each fault is validated when added, matches requests by its kind
 * (and optional `on`/`resource`), and is consumed once per matching request until its `count` is
 * used up; faults are tried in the order they were added. Stream faults (dropStream, malformedLine,
 * errorEvent, closeAfter) are claimed by the next watch request and act inside that one stream.
 */
import type { Fault, ResponseFault, ResponseFaultTarget } from "./types.ts";
import { resourceByName } from "./resources.ts";

export type StreamFault = Extract<Fault, { kind: "dropStream" | "malformedLine" | "errorEvent" | "closeAfter" }>;

const STREAM_KINDS = new Set(["dropStream", "malformedLine", "errorEvent", "closeAfter"]);

interface Entry {
  fault: Fault;
  remaining: number;
}

export class FaultError extends Error {
  override readonly name = "FaultError";
}

function nonNegativeInt(value: unknown, field: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new FaultError(`fault.${field} must be a non-negative integer`);
  }
  return value;
}

/** Checks a fault from the control API and returns it with defaults filled in. */
export function validateFault(input: unknown): Fault {
  if (input === null || typeof input !== "object") throw new FaultError("a fault must be a JSON object");
  const f = input as Record<string, unknown>;
  const count = nonNegativeInt(f.count, "count", 1);
  if (count === 0) throw new FaultError("fault.count must be at least 1");
  if (f.resource !== undefined && (typeof f.resource !== "string" || !resourceByName(f.resource))) {
    throw new FaultError(`fault.resource ${JSON.stringify(f.resource)} is not a resource this server serves`);
  }
  const resource = f.resource === undefined ? undefined : resourceByName(f.resource as string)!.name;
  const base = { count, ...(resource ? { resource } : {}) };
  const on = (): "list" | "watch" | undefined => {
    if (f.on === undefined) return undefined;
    if (f.on !== "list" && f.on !== "watch") throw new FaultError('fault.on must be "list" or "watch"');
    return f.on;
  };
  const code = (): number => {
    const c = nonNegativeInt(f.code, "code");
    if (c < 100 || c > 599) throw new FaultError("fault.code must be an HTTP status code");
    return c;
  };
  const optionalString = (field: string): Record<string, string> => {
    if (f[field] === undefined) return {};
    if (typeof f[field] !== "string") throw new FaultError(`fault.${field} must be a string`);
    return { [field]: f[field] as string };
  };
  const target = (required: boolean): { on?: ResponseFaultTarget } => {
    if (f.on === undefined && !required) return {};
    if (f.on !== "list" && f.on !== "watch" && f.on !== "version") throw new FaultError('fault.on must be "list", "watch" or "version"');
    return { on: f.on };
  };
  switch (f.kind) {
    case "redirect": {
      if (typeof f.location !== "string" || f.location === "") throw new FaultError("fault.location must be a URL");
      const redirectCode = f.code === undefined ? 302 : code();
      if (redirectCode < 300 || redirectCode > 399) throw new FaultError("fault.code of a redirect must be 3xx");
      return { kind: "redirect", ...target(false), location: f.location, code: redirectCode, ...base };
    }
    case "oversizedBody": {
      const bytes = nonNegativeInt(f.bytes, "bytes");
      return { kind: "oversizedBody", on: target(true).on!, bytes, code: f.code === undefined ? 200 : code(), ...base };
    }
    case "status": {
      const retry = f.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: nonNegativeInt(f.retryAfterSeconds, "retryAfterSeconds") };
      const scope = on();
      return { kind: "status", ...(scope ? { on: scope } : {}), code: code(), ...optionalString("reason"), ...optionalString("message"), ...retry, ...base };
    }
    case "dropStream":
    case "malformedLine":
      return { kind: f.kind, afterEvents: nonNegativeInt(f.afterEvents, "afterEvents", 0), ...base };
    case "errorEvent":
      return {
        kind: "errorEvent",
        code: code(),
        afterEvents: nonNegativeInt(f.afterEvents, "afterEvents", 0),
        ...optionalString("reason"),
        ...optionalString("message"),
        ...base,
      };
    case "closeAfter":
      return { kind: "closeAfter", events: nonNegativeInt(f.events, "events"), ...base };
    case "expireContinue":
      return { kind: "expireContinue", ...base };
    case "tooLargeRv":
      return { kind: "tooLargeRv", ...base };
    case "delay": {
      const scope = on();
      return { kind: "delay", ...(scope ? { on: scope } : {}), ms: nonNegativeInt(f.ms, "ms"), ...base };
    }
    case "stallList": {
      if (f.page !== undefined && f.page !== "first" && f.page !== "continue") {
        throw new FaultError('fault.page must be "first" or "continue"');
      }
      return {
        kind: "stallList",
        afterItems: nonNegativeInt(f.afterItems, "afterItems"),
        ms: nonNegativeInt(f.ms, "ms", 30_000),
        ...(f.page === undefined ? {} : { page: f.page }),
        ...base,
      };
    }
    default:
      throw new FaultError(
        `unknown fault kind ${JSON.stringify(f.kind)}; expected redirect, oversizedBody, status, dropStream, malformedLine, errorEvent, closeAfter, expireContinue, tooLargeRv, delay or stallList`,
      );
  }
}

export class FaultRegistry {
  private entries: Entry[] = [];

  add(fault: Fault): void {
    this.entries.push({ fault, remaining: fault.count ?? 1 });
  }

  clear(): void {
    this.entries = [];
  }

  /** Pending faults with their remaining counts. */
  list(): Fault[] {
    return this.entries.map((e) => ({ ...e.fault, count: e.remaining }));
  }

  /** Consumes and returns the first fault accepted by `match` for a request on `resource`. */
  take<F extends Fault>(resource: string, match: (f: Fault) => f is F): F | undefined {
    const index = this.entries.findIndex((e) => (!e.fault.resource || e.fault.resource === resource) && match(e.fault));
    if (index === -1) return undefined;
    const entry = this.entries[index]!;
    entry.remaining--;
    if (entry.remaining <= 0) this.entries.splice(index, 1);
    return entry.fault as F;
  }

  takeDelay(resource: string, verb: "list" | "watch") {
    return this.take(resource, (f): f is Extract<Fault, { kind: "delay" }> => f.kind === "delay" && (!f.on || f.on === verb));
  }

  takeStatus(resource: string, verb: "list" | "watch") {
    return this.take(resource, (f): f is Extract<Fault, { kind: "status" }> => f.kind === "status" && (!f.on || f.on === verb));
  }

  takeStream(resource: string): StreamFault | undefined {
    return this.take(resource, (f): f is StreamFault => STREAM_KINDS.has(f.kind));
  }

  takeExpireContinue(resource: string) {
    return this.take(resource, (f): f is Extract<Fault, { kind: "expireContinue" }> => f.kind === "expireContinue");
  }

  /** A stallList fault for a list request with (`continued`) or without a continue token. */
  takeStallList(resource: string, continued: boolean) {
    return this.take(
      resource,
      (f): f is Extract<Fault, { kind: "stallList" }> =>
        f.kind === "stallList" && (f.page === undefined || f.page === (continued ? "continue" : "first")),
    );
  }

  /** A redirect or oversizedBody fault for a `verb` request (resource "" for /version). */
  takeResponse(resource: string, verb: ResponseFaultTarget): ResponseFault | undefined {
    return this.take(
      resource,
      (f): f is ResponseFault => (f.kind === "redirect" || f.kind === "oversizedBody") && (f.on === undefined || f.on === verb),
    );
  }

  takeTooLargeRv(resource: string) {
    return this.take(resource, (f): f is Extract<Fault, { kind: "tooLargeRv" }> => f.kind === "tooLargeRv");
  }
}
