/**
 * The exposition writer against a real parser: families, escaping, histograms.
 */
import { describe, expect, it } from "vitest";
import { Exposition, type MetricFamily } from "../../src/metrics/exposition.ts";
import { histogram as readHistogram, parseMetrics, samples, value } from "./prometheus-parse.ts";

const counter: MetricFamily = { name: "t_events_total", type: "counter", help: "Events, by type." };
const gauge: MetricFamily = { name: "t_objects", type: "gauge", help: "Objects with a \\ backslash\nand a newline." };
const histogram: MetricFamily = { name: "t_duration_seconds", type: "histogram", help: "Durations." };
const unused: MetricFamily = { name: "t_unused", type: "gauge", help: "Never sampled." };

describe("Exposition", () => {
  it("writes families a Prometheus parser reads back, escaping label values", () => {
    const out = new Exposition([counter, gauge, histogram, unused]);
    out.sample(counter, { informer: "pods", type: "add" }, 3);
    out.sample(counter, { informer: "pods", type: "delete" }, 0);
    out.sample(gauge, { informer: 'we"ird\\name\nx' }, 7.5);
    out.histogram(histogram, { informer: "pods" }, [0.1, 1], [2, 1, 4], 12.25);
    out.histogram(histogram, { informer: "jobs" }, [0.1, 1], [0, 0, 1], 20);
    const text = out.text();
    const metrics = parseMetrics(text);
    expect([...metrics.keys()]).toEqual(["t_events_total", "t_objects", "t_duration_seconds"]);
    expect(metrics.get("t_events_total")!.type).toBe("COUNTER");
    expect(value(metrics, "t_events_total", { type: "add" })).toBe(3);
    expect(value(metrics, "t_events_total", { type: "delete" })).toBe(0);
    expect(samples(metrics, "t_objects")[0]!.labels).toEqual({ informer: 'we"ird\\name\nx' });
    expect(value(metrics, "t_objects")).toBe(7.5);
    expect(metrics.get("t_duration_seconds")!.type).toBe("HISTOGRAM");
    const h = readHistogram(text, "t_duration_seconds", { informer: "pods" });
    // Buckets are cumulative and end at +Inf; the count is every observation.
    expect(h!.buckets).toEqual({ "0.1": "2", "1": "3", "+Inf": "7" });
    expect([Number(h!.count), Number(h!.sum)]).toEqual([7, 12.25]);
    expect(readHistogram(text, "t_duration_seconds", { informer: "jobs" })).toEqual({ buckets: { "0.1": "0", "1": "0", "+Inf": "1" }, count: "1", sum: "20" });
  });

  it("refuses a family it was not told about", () => {
    expect(() => new Exposition([]).sample(gauge, {}, 1)).toThrow(/not declared/);
  });
});
