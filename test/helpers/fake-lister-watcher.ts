/**
 * A scripted ListerWatcher (client-go reflector_test.go's fake ListWatch): answers list and watch
 * requests from a script, in order, and records each request so a test can assert the RV sequence.
 */
import type { ListPage, ListRequest, ListerWatcher, WatchRequest, WatchStream } from "../../src/kube/client.ts";
import { KubeApiError } from "../../src/kube/errors.ts";
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import type { ReflectorSink, ReflectorState } from "../../src/cache/reflector.ts";
import type { ReflectorMemory } from "../../src/cache/reflector-memory.ts";

export type ListAnswer = { items: KubeObject[]; resourceVersion: string; continue?: string } | { error: KubeApiError };
/** A chunk of events, or a pause in milliseconds before the next one. */
export type WatchChunk = WatchEvent[] | number;

export type WatchAnswer =
  | { batches: WatchChunk[]; end?: "close" | Error; beforeEnd?: () => void }
  | { error: KubeApiError };

export class FakeListerWatcher implements ListerWatcher {
  readonly lists: ListRequest[] = [];
  readonly watches: WatchRequest[] = [];
  readonly #listScript: ListAnswer[];
  readonly #watchScript: WatchAnswer[];

  constructor(script: { lists?: ListAnswer[]; watches?: WatchAnswer[] }) {
    this.#listScript = [...(script.lists ?? [])];
    this.#watchScript = [...(script.watches ?? [])];
  }

  async listPage(request: ListRequest, onItems: (items: KubeObject[]) => void): Promise<ListPage> {
    this.lists.push(request);
    const answer = this.#listScript.shift();
    if (!answer) throw new Error(`unscripted list request ${JSON.stringify(request)}`);
    if ("error" in answer) throw answer.error;
    if (answer.items.length > 0) onItems(answer.items);
    return {
      resourceVersion: answer.resourceVersion,
      items: answer.items.length,
      ...(answer.continue ? { continue: answer.continue } : {}),
    };
  }

  async watch(request: WatchRequest): Promise<WatchStream> {
    this.watches.push(request);
    const answer = this.#watchScript.shift();
    if (!answer) throw new Error(`unscripted watch request ${JSON.stringify(request)}`);
    if ("error" in answer) throw answer.error;
    const batches = [...answer.batches];
    return {
      async next() {
        let batch = batches.shift();
        while (typeof batch === "number") {
          await new Promise((resolve) => setTimeout(resolve, batch as number));
          batch = batches.shift();
        }
        if (batch) return batch;
        answer.beforeEnd?.();
        if (answer.end instanceof Error) throw answer.end;
        return null;
      },
      cancel() {},
    };
  }
}

/** A ReflectorSink that records what the reflector hands it. */
export class RecordingSink implements ReflectorSink {
  rv = "";
  /** Whether the cache behind the sink holds objects (a durable cache that survived a restart). */
  cached = false;
  staged: KubeObject[] = [];
  beginLists = 0;
  commits: { resourceVersion: string; objects: KubeObject[]; next: { state: ReflectorState; memory: ReflectorMemory } }[] = [];
  applied: { events: WatchEvent[]; resourceVersion: string }[] = [];

  lastSyncResourceVersion(): string {
    return this.rv;
  }
  hasCachedObjects(): boolean {
    return this.cached || this.commits.length > 0 || this.applied.length > 0;
  }
  beginList(): void {
    this.beginLists++;
    this.staged = [];
  }
  stage(objects: KubeObject[]): void {
    this.staged.push(...objects);
  }
  commitList(resourceVersion: string, next: { state: ReflectorState; memory: ReflectorMemory }): void {
    this.commits.push({ resourceVersion, objects: this.staged, next });
    this.rv = resourceVersion;
  }
  applyWatch(events: WatchEvent[], resourceVersion: string): void {
    this.applied.push({ events, resourceVersion });
    this.rv = resourceVersion;
  }
  watchOpened(memory: ReflectorMemory): void {
    this.watchMemory = memory;
  }
  watchMemory: ReflectorMemory | undefined;
}

export function expired(message = "too old resource version: 5 (10)"): KubeApiError {
  return new KubeApiError(410, "Expired", message);
}

export function tooLargeRv(): KubeApiError {
  return new KubeApiError(504, "Timeout", "Timeout: Too large resource version: 99, current: 10", [
    { reason: "ResourceVersionTooLarge", message: "Too large resource version" },
  ]);
}
