/**
 * Reads a /metrics answer with a real Prometheus text-format parser (parse-prometheus-text-format,
 * the prom2json format), so the tests check what a scraper sees, never our strings.
 */
// @ts-expect-error the package ships no types
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export interface ParsedSample {
  labels?: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface ParsedFamily {
  name: string;
  help: string;
  type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
  metrics: ParsedSample[];
}

export function parseMetrics(text: string): Map<string, ParsedFamily> {
  const families = parsePrometheusTextFormat(text) as ParsedFamily[];
  return new Map(families.map((family) => [family.name, family]));
}

/** The samples of `family` whose labels include `labels`. */
export function samples(metrics: Map<string, ParsedFamily>, family: string, labels: Record<string, string> = {}): ParsedSample[] {
  return (metrics.get(family)?.metrics ?? []).filter((sample) =>
    Object.entries(labels).every(([name, value]) => sample.labels?.[name] === value),
  );
}

/** The one value of `family` with `labels`, as a number; undefined when there is no such sample. */
export function value(metrics: Map<string, ParsedFamily>, family: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples(metrics, family, labels);
  if (found.length > 1) throw new Error(`${found.length} samples of ${family} match ${JSON.stringify(labels)}`);
  return found[0]?.value === undefined ? undefined : Number(found[0].value);
}

/**
 * One series of a histogram, read by the parser. parse-prometheus-text-format 1.1.1 folds every
 * labelled series of a histogram into one and drops their `_sum` and `_count` (its flattenMetrics
 * keeps them only for unlabelled samples), so the series' lines are handed to it with the series'
 * own labels taken off, as a histogram of its own.
 */
export function histogram(text: string, family: string, labels: Record<string, string>): ParsedSample | undefined {
  const lines = text.split("\n").filter((line) => {
    const match = new RegExp(`^${family}_(bucket|sum|count)\\{(.*)\\} `).exec(line);
    return match !== null && Object.entries(labels).every(([name, v]) => match[2]!.includes(`${name}="${v}"`));
  });
  if (lines.length === 0) return undefined;
  const names = Object.keys(labels);
  const stripped = lines.map((line) =>
    line.replace(/\{(.*)\} /, (_, inner: string) => {
      const kept = inner.split(/,(?=[a-z_]+=")/).filter((pair) => !names.some((name) => pair.startsWith(`${name}=`)));
      return kept.length === 0 ? " " : `{${kept.join(",")}} `;
    }),
  );
  const parsed = parseMetrics([`# TYPE ${family} histogram`, ...stripped, ""].join("\n"));
  return parsed.get(family)?.metrics[0];
}
