/**
 * The CloudEvents shapes of a delivery (src/delivery/cloudevents.ts, issue 32 item 2), read back by
 * the CloudEvents SDK for JavaScript (`HTTP.toEvent`) as a receiver would, and by a
 * Knative-Broker-style check of the required attributes.
 */
import { HTTP } from "cloudevents";
import { describe, expect, it } from "vitest";
import { batchBody, type EventToSend, shapeBody } from "../../src/delivery/cloudevents.ts";
import { brokerRefusal } from "../helpers/cloudevents-broker.ts";

const origin = { cluster: "prod-eu", informer: "pods" };
const TIME = Date.UTC(2026, 10, 28, 12, 0, 0);
const event = (n: number, type: EventToSend["type"] = "add", key = `default/web-${n}`): EventToSend => ({
  eventId: `evt_${n}`,
  type,
  key,
  time: TIME,
  text: JSON.stringify({ id: `evt_${n}`, type, key, sequence: n }),
});
const headersOf = (shaped: { contentType: string; headers: Record<string, string> }) => ({ ...shaped.headers, "content-type": shaped.contentType });

describe("shapeBody", () => {
  it("leaves today's format as it was: one event's JSON, or {\"events\": [...]}", () => {
    expect(shapeBody("edge-informer", origin, [event(1)], false)).toEqual({ body: event(1).text, contentType: "application/json", headers: {} });
    expect(shapeBody("edge-informer", origin, [event(1), event(2)], true).body).toBe(batchBody([event(1).text, event(2).text]));
  });

  it.each([
    ["add", "dev.edge-informer.added"],
    ["update", "dev.edge-informer.updated"],
    ["delete", "dev.edge-informer.deleted"],
    ["sync", "dev.edge-informer.sync"],
  ] as const)("binary mode: a %s is %s, with every attribute, and the body the event itself", (type, ceType) => {
    const shaped = shapeBody("cloudevents-binary", origin, [event(1, type)], false);
    expect(shaped.body).toBe(event(1, type).text);
    expect(brokerRefusal(headersOf(shaped), shaped.body)).toBeUndefined();
    expect(HTTP.toEvent({ headers: headersOf(shaped), body: shaped.body })).toMatchObject({
      specversion: "1.0",
      id: "evt_1",
      source: "/clusters/prod-eu/informers/pods",
      type: ceType,
      subject: "default/web-1",
      time: "2026-11-28T12:00:00.000Z",
      datacontenttype: "application/json",
      data: JSON.parse(event(1, type).text),
    });
  });

  it("binary mode percent-encodes what a header may not carry (CloudEvents HTTP binding §3.1.3.2)", () => {
    const shaped = shapeBody("cloudevents-binary", origin, [event(1, "add", "ns/caf\u00e9 \"x\" 100%")], false);
    expect(shaped.headers["ce-subject"]).toBe("ns/caf%C3%A9%20%22x%22%20100%25");
    expect(decodeURIComponent(shaped.headers["ce-subject"]!)).toBe("ns/caf\u00e9 \"x\" 100%");
    // Kubernetes keys (DNS names, '/') never need it; the SDK (10.0) reads such a header undecoded.
    expect(shapeBody("cloudevents-binary", origin, [event(1)], false).headers["ce-subject"]).toBe("default/web-1");
  });

  it("binary mode sends a batch written before the spec changed to it (declared subscriptions) in structured mode", () => {
    // CloudEvents has no binary batch, and a batch is resent whole.
    expect(shapeBody("cloudevents-binary", origin, [event(1), event(2)], true)).toEqual(shapeBody("cloudevents-structured", origin, [event(1), event(2)], true));
  });

  it("structured mode: one event as application/cloudevents+json, a batch as application/cloudevents-batch+json", () => {
    const one = shapeBody("cloudevents-structured", origin, [event(1)], false);
    expect(one.contentType).toBe("application/cloudevents+json");
    expect(brokerRefusal(headersOf(one), one.body)).toBeUndefined();
    expect(HTTP.toEvent({ headers: headersOf(one), body: one.body })).toMatchObject({ id: "evt_1", subject: "default/web-1", data: JSON.parse(event(1).text) });

    const batch = shapeBody("cloudevents-structured", origin, [event(1), event(2, "delete")], true);
    expect(batch.contentType).toBe("application/cloudevents-batch+json");
    expect(brokerRefusal(headersOf(batch), batch.body)).toBeUndefined();
    const read = HTTP.toEvent({ headers: headersOf(batch), body: batch.body });
    expect(Array.isArray(read) && read.map((e) => [e.id, e.type])).toEqual([
      ["evt_1", "dev.edge-informer.added"],
      ["evt_2", "dev.edge-informer.deleted"],
    ]);
    // A batching subscription sends even one event as a batch, as its edge-informer body does.
    expect(shapeBody("cloudevents-structured", origin, [event(1)], true).contentType).toBe("application/cloudevents-batch+json");
  });
});

describe("the broker check", () => {
  it("refuses what lacks a required attribute, or is no CloudEvent at all", () => {
    const shaped = shapeBody("cloudevents-binary", origin, [event(1)], false);
    for (const name of ["ce-id", "ce-source", "ce-type", "ce-specversion"]) {
      const without: Record<string, string> = { ...headersOf(shaped) };
      delete without[name];
      expect(brokerRefusal(without, shaped.body), name).toBeDefined();
    }
    expect(brokerRefusal({ "content-type": "application/json" }, event(1).text)).toMatch(/not a CloudEvent/);
    const structured = JSON.parse(shapeBody("cloudevents-structured", origin, [event(1)], false).body) as Record<string, unknown>;
    delete structured.source;
    expect(brokerRefusal({ "content-type": "application/cloudevents+json" }, JSON.stringify(structured))).toMatch(/source/);
  });
});
