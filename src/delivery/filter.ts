/**
 * A subscription's filter: event types, namespace, label and field selectors.
 *
 * Selectors follow client-go's FilteringResourceEventHandler, so a receiver's view stays consistent
 * when an object moves in or out of the selection: an update whose new state matches but old state
 * did not is delivered as an `add`; one whose old state matched but new state does not, as a
 * `delete` carrying the old state; neither matching, not at all. The event-type filter applies to
 * the type after that translation.
 */
import { splitKey } from "../cache/keys.ts";
import type { LogEventType } from "../cache/event-log.ts";
import {
  type FieldSelector,
  isEverything,
  type LabelSelector,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from "../kube/selectors.ts";
import type { KubeObject } from "../kube/types.ts";

export interface FilterSpec {
  events: readonly LogEventType[];
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}

/** What a filter sees of an event: bodies as JSON text, parsed only when a selector needs them. */
export interface FilterInput {
  type: LogEventType;
  key: string;
  object: string | null;
  oldObject: string | null;
}

export interface Filtered {
  type: LogEventType;
  /** The state to deliver as `object` (for a translated delete, the old state). */
  object: string;
  oldObject: string | null;
}

export class EventFilter {
  readonly #types: ReadonlySet<LogEventType>;
  readonly #namespace: string | undefined;
  readonly #labels: LabelSelector | undefined;
  readonly #fields: FieldSelector | undefined;

  constructor(spec: FilterSpec) {
    this.#types = new Set(spec.events);
    this.#namespace = spec.namespace;
    const labels = spec.labelSelector ? parseLabelSelector(spec.labelSelector) : undefined;
    const fields = spec.fieldSelector ? parseFieldSelector(spec.fieldSelector) : undefined;
    this.#labels = labels && !isEverything(labels) ? labels : undefined;
    this.#fields = fields && !isEverything(fields) ? fields : undefined;
  }

  /** The namespace every delivered key is in, if the filter names one (pushed down to queries). */
  get namespace(): string | undefined {
    return this.#namespace;
  }

  /** The event to deliver, or undefined when the subscription does not want it. */
  apply(event: FilterInput): Filtered | undefined {
    if (event.object === null) return undefined;
    if (this.#namespace !== undefined && splitKey(event.key).namespace !== this.#namespace) return undefined;
    const translated = this.#translate(event, event.object);
    return translated && this.#types.has(translated.type) ? translated : undefined;
  }

  /** Only the event-type filter (for deletes of keys that passed the selectors when sent). */
  applyTypes(event: FilterInput): Filtered | undefined {
    if (event.object === null || !this.#types.has(event.type)) return undefined;
    return { type: event.type, object: event.object, oldObject: event.oldObject };
  }

  #translate(event: FilterInput, object: string): Filtered | undefined {
    const plain = { type: event.type, object, oldObject: event.oldObject };
    if (!this.#labels && !this.#fields) return plain;
    const newer = this.#matches(object);
    if (event.type !== "update") return newer ? plain : undefined;
    const older = event.oldObject !== null && this.#matches(event.oldObject);
    if (newer && older) return plain;
    if (newer) return { type: "add", object, oldObject: null };
    if (older) return { type: "delete", object: event.oldObject!, oldObject: null };
    return undefined;
  }

  #matches(text: string): boolean {
    const object = JSON.parse(text) as KubeObject;
    if (this.#labels && !matchesLabels(this.#labels, object.metadata?.labels)) return false;
    return !this.#fields || matchesFields(this.#fields, object);
  }
}
