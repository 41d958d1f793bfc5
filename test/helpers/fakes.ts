/** Scripted fakes for unit tests: a clock that moves only when told, and builders of valid objects. */
import type { Clock } from "../../src/clock.ts";
import type { KubeObject } from "../../src/kube/types.ts";

export class FakeClock implements Clock {
  #now: number;
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}

/** A deterministic "random" source cycling through the given values. */
export function fixedRandom(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length] ?? 0;
}

export interface PodOptions {
  name: string;
  namespace?: string;
  rv?: string;
  uid?: string;
  labels?: Record<string, string>;
  nodeName?: string;
  phase?: string;
}

export function pod(options: PodOptions): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: options.name,
      namespace: options.namespace ?? "default",
      uid: options.uid ?? `uid-${options.namespace ?? "default"}-${options.name}`,
      resourceVersion: options.rv ?? "1",
      labels: options.labels ?? {},
      managedFields: [{ manager: "kubectl", operation: "Apply" }],
    },
    spec: { nodeName: options.nodeName ?? "node-1" },
    status: { phase: options.phase ?? "Running" },
  };
}
