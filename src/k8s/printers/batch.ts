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
import { boolPointerCell, containerCells, durationBetween, formatLabelSelector, sinceCell, templatePodSpec } from "./cells.ts";
import { column, fieldColumn, templateWideColumns } from "./columns.ts";
import { at, int, records, specAndStatus, text, type JsonRecord } from "./json.ts";
import { nameAgePrinter } from "./name-age-printer.ts";
import type { Printer, TableCell } from "./printer.ts";

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

/** A Job's and a CronJob's wide columns: both describe Selector by the JobSpec's selector. */
const JOB_WIDE_COLUMNS = templateWideColumns("batchv1.JobSpec.selector");

/** Containers, Images and Selector of a job spec (a Job's own, or a CronJob's jobTemplate.spec). */
function jobWideCells(jobSpec: JsonRecord): TableCell[] {
  return [...containerCells(templatePodSpec(jobSpec)), formatLabelSelector(jobSpec.selector)];
}

export const JOB_PRINTER: Printer = nameAgePrinter(
  [column("Status", "string", "Status of the job."), fieldColumn("Completions", "string", "batchv1.JobStatus.succeeded"), column("Duration", "string", "Time required to complete the job.")],
  JOB_WIDE_COLUMNS,
  (job, now) => {
    const [spec, status] = specAndStatus(job);
    return {
      own: [jobStatus(job, status), completionsCell(spec, status), durationBetween(status.startTime, status.completionTime, now)],
      wide: jobWideCells(spec),
    };
  },
);

export const CRON_JOB_PRINTER: Printer = nameAgePrinter(
  [
    fieldColumn("Schedule", "string", "batchv1beta1.CronJobSpec.schedule"),
    fieldColumn("Timezone", "string", "batchv1beta1.CronJobSpec.timeZone"),
    fieldColumn("Suspend", "boolean", "batchv1beta1.CronJobSpec.suspend"),
    fieldColumn("Active", "integer", "batchv1beta1.CronJobStatus.active"),
    fieldColumn("Last Schedule", "string", "batchv1beta1.CronJobStatus.lastScheduleTime"),
  ],
  JOB_WIDE_COLUMNS,
  (cronJob, now) => {
    const [spec, status] = specAndStatus(cronJob);
    const lastSchedule = status.lastScheduleTime === undefined || status.lastScheduleTime === null ? "<none>" : sinceCell(status.lastScheduleTime, now);
    return {
      own: [text(spec.schedule), typeof spec.timeZone === "string" ? spec.timeZone : "<none>", boolPointerCell(spec.suspend), records(status.active).length, lastSchedule],
      wide: jobWideCells(at(spec, "jobTemplate", "spec")),
    };
  },
);
