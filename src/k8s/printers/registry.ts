/**
 * The one place that maps a kind to its Table printer. Built-in kinds are keyed by API group and
 * kind, as kube-apiserver registers a printer per Go type (the core and events.k8s.io Events share
 * one, as they share the server's internal type); built-ins without a printers.go handler get the
 * default convertor; anything else is a custom resource and gets the CRD convertor, with the CRD's
 * additionalPrinterColumns when the caller passes them (see PrinterColumnSource in default.ts).
 */
import { CONTROLLER_REVISION_PRINTER, DAEMON_SET_PRINTER, DEPLOYMENT_PRINTER, REPLICA_SET_PRINTER, REPLICATION_CONTROLLER_PRINTER, STATEFUL_SET_PRINTER } from "./apps.ts";
import { HORIZONTAL_POD_AUTOSCALER_PRINTER } from "./autoscaling.ts";
import { CRON_JOB_PRINTER, JOB_PRINTER } from "./batch.ts";
import { CONFIG_MAP_PRINTER, NAMESPACE_PRINTER, POD_TEMPLATE_PRINTER, RESOURCE_QUOTA_PRINTER, SECRET_PRINTER, SERVICE_ACCOUNT_PRINTER } from "./core.ts";
import { customResourcePrinter, DEFAULT_PRINTER, type PrinterColumn } from "./default.ts";
import { EVENT_PRINTER } from "./events.ts";
import { ENDPOINT_SLICE_PRINTER, INGRESS_CLASS_PRINTER, INGRESS_PRINTER, NETWORK_POLICY_PRINTER } from "./networking.ts";
import { NODE_PRINTER } from "./node.ts";
import { POD_PRINTER } from "./pod.ts";
import { LEASE_PRINTER, POD_DISRUPTION_BUDGET_PRINTER } from "./policy.ts";
import type { Printer } from "./printer.ts";
import { CLUSTER_ROLE_BINDING_PRINTER, ROLE_BINDING_PRINTER } from "./rbac.ts";
import { ENDPOINTS_PRINTER, SERVICE_PRINTER } from "./service.ts";
import { PERSISTENT_VOLUME_CLAIM_PRINTER, PERSISTENT_VOLUME_PRINTER, STORAGE_CLASS_PRINTER } from "./storage.ts";

/** A kind in its API group ("" for core), as the server registers a printer per Go type. */
export interface GroupKind {
  group: string;
  kind: string;
}

/** The built-in printers by group, then kind. */
const BUILT_IN_PRINTERS: Readonly<Record<string, Readonly<Record<string, Printer>>>> = {
  "": {
    Pod: POD_PRINTER,
    Service: SERVICE_PRINTER,
    Endpoints: ENDPOINTS_PRINTER,
    ConfigMap: CONFIG_MAP_PRINTER,
    Secret: SECRET_PRINTER,
    ServiceAccount: SERVICE_ACCOUNT_PRINTER,
    PersistentVolumeClaim: PERSISTENT_VOLUME_CLAIM_PRINTER,
    PersistentVolume: PERSISTENT_VOLUME_PRINTER,
    Event: EVENT_PRINTER,
    ReplicationController: REPLICATION_CONTROLLER_PRINTER,
    ResourceQuota: RESOURCE_QUOTA_PRINTER,
    PodTemplate: POD_TEMPLATE_PRINTER,
    Namespace: NAMESPACE_PRINTER,
    Node: NODE_PRINTER,
    // No printers.go handler: the default convertor.
    LimitRange: DEFAULT_PRINTER,
  },
  apps: {
    Deployment: DEPLOYMENT_PRINTER,
    ReplicaSet: REPLICA_SET_PRINTER,
    StatefulSet: STATEFUL_SET_PRINTER,
    DaemonSet: DAEMON_SET_PRINTER,
    ControllerRevision: CONTROLLER_REVISION_PRINTER,
  },
  batch: { Job: JOB_PRINTER, CronJob: CRON_JOB_PRINTER },
  autoscaling: { HorizontalPodAutoscaler: HORIZONTAL_POD_AUTOSCALER_PRINTER },
  policy: { PodDisruptionBudget: POD_DISRUPTION_BUDGET_PRINTER },
  "networking.k8s.io": { Ingress: INGRESS_PRINTER, IngressClass: INGRESS_CLASS_PRINTER, NetworkPolicy: NETWORK_POLICY_PRINTER },
  "discovery.k8s.io": { EndpointSlice: ENDPOINT_SLICE_PRINTER },
  // The server converts events.k8s.io/v1 Events to the core internal type and prints them alike.
  "events.k8s.io": { Event: EVENT_PRINTER },
  "coordination.k8s.io": { Lease: LEASE_PRINTER },
  "rbac.authorization.k8s.io": {
    RoleBinding: ROLE_BINDING_PRINTER,
    ClusterRoleBinding: CLUSTER_ROLE_BINDING_PRINTER,
    Role: DEFAULT_PRINTER,
    ClusterRole: DEFAULT_PRINTER,
  },
  "storage.k8s.io": { StorageClass: STORAGE_CLASS_PRINTER },
  "apiextensions.k8s.io": { CustomResourceDefinition: DEFAULT_PRINTER },
};

const PLAIN_CUSTOM_RESOURCE_PRINTER = customResourcePrinter();

/** The built-in printer of a group and kind, if there is one (own properties only: "constructor" is no kind). */
function builtInPrinter({ group, kind }: GroupKind): Printer | undefined {
  const kinds = Object.hasOwn(BUILT_IN_PRINTERS, group) ? BUILT_IN_PRINTERS[group] : undefined;
  return kinds && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;
}

/**
 * The printer for objects of a group and kind. Any other group and kind is a custom resource, even
 * one named like a built-in (a `Pod` in `example.com`): its `customColumns` (the CRD's
 * additionalPrinterColumns) when given, else Name/Age.
 */
export function printerFor(groupKind: GroupKind, customColumns?: readonly PrinterColumn[]): Printer {
  return builtInPrinter(groupKind) ?? (customColumns ? customResourcePrinter(customColumns) : PLAIN_CUSTOM_RESOURCE_PRINTER);
}
