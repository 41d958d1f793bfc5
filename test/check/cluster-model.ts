/**
 * The checker's source of truth: a fake cluster of a few pods whose every change gets the next
 * resourceVersion, kept as a history so that the state at any resourceVersion can be told. The
 * system under test is judged against it, never against itself.
 *
 * A small key set on purpose: keys repeat, so a schedule of a few dozen changes already updates,
 * deletes and re-creates the same key, and moves it in and out of the `app=web` selector.
 */
import type { KubeObject, WatchEvent } from "../../src/kube/types.ts";
import { pod } from "../helpers/fakes.ts";

export const KEY_COUNT = 5;
export const SELECTED = "app=web";

export type Labels = "web" | "db";

/** One change in the cluster's history, with the state it left (absent: the key was deleted). */
export interface Change {
  rv: number;
  key: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObject;
  /** The key's state just before (what a selector's enter/leave rule compares with). */
  before: KubeObject | undefined;
}

/** Which objects a client sees: all, or those labelled app=web. */
export type Selector = "all" | "web";

export function selects(selector: Selector, object: KubeObject | undefined): boolean {
  if (object === undefined) return false;
  return selector === "all" || object.metadata.labels?.app === "web";
}

export function nameOf(index: number): string {
  return `p${index}`;
}

export function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace}/${object.metadata.name}`;
}

/** An RV as the API hands it out (text) and as the model compares it (a number). */
export function rvOf(object: KubeObject): number {
  return Number(object.metadata.resourceVersion);
}

export class ClusterModel {
  /** The cluster's resourceVersion: every write moves it, ours or another resource's. */
  rv = 1;
  readonly history: Change[] = [];
  readonly #objects = new Map<string, KubeObject>();
  /** Objects made at RV 1 that never change, none selected by app=web (see `constructor`). */
  readonly #filler: KubeObject[];

  /**
   * @param filler how many unchanging `app=db` pods the cluster holds besides the few that change:
   *   enough (more than SCAN_PER_TURN) makes a selector's list a heavy read in several turns.
   */
  constructor(filler = 0) {
    this.#filler = Array.from({ length: filler }, (_, i) => pod({ name: `filler-${String(i).padStart(5, "0")}`, rv: "1", labels: { app: "db" } }));
  }

  /** Creates or updates pod `p<index>` with label app=`labels`. */
  upsert(index: number, labels: Labels): Change {
    const name = nameOf(index);
    const key = `default/${name}`;
    const before = this.#objects.get(key);
    const rv = ++this.rv;
    // A re-created key is another object: a new uid.
    const object = pod({ name, rv: String(rv), labels: { app: labels }, uid: before?.metadata.uid ?? `uid-${name}-${rv}` });
    return this.#record({ rv: this.rv, key, type: before ? "MODIFIED" : "ADDED", object, before });
  }

  /** Deletes pod `p<index>`, if it exists. */
  delete(index: number): Change | undefined {
    const key = `default/${nameOf(index)}`;
    const before = this.#objects.get(key);
    if (!before) return undefined;
    // The API server's DELETED carries the object at the deletion's resourceVersion.
    const object = structuredClone(before);
    object.metadata.resourceVersion = String(++this.rv);
    return this.#record({ rv: this.rv, key, type: "DELETED", object, before });
  }

  /** A write to another resource: the RV moves, this resource does not change. */
  foreignWrite(): void {
    this.rv++;
  }

  /** Every object as it is now. */
  objects(): KubeObject[] {
    return [...this.#filler, ...this.#objects.values()].map((o) => structuredClone(o));
  }

  /** The changes with an RV above `after` (what a watch from it is sent). */
  changesAfter(after: number): Change[] {
    return this.history.filter((change) => change.rv > after);
  }

  /** key → RV of every object `selector` selects at resourceVersion `rv`. */
  stateAt(rv: number, selector: Selector): Map<string, number> {
    const state = new Map<string, KubeObject>();
    for (const change of this.history) {
      if (change.rv > rv) break;
      if (change.type === "DELETED") state.delete(change.key);
      else state.set(change.key, change.object);
    }
    const selected = new Map<string, number>();
    if (selector === "all") for (const object of this.#filler) selected.set(keyOf(object), 1);
    for (const [key, object] of state) if (selects(selector, object)) selected.set(key, rvOf(object));
    return selected;
  }

  #record(change: Change): Change {
    this.history.push(change);
    if (change.type === "DELETED") this.#objects.delete(change.key);
    else this.#objects.set(change.key, change.object);
    return change;
  }
}

/** A change as the upstream watch sends it. */
export function watchEventOf(change: Change): WatchEvent {
  return { type: change.type, object: structuredClone(change.object) };
}
