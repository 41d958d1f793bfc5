/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: the format is a few
 * rules, and the maintained client (prom-client) is built for Node processes that keep metrics in
 * memory, while ours are read from Durable Objects at scrape time. Tests read the output with a
 * real parser (parse-prometheus-text-format), never by matching strings.
 *
 * Guarantees: each family is written once, `# HELP` and `# TYPE` first, then its samples; label
 * values are escaped (backslash, double quote, newline); histogram buckets are cumulative and end
 * with `le="+Inf"`, followed by `_sum` and `_count`.
 */

export type MetricType = "counter" | "gauge" | "histogram";

export interface MetricFamily {
  name: string;
  type: MetricType;
  help: string;
}

export type Labels = Record<string, string>;

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export class Exposition {
  readonly #lines = new Map<MetricFamily, string[]>();

  /** Declares families in the order they are written (a family without samples is left out). */
  constructor(families: readonly MetricFamily[]) {
    for (const family of families) this.#lines.set(family, []);
  }

  /** One sample of a counter or gauge. */
  sample(family: MetricFamily, labels: Labels, value: number): void {
    this.#samples(family).push(`${family.name}${labelText(labels)} ${number(value)}`);
  }

  /**
   * One histogram: `counts[i]` observations in bucket i (not cumulative) for each upper bound, the
   * last entry for observations above every bound.
   */
  histogram(family: MetricFamily, labels: Labels, bounds: readonly number[], counts: readonly number[], sum: number): void {
    const lines = this.#samples(family);
    let cumulative = 0;
    bounds.forEach((le, i) => {
      cumulative += counts[i] ?? 0;
      lines.push(`${family.name}_bucket${labelText({ ...labels, le: number(le) })} ${cumulative}`);
    });
    cumulative += counts[bounds.length] ?? 0;
    lines.push(`${family.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${cumulative}`);
    lines.push(`${family.name}_sum${labelText(labels)} ${number(sum)}`);
    lines.push(`${family.name}_count${labelText(labels)} ${cumulative}`);
  }

  text(): string {
    const out: string[] = [];
    for (const [family, lines] of this.#lines) {
      if (lines.length === 0) continue;
      out.push(`# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
      out.push(`# TYPE ${family.name} ${family.type}`);
      out.push(...lines);
    }
    return `${out.join("\n")}\n`;
  }

  #samples(family: MetricFamily): string[] {
    const lines = this.#lines.get(family);
    if (!lines) throw new Error(`metric family ${family.name} was not declared`);
    return lines;
  }
}

function labelText(labels: Labels): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([name, value]) => `${name}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`).join(",")}}`;
}

function number(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}
