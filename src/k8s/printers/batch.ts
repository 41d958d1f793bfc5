/**
 * batch/v1 printers (KK printers.go 1.32 printJob, printCronJob):
 *   Job      Name Status Completions Duration Age | wide: Containers Images Selector
 *   CronJob  Name Schedule Timezone Suspend Active "Last Schedule" Age | wide: Containers Images Selector
 * Job STATUS is the first of Complete, Failed, Terminating (deletionTimestamp), Suspended,
 * FailureTarget whose condition holds, else Running. COMPLETIONS is "succeeded/completions", or
 * without `spec.completions` "succeeded/1", "succeeded/1 of P" when parallelism P > 1. DURATION is
 * empty before `status.startTime`, then runs until `status.completionTime`.
 */
import type { KubeObject } from "../../kube/types.ts";
import { ageCell, boolPointerCell, containerCells, durationBetween, formatLabelSelector, nameCell, sinceCell, templatePodSpec } from "./cells.ts";
import { AGE_COLUMN, column, CONTAINERS_COLUMN, fieldDoc, IMAGES_COLUMN, NAME_COLUMN, wide } from "./columns.ts";
import { at, int, records, text, type JsonRecord } from "./json.ts";
import { cellPrinter, type Printer, type TableCell } from "./printer.ts";

const SELECTOR_COLUMN = wide("Selector", "string", fieldDoc);

/** hasJobCondition: the first condition of `type` decides, and it holds when its status is "True". */
function hasJobCondition(status: JsonRecord, type: string): boolean {
  return records(status.conditions).find((c) => c.type === type)?.status === "True";
}

function jobStatus(job: KubeObject, status: JsonRecord): string {
  if (hasJobCondition(status, "Complete")) return "Complete";
  if (hasJobCondition(status, "Failed")) return "Failed";
  if (job.metadata.deletionTimestamp !== undefined && job.metadata.deletionTimestamp !== null) return "Terminating";
  if (hasJobCondition(status, "Suspended")) return "Suspended";
  if (hasJobCondition(status, "FailureTarget")) return "FailureTarget";
  return "Running";
}

function completionsCell(spec: JsonRecord, status: JsonRecord): string {
  const succeeded = int(status.succeeded);
  if (typeof spec.completions === "number") return `${succeeded}/${int(spec.completions)}`;
  const parallelism = int(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** Containers, Images and Selector of a job spec (a Job's own, or a CronJob's jobTemplate.spec). */
function jobWideCells(jobSpec: JsonRecord): TableCell[] {
  return [...containerCells(templatePodSpec(jobSpec)), formatLabelSelector(jobSpec.selector)];
}

export const JOB_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Status", "string", "Status of the job."),
    column("Completions", "string", fieldDoc),
    column("Duration", "string", "Time required to complete the job."),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  (job, now) => {
    const spec = at(job, "spec");
    const status = at(job, "status");
    return [
      nameCell(job),
      jobStatus(job, status),
      completionsCell(spec, status),
      durationBetween(status.startTime, status.completionTime, now),
      ageCell(job, now),
      ...jobWideCells(spec),
    ];
  },
);

export const CRON_JOB_PRINTER: Printer = cellPrinter(
  [
    NAME_COLUMN,
    column("Schedule", "string", fieldDoc),
    column("Timezone", "string", fieldDoc),
    column("Suspend", "boolean", fieldDoc),
    column("Active", "integer", fieldDoc),
    column("Last Schedule", "string", fieldDoc),
    AGE_COLUMN,
    CONTAINERS_COLUMN,
    IMAGES_COLUMN,
    SELECTOR_COLUMN,
  ],
  (cronJob, now) => {
    const spec = at(cronJob, "spec");
    const status = at(cronJob, "status");
    return [
      nameCell(cronJob),
      text(spec.schedule),
      typeof spec.timeZone === "string" ? spec.timeZone : "<none>",
      boolPointerCell(spec.suspend),
      records(status.active).length,
      status.lastScheduleTime === undefined || status.lastScheduleTime === null ? "<none>" : sinceCell(status.lastScheduleTime, now),
      ageCell(cronJob, now),
      ...jobWideCells(at(spec, "jobTemplate", "spec")),
    ];
  },
);
