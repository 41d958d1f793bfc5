/** What the alarm should do next: step again, wait until a time, or sleep (null: no alarm at all). */
export type StepResult = { kind: "progress" } | { kind: "wait"; until: number } | { kind: "idle"; until: number | null };
