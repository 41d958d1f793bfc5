/**
 * Storage printers (KK printers.go 1.32 printPersistentVolume, printPersistentVolumeClaim,
 * printStorageClass):
 *   PersistentVolume       Name Capacity "Access Modes" "Reclaim Policy" Status Claim StorageClass
 *                          VolumeAttributesClass Reason Age | wide: VolumeMode
 *   PersistentVolumeClaim  Name Status Volume Capacity "Access Modes" StorageClass
 *                          VolumeAttributesClass Age | wide: VolumeMode
 *   StorageClass           Name Provisioner ReclaimPolicy VolumeBindingMode AllowVolumeExpansion Age
 * Quantities print as stored (the server stores them canonical); an absent storage quantity is "0".
 * A PVC shows capacity and access modes only once bound (`spec.volumeName`). STATUS is Terminating
 * while a deletionTimestamp is set. A class comes from the beta annotation before the field.
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, nameCell } from "./cells.ts";
import { AGE_COLUMN, column, fieldColumn, NAME_COLUMN } from "./columns.ts";
import { at, record, specAndStatus, strings, text, type JsonRecord } from "./json.ts";
import { cellPrinter, type Printer } from "./printer.ts";

const BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class";
const DEFAULT_CLASS_ANNOTATIONS = ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];
/** helper.GetAccessModesAsString's order and abbreviations. */
const ACCESS_MODES: readonly [mode: string, short: string][] = [
  ["ReadWriteOnce", "RWO"],
  ["ReadOnlyMany", "ROX"],
  ["ReadWriteMany", "RWX"],
  ["ReadWriteOncePod", "RWOP"],
];

function accessModesCell(modes: unknown): string {
  const present = new Set(strings(modes));
  return ACCESS_MODES.filter(([mode]) => present.has(mode))
    .map(([, short]) => short)
    .join(",");
}

function storageQuantity(resources: JsonRecord): string {
  return text(resources.storage) || "0";
}

function phaseCell(object: KubeObject): string {
  const deleting = object.metadata.deletionTimestamp !== undefined && object.metadata.deletionTimestamp !== null;
  return deleting ? "Terminating" : text(at(object, "status").phase);
}

/** GetPersistentVolumeClass / GetPersistentVolumeClaimClass: the beta annotation wins over the field. */
function storageClassCell(object: KubeObject, spec: JsonRecord): string {
  const annotations = record(object.metadata.annotations) ?? {};
  if (Object.hasOwn(annotations, BETA_STORAGE_CLASS_ANNOTATION)) return text(annotations[BETA_STORAGE_CLASS_ANNOTATION]);
  return text(spec.storageClassName);
}

function unsetOr(value: unknown): string {
  return typeof value === "string" ? value : "<unset>";
}

const VOLUME_ATTRIBUTES_CLASS_COLUMN = (of: string) => column("VolumeAttributesClass", "string", `VolumeAttributesClass of the ${of}`);

export const PERSISTENT_VOLUME_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("Capacity", "string", "apiv1.PersistentVolumeSpec.capacity"),
    fieldColumn("Access Modes", "string", "apiv1.PersistentVolumeSpec.accessModes"),
    fieldColumn("Reclaim Policy", "string", "apiv1.PersistentVolumeSpec.persistentVolumeReclaimPolicy"),
    fieldColumn("Status", "string", "apiv1.PersistentVolumeStatus.phase"),
    fieldColumn("Claim", "string", "apiv1.PersistentVolumeSpec.claimRef"),
    column("StorageClass", "string", "StorageClass of the pv"),
    VOLUME_ATTRIBUTES_CLASS_COLUMN("pv"),
    fieldColumn("Reason", "string", "apiv1.PersistentVolumeStatus.reason"),
    AGE_COLUMN,
    fieldColumn("VolumeMode", "string", "apiv1.PersistentVolumeSpec.volumeMode", 1),
  ],
  (pv, now) => {
    const spec = at(pv, "spec");
    const claimRef = record(spec.claimRef);
    return [
      nameCell(pv),
      storageQuantity(at(spec, "capacity")),
      accessModesCell(spec.accessModes),
      text(spec.persistentVolumeReclaimPolicy),
      phaseCell(pv),
      claimRef ? `${text(claimRef.namespace)}/${text(claimRef.name)}` : "",
      storageClassCell(pv, spec),
      unsetOr(spec.volumeAttributesClassName),
      text(at(pv, "status").reason),
      ageCell(pv, now),
      unsetOr(spec.volumeMode),
    ];
  },
);

export const PERSISTENT_VOLUME_CLAIM_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("Status", "string", "apiv1.PersistentVolumeClaimStatus.phase"),
    fieldColumn("Volume", "string", "apiv1.PersistentVolumeClaimSpec.volumeName"),
    fieldColumn("Capacity", "string", "apiv1.PersistentVolumeClaimStatus.capacity"),
    fieldColumn("Access Modes", "string", "apiv1.PersistentVolumeClaimStatus.accessModes"),
    column("StorageClass", "string", "StorageClass of the pvc"),
    VOLUME_ATTRIBUTES_CLASS_COLUMN("pvc"),
    AGE_COLUMN,
    fieldColumn("VolumeMode", "string", "apiv1.PersistentVolumeClaimSpec.volumeMode", 1),
  ],
  (pvc, now) => {
    const [spec, status] = specAndStatus(pvc);
    const bound = text(spec.volumeName) !== "";
    return [
      nameCell(pvc),
      phaseCell(pvc),
      text(spec.volumeName),
      bound ? storageQuantity(at(status, "capacity")) : "",
      bound ? accessModesCell(status.accessModes) : "",
      storageClassCell(pvc, spec),
      unsetOr(spec.volumeAttributesClassName),
      ageCell(pvc, now),
      unsetOr(spec.volumeMode),
    ];
  },
);

export const STORAGE_CLASS_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    fieldColumn("Provisioner", "string", "storagev1.StorageClass.provisioner"),
    fieldColumn("ReclaimPolicy", "string", "storagev1.StorageClass.reclaimPolicy"),
    fieldColumn("VolumeBindingMode", "string", "storagev1.StorageClass.volumeBindingMode"),
    fieldColumn("AllowVolumeExpansion", "string", "storagev1.StorageClass.allowVolumeExpansion"),
    AGE_COLUMN,
  ],
  (sc, now) => {
    const annotations = record(sc.metadata.annotations) ?? {};
    const isDefault = DEFAULT_CLASS_ANNOTATIONS.some((key) => annotations[key] === "true");
    return [
      isDefault ? `${nameCell(sc)} (default)` : nameCell(sc),
      text(sc.provisioner),
      text(sc.reclaimPolicy) || "Delete",
      text(sc.volumeBindingMode) || "Immediate",
      sc.allowVolumeExpansion === true,
      ageCell(sc, now),
    ];
  },
);
