/**
 * Reference printers of batch/v1 (printers.go 1.32 printJob, printCronJob); wide columns marked *:
 *   Job      Name Status Completions Duration Age Containers* Images* Selector*
 *   CronJob  Name Schedule Timezone Suspend Active "Last Schedule" Age Containers* Images* Selector*
 * Job STATUS is decided in this order: a Complete condition that is True, Failed, a deletion under
 * way (Terminating), Suspended, FailureTarget, else Running. A CronJob's Suspend cell is the text
 * printBoolPtr gives (True / False / <unset>) under a column declared boolean.
 */
import { ageOf, containerCells, formatLabelSelector, isTime, type Json, list, nameOf, num, parts, type ReferencePrinter, shortAge, since, str } from "./cells.ts";

/** hasJobCondition: the first condition of the type decides. */
const holds = (status: Json, type: string): boolean => list(status.conditions).find((c) => c.type === type)?.status === "True";

function jobStatus(obj: Json, status: Json): string {
  if (holds(status, "Complete")) return "Complete";
  if (holds(status, "Failed")) return "Failed";
  if (obj.metadata.deletionTimestamp) return "Terminating";
  if (holds(status, "Suspended")) return "Suspended";
  if (holds(status, "FailureTarget")) return "FailureTarget";
  return "Running";
}

function completions(spec: Json, status: Json): string {
  const succeeded = status.succeeded ?? 0;
  // completions and parallelism are pointers.
  if (spec.completions !== undefined && spec.completions !== null) return `${succeeded}/${spec.completions}`;
  const parallelism = spec.parallelism ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function duration(status: Json, now: number): string {
  if (!isTime(status.startTime)) return "";
  const end = isTime(status.completionTime) ? Date.parse(status.completionTime) : now;
  return shortAge(end - Date.parse(status.startTime));
}

/** The wide cells of a job spec: its template's containers and its selector. */
const jobWide = (jobSpec: Json | undefined) => [...containerCells(jobSpec?.template?.spec), str("Selector", formatLabelSelector(jobSpec?.selector), 1)];

export const job: ReferencePrinter = (obj, now) => {
  const { o, spec, status } = parts(obj);
  return [
    nameOf(obj),
    str("Status", jobStatus(o, status)),
    str("Completions", completions(spec, status)),
    str("Duration", duration(status, now)),
    ageOf(obj, now),
    ...jobWide(spec),
  ];
};

export const cronJob: ReferencePrinter = (obj, now) => {
  const { spec, status } = parts(obj);
  const suspend = typeof spec.suspend === "boolean" ? (spec.suspend ? "True" : "False") : "<unset>";
  return [
    nameOf(obj),
    str("Schedule", spec.schedule ?? ""),
    str("Timezone", spec.timeZone ?? "<none>"),
    { ...str("Suspend", suspend), type: "boolean" },
    num("Active", list(status.active).length, "integer"),
    str("Last Schedule", status.lastScheduleTime ? since(status.lastScheduleTime, now) : "<none>"),
    ageOf(obj, now),
    ...jobWide(spec.jobTemplate?.spec),
  ];
};
