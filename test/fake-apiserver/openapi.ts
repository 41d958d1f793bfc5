/**
 * OpenAPI documents for the kinds the fake serves, shaped as kube-apiserver 1.32 publishes them
 * (KK api/openapi-spec/swagger.json and api/openapi-spec/v3/*.json): `/openapi/v2` a Swagger 2.0
 * document whose `definitions` carry `x-kubernetes-group-version-kind`; `/openapi/v3` the index
 * `{paths: {"api/v1": {serverRelativeURL: "/openapi/v3/api/v1?hash=<hex>"}}}`; and
 * `/openapi/v3/<gv>` an OpenAPI 3.0 document with `components.schemas`. Small but real-shaped:
 * each kind has apiVersion, kind, metadata (ObjectMeta, by $ref), spec and status, enough for
 * `kubectl explain` to walk. `/openapi/v2` is also offered as protobuf (gnostic's openapi_v2.Document,
 * what client-go's discovery `OpenAPISchema()` asks for, e.g. Argo CD's cluster cache), holding the
 * document's `swagger` and `info` fields only; the v3 documents are JSON only.
 */
import { createHash } from "node:crypto";
import { apiVersionOf, RESOURCES, type ResourceDef } from "./resources.ts";

const OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/** The schema name the real server uses: io.k8s.api.core.v1.Pod, io.k8s.api.apps.v1.Deployment; a CRD's is its reversed group. */
function schemaName(def: ResourceDef): string {
  if (!def.builtIn) return `${def.group.split(".").reverse().join(".")}.${def.version}.${def.kind}`;
  return `io.k8s.api.${def.group === "" ? "core" : def.group}.${def.version}.${def.kind}`;
}

function kindSchema(def: ResourceDef, ref: (name: string) => object): object {
  return {
    description: `${def.kind} is a ${def.namespaced ? "namespaced" : "cluster-scoped"} ${def.builtIn ? "built-in" : "custom"} resource served by the fake API server.`,
    type: "object",
    properties: {
      apiVersion: { description: "APIVersion defines the versioned schema of this representation of an object.", type: "string" },
      kind: { description: "Kind is a string value representing the REST resource this object represents.", type: "string" },
      metadata: { ...ref(OBJECT_META), description: "Standard object's metadata." },
      spec: { description: `Spec defines the desired state of the ${def.kind}.`, type: "object" },
      status: { description: `Status is the most recently observed status of the ${def.kind}.`, type: "object" },
    },
    "x-kubernetes-group-version-kind": [{ group: def.group, kind: def.kind, version: def.version }],
  };
}

function objectMetaSchema(): object {
  return {
    description: "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
    type: "object",
    properties: {
      name: { description: "Name must be unique within a namespace.", type: "string" },
      namespace: { description: "Namespace defines the space within which each name must be unique.", type: "string" },
      labels: { description: "Map of string keys and values that can be used to organize and categorize objects.", type: "object", additionalProperties: { type: "string", default: "" } },
      resourceVersion: { description: "An opaque value that represents the internal version of this object.", type: "string" },
      uid: { description: "UID is the unique in time and space value for this object.", type: "string" },
    },
  };
}

export function openApiV2(): object {
  const ref = (name: string) => ({ $ref: `#/definitions/${name}` });
  const definitions: Record<string, object> = { [OBJECT_META]: objectMetaSchema() };
  for (const def of RESOURCES) definitions[schemaName(def)] = kindSchema(def, ref);
  return { swagger: "2.0", info: { title: "Kubernetes", version: "v1.32.0" }, paths: {}, definitions };
}

export const OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/**
 * The v2 document as protobuf: openapi_v2.Document { swagger = 1; info = 2 } with Info { title = 1;
 * version = 6 } (gnostic openapiv2/OpenAPIv2.proto), each a length-delimited field.
 */
export function openApiV2Protobuf(): Buffer {
  const field = (number: number, value: Buffer) => Buffer.concat([Buffer.from([(number << 3) | 2, value.length]), value]);
  const { swagger, info } = openApiV2() as { swagger: string; info: { title: string; version: string } };
  const infoMessage = Buffer.concat([field(1, Buffer.from(info.title)), field(6, Buffer.from(info.version))]);
  return Buffer.concat([field(1, Buffer.from(swagger)), field(2, infoMessage)]);
}

/** `api/v1`, `apis/apps/v1`: the v3 path of each group version the fake serves. */
function groupVersionPaths(): string[] {
  return [...new Set(RESOURCES.map((def) => (def.group === "" ? `api/${def.version}` : `apis/${apiVersionOf(def)}`)))];
}

/**
 * The read operations of a kind, as the real document lists them: kubectl explain finds a
 * resource's kind through the `x-kubernetes-group-version-kind` of the operation on its path.
 */
function readPaths(def: ResourceDef): Record<string, object> {
  const base = `/${def.group === "" ? "api" : "apis"}/${apiVersionOf(def)}/${def.namespaced ? "namespaces/{namespace}/" : ""}${def.name}`;
  const gvk = { group: def.group, version: def.version, kind: def.kind };
  const operation = (action: string) => ({
    get: {
      description: `${action} ${def.kind}`,
      operationId: `${action}${def.kind}`,
      responses: { "200": { description: "OK", content: { "application/json": { schema: { $ref: `#/components/schemas/${schemaName(def)}` } } } } },
      "x-kubernetes-action": action,
      "x-kubernetes-group-version-kind": gvk,
    },
  });
  return { [base]: operation("list"), [`${base}/{name}`]: operation("read") };
}

export function openApiV3Document(gvPath: string): object | undefined {
  const defs = RESOURCES.filter((def) => (def.group === "" ? `api/${def.version}` : `apis/${apiVersionOf(def)}`) === gvPath);
  if (defs.length === 0) return undefined;
  const ref = (name: string) => ({ allOf: [{ $ref: `#/components/schemas/${name}` }] });
  const schemas: Record<string, object> = { [OBJECT_META]: objectMetaSchema() };
  for (const def of defs) schemas[schemaName(def)] = kindSchema(def, ref);
  const paths = Object.assign({}, ...defs.map(readPaths)) as Record<string, object>;
  return { openapi: "3.0.0", info: { title: "Kubernetes", version: "v1.32.0" }, paths, components: { schemas } };
}

export function openApiV3Index(): object {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const path of groupVersionPaths()) {
    const hash = createHash("sha512").update(JSON.stringify(openApiV3Document(path))).digest("hex").toUpperCase();
    paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${hash}` };
  }
  return { paths };
}
