/**
 * Column definitions shared by the printers, with the descriptions the API server sends.
 *
 * Descriptions: the literal texts of KK printers.go where it writes one, the apimachinery
 * ObjectMeta swagger docs for Name and Age, and where printers.go quotes the swagger doc of a
 * k8s.io/api field (Service TYPE, Node VERSION …) that text (field-docs.ts). kubectl never prints
 * descriptions.
 */
import { FIELD_DOCS, type FieldDoc } from "./field-docs.ts";
import type { ColumnDefinition } from "./printer.ts";

// metav1.ObjectMeta{}.SwaggerDoc() (apimachinery v0.32).
const NAME_DESCRIPTION =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_TIMESTAMP_DESCRIPTION =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

export function column(name: string, type: string, description: string, priority = 0, format = ""): ColumnDefinition {
  return { name, type, format, description, priority };
}

/** A wide (priority 1) column. */
export function wide(name: string, type: string, description: string): ColumnDefinition {
  return column(name, type, description, 1);
}

export const NAME_COLUMN = column("Name", "string", NAME_DESCRIPTION, 0, "name");
export const AGE_COLUMN = column("Age", "string", CREATION_TIMESTAMP_DESCRIPTION);
/** The default table convertor's (rest.NewDefaultTableConvertor) and the CRD convertor's second column. */
export const CREATED_AT_COLUMN = column("Created At", "date", CREATION_TIMESTAMP_DESCRIPTION);
/** The CRD convertor's Age: type "date", cells HumanDuration text. */
export const CRD_AGE_COLUMN = column("Age", "date", CREATION_TIMESTAMP_DESCRIPTION);

export const CONTAINERS_COLUMN = wide("Containers", "string", "Names of each container in the template.");
export const IMAGES_COLUMN = wide("Images", "string", "Images referenced by each container in the template.");
export const READY_OF_DESIRED_COLUMN = column("Ready", "string", "Number of the pod with ready state");

/** A column whose description printers.go quotes from a k8s.io/api swagger doc (field-docs.ts). */
export function fieldColumn(name: string, type: string, doc: FieldDoc, priority = 0): ColumnDefinition {
  return column(name, type, FIELD_DOCS[doc], priority);
}

/** The wide columns of a workload with a pod template and a selector: Containers, Images, and Selector described by `selectorDoc`. */
export function templateWideColumns(selectorDoc: FieldDoc): ColumnDefinition[] {
  return [CONTAINERS_COLUMN, IMAGES_COLUMN, fieldColumn("Selector", "string", selectorDoc, 1)];
}
