/**
 * One webhook endpoint of the fake receiver: its behaviour (a script of steps, then a default step),
 * the requests it recorded, and the requests it keeps hanging. Steps are validated here, once, when a
 * test sets them, so a bad script fails the control call (400) rather than a webhook request later.
 */
import { validateHeaderName, validateHeaderValue, type ServerResponse } from "node:http";
import type { Behaviour, EndpointInfo, Outcome, RecordedRequest, Step } from "./types.ts";

export class ControlError extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, message: string) {
    super(message);
    this.status = status;
    this.error = error;
  }
}

export const badRequest = (message: string): ControlError => new ControlError(400, "BadRequest", message);

const DEFAULT_STEP: Step = { status: 204 };

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw badRequest(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

export function validateStep(input: unknown, what: string): Step {
  const step = asObject(input, what);
  for (const key of Object.keys(step)) {
    if (!["status", "delayMs", "headers", "body", "hang", "destroy"].includes(key)) throw badRequest(`${what}: unknown field ${JSON.stringify(key)}`);
  }
  for (const flag of ["hang", "destroy"] as const) {
    if (step[flag] !== undefined && typeof step[flag] !== "boolean") throw badRequest(`${what}.${flag} must be a boolean`);
  }
  if (step.hang === true && step.destroy === true) throw badRequest(`${what}: hang and destroy exclude each other`);
  const delayMs = step.delayMs;
  if (delayMs !== undefined && (typeof delayMs !== "number" || !Number.isInteger(delayMs) || delayMs < 0)) {
    throw badRequest(`${what}.delayMs must be a non-negative integer`);
  }
  const status = step.status;
  const replies = step.hang !== true && step.destroy !== true;
  if (status !== undefined || replies) {
    if (typeof status !== "number" || !Number.isInteger(status) || status < 200 || status > 599) {
      throw badRequest(`${what}.status must be an integer from 200 to 599${replies ? "" : " (or left out)"}`);
    }
  }
  if (step.headers !== undefined) {
    const headers = asObject(step.headers, `${what}.headers`);
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== "string") throw badRequest(`${what}.headers[${JSON.stringify(name)}] must be a string`);
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value);
      } catch (error) {
        throw badRequest(`${what}.headers: ${(error as Error).message}`);
      }
    }
  }
  if (step.body !== undefined && typeof step.body !== "string") throw badRequest(`${what}.body must be a string`);
  return structuredClone(step) as unknown as Step;
}

export function validateBehaviour(input: Record<string, unknown>): { script: Step[]; default: Step } {
  const script = input.script ?? [];
  if (!Array.isArray(script)) throw badRequest("script must be an array of steps");
  return {
    script: script.map((step, i) => validateStep(step, `script[${i}]`)),
    default: input.default === undefined ? DEFAULT_STEP : validateStep(input.default, "default"),
  };
}

export const outcomeOf = (step: Step): Outcome => (step.hang ? "hang" : step.destroy ? "destroy" : step.status);

export class Endpoint {
  readonly id: string;
  /** The URL tests hand out; set by the server once it knows the port. */
  url = "";
  readonly dedicatedPort: boolean;
  up = true;
  private script: Step[] = [];
  private position = 0;
  private fallback: Step = DEFAULT_STEP;
  private readonly recorded: RecordedRequest[] = [];
  private readonly hanging = new Set<ServerResponse>();

  constructor(id: string, dedicatedPort: boolean, behaviour: Behaviour) {
    this.id = id;
    this.dedicatedPort = dedicatedPort;
    this.setBehaviour(behaviour);
  }

  /** Replaces script and default, and starts the script from its first step. */
  setBehaviour(behaviour: Behaviour): void {
    this.script = behaviour.script ?? [];
    this.fallback = behaviour.default ?? DEFAULT_STEP;
    this.position = 0;
  }

  /** Consumes the step for the next request and records the request with that step's outcome. */
  take(request: Omit<RecordedRequest, "index" | "outcome">): Step {
    const step = this.position < this.script.length ? this.script[this.position++]! : this.fallback;
    this.recorded.push({ index: this.recorded.length, ...request, outcome: outcomeOf(step) });
    return step;
  }

  requestsSince(since: number): RecordedRequest[] {
    return this.recorded.slice(since);
  }

  get total(): number {
    return this.recorded.length;
  }

  /** Keeps `res` unanswered until its connection closes (or `dropHanging`). */
  hang(res: ServerResponse): void {
    this.hanging.add(res);
    res.once("close", () => this.hanging.delete(res));
  }

  dropHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  info(): EndpointInfo {
    return {
      id: this.id,
      url: this.url,
      dedicatedPort: this.dedicatedPort,
      up: this.up,
      total: this.recorded.length,
      scriptRemaining: this.script.length - this.position,
      hanging: this.hanging.size,
    };
  }
}
