/**
 * The self-review bodies kubectl sends, decoded from Kubernetes protobuf. kubectl's typed clients
 * send built-in types as `application/vnd.kubernetes.protobuf` (and accept JSON back), so
 * `kubectl auth can-i` POSTs its SelfSubjectAccessReview that way. The envelope is the 4 bytes
 * `k8s\0` and a `runtime.Unknown` whose field 2 holds the object (AM pkg/runtime/serializer/
 * protobuf/protobuf.go); the object's fields are numbered as in KK
 * staging/src/k8s.io/api/authorization/v1/generated.proto. Only the fields a review is decided
 * on are read; the result has the JSON body's shape, so one path answers both.
 */
import { statusErrors } from "./status.ts";

export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";
const MAGIC = [0x6b, 0x38, 0x73, 0x00];

/** Each length-delimited field of a message, by number (other wire types are skipped). */
function fields(bytes: Uint8Array): Map<number, Uint8Array[]> {
  const out = new Map<number, Uint8Array[]>();
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= bytes.length || shift > 49) throw new Error("truncated varint");
      const byte = bytes[at++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (at < bytes.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const length = varint();
      if (at + length > bytes.length) throw new Error("truncated field");
      const list = out.get(Math.floor(tag / 8)) ?? [];
      list.push(bytes.subarray(at, at + length));
      out.set(Math.floor(tag / 8), list);
      at += length;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const text = (message: Map<number, Uint8Array[]>, field: number) => {
  const value = message.get(field)?.[0];
  return value === undefined ? undefined : new TextDecoder().decode(value);
};
const sub = (message: Map<number, Uint8Array[]>, field: number) => {
  const value = message.get(field)?.[0];
  return value === undefined ? undefined : fields(value);
};

/** Drops absent and empty strings, as the JSON body omits them. */
function strings(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ""));
}

/** The review in a protobuf body, in its JSON shape (`{spec: …}`). A SelfSubjectReview has no spec. */
export function reviewFromProtobuf(kind: string, body: Uint8Array): { spec?: Record<string, unknown> } {
  if (kind === "SelfSubjectReview") return {};
  try {
    if (!MAGIC.every((byte, i) => body[i] === byte)) throw new Error("no k8s protobuf envelope");
    const raw = fields(body.subarray(MAGIC.length)).get(2)?.[0];
    if (raw === undefined) throw new Error("the envelope holds no object");
    const spec = sub(fields(raw), 2);
    if (!spec) return {};
    // SelfSubjectRulesReviewSpec: namespace (1).
    if (kind === "SelfSubjectRulesReview") return { spec: strings({ namespace: text(spec, 1) }) };
    // SelfSubjectAccessReviewSpec: resourceAttributes (1), nonResourceAttributes (2).
    const resource = sub(spec, 1);
    const nonResource = sub(spec, 2);
    const decoded: Record<string, unknown> = {};
    if (resource) {
      decoded.resourceAttributes = strings({
        namespace: text(resource, 1),
        verb: text(resource, 2),
        group: text(resource, 3),
        version: text(resource, 4),
        resource: text(resource, 5),
        subresource: text(resource, 6),
        name: text(resource, 7),
      });
    }
    if (nonResource) decoded.nonResourceAttributes = strings({ path: text(nonResource, 1), verb: text(nonResource, 2) });
    return { spec: decoded };
  } catch (error) {
    throw statusErrors.badRequest(`the protobuf body could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
  }
}
