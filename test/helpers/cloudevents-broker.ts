/**
 * A Knative-Broker-style ingress check, written from the CloudEvents 1.0 spec and its HTTP binding
 * rather than with the SDK (which fills in what is missing): a request is accepted only as a
 * CloudEvent carrying the REQUIRED attributes `id`, `source`, `type` (non-empty strings) and
 * `specversion` "1.0", in binary mode (`ce-*` headers) or structured mode (one event, or a batch).
 * Anything else is refused, as a Broker refuses it.
 */
const REQUIRED = ["id", "source", "type", "specversion"] as const;

/** Why a Broker would refuse the request; undefined when it accepts it. */
export function brokerRefusal(headers: Record<string, string>, body: string): string | undefined {
  const contentType = (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (contentType === "application/cloudevents+json") return attributesRefusal(parse(body));
  if (contentType === "application/cloudevents-batch+json") {
    const batch = parse(body);
    if (!Array.isArray(batch)) return "a batch must be a JSON array";
    for (const event of batch) {
      const refusal = attributesRefusal(event);
      if (refusal) return refusal;
    }
    return batch.length === 0 ? "an empty batch" : undefined;
  }
  if (headers["ce-specversion"] === undefined) return "not a CloudEvent (no ce-specversion, not a structured content type)";
  return attributesRefusal(Object.fromEntries(REQUIRED.map((name) => [name, headers[`ce-${name}`]])));
}

function attributesRefusal(event: unknown): string | undefined {
  if (event === null || typeof event !== "object") return "an event must be a JSON object";
  const attributes = event as Record<string, unknown>;
  for (const name of REQUIRED) {
    const value = attributes[name];
    if (typeof value !== "string" || value === "") return `the required attribute '${name}' is missing`;
  }
  return attributes.specversion === "1.0" ? undefined : `specversion ${String(attributes.specversion)} is not 1.0`;
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}
