"""Reads a /metrics answer (stdin) with the official Prometheus Python client's parser and prints,
as JSON, each metric family: name, type and samples. Exits non-zero on a parse error, and reports
family names that occur twice (a counter `x_total` and a gauge `x` are one family to this parser,
as to OpenMetrics)."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

families = list(text_string_to_metric_families(sys.stdin.read()))
names = [family.name for family in families]
print(json.dumps({
    "families": [
        {"name": f.name, "type": f.type, "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
        for f in families
    ],
    "duplicates": sorted({name for name in names if names.count(name) > 1}),
}))
