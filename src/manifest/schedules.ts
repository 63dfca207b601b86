// Operations on schedules: runs started by the clock, on a cron expression or every N seconds.
import { z } from "zod";
import { defineOperation, ListQuery, Name, page, PathId, ProjectParams, Tag } from "./define";
import { Schedule, targetKindsProblem } from "./schedule-records";

/** The shortest interval a schedule may have. */
const MIN_INTERVAL_SECONDS = 10;
const IntervalSeconds = z
  .number()
  .int()
  .min(MIN_INTERVAL_SECONDS, `at least ${MIN_INTERVAL_SECONDS} seconds`)
  .max(366 * 86_400)
  .describe(`Run every this many seconds (at least ${MIN_INTERVAL_SECONDS}); instead of cron`);
const Cron = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe('A 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "*/15 * * * 1-5"; instead of interval_seconds');
const TimeZone = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .describe('The IANA time zone the cron expression is read in (e.g. "Europe/Berlin"), or UTC (the default); not an offset. Stored in its canonical spelling');

const OneTarget = z.union([
  z.strictObject({ automation: z.string().min(1).max(200).describe("Automation id (aut_…) or exact name") }),
  z.strictObject({ group: z.string().min(1).max(200).describe("Group id (grp_…) or exact name") }),
  z.strictObject({
    tags: z
      .array(Tag)
      .min(1)
      .max(50)
      .describe("The project's active automations carrying ANY of these tags (ignoring case, as run_selection), run as one group run"),
  }),
]);
const TargetIn = z
  .preprocess((value: z.input<typeof OneTarget>, ctx) => {
    const problem = targetKindsProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
    return value;
  }, OneTarget)
  .describe('What the schedule runs, exactly one of: {"automation": …}, {"group": …} or {"tags": [...]}');

const ScheduleParams = ProjectParams.extend({ scheduleId: PathId.describe("Schedule id (sch_…) or exact name") });
const Environment = z.string().min(1).max(200).nullable().describe("Environment name or id; null or absent: each automation's own");

export const listSchedules = defineOperation({
  name: "list_schedules",
  method: "GET",
  path: "/projects/{project}/schedules",
  summary: "List a project's schedules with their next due times",
  params: ProjectParams,
  query: ListQuery,
  response: page(Schedule, "SchedulePage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["schedules", "list"] },
});

export const createSchedule = defineOperation({
  name: "create_schedule",
  method: "POST",
  path: "/projects/{project}/schedules",
  summary: "Create a schedule: run an automation, a group or the automations with given tags on cron or every N seconds",
  params: ProjectParams,
  body: z.strictObject({
    name: Name.describe("The schedule's name, unique in the project (e.g. nightly)"),
    target: TargetIn,
    environment: Environment.optional(),
    cron: Cron.optional(),
    timezone: TimeZone.optional(),
    interval_seconds: IntervalSeconds.optional(),
    enabled: z.boolean().default(true).describe("false: the schedule starts nothing until enabled again"),
  }),
  response: Schedule,
  successStatus: 201,
  errors: ["not_found", "conflict", "forbidden"],
  versioned: true,
  cli: { words: ["schedules", "create"], args: ["name"], flags: { interval_seconds: "every" } },
});

export const getSchedule = defineOperation({
  name: "get_schedule",
  method: "GET",
  path: "/projects/{project}/schedules/{scheduleId}",
  summary: "Read one schedule with its next due times",
  params: ScheduleParams,
  response: Schedule,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  versioned: true,
  cli: { words: ["schedules", "show"], args: ["scheduleId"] },
});

export const updateSchedule = defineOperation({
  name: "update_schedule",
  method: "PATCH",
  path: "/projects/{project}/schedules/{scheduleId}",
  summary: "Update a schedule (giving cron drops interval_seconds and the other way round)",
  params: ScheduleParams,
  body: z.strictObject({
    name: Name.optional().describe("A new name for the schedule"),
    target: TargetIn.optional(),
    environment: Environment.optional(),
    cron: Cron.optional(),
    timezone: TimeZone.optional(),
    interval_seconds: IntervalSeconds.optional(),
    enabled: z.boolean().optional().describe("false pauses the schedule; true resumes it"),
  }),
  response: Schedule,
  errors: ["not_found", "conflict", "forbidden", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["schedules", "update"], args: ["scheduleId"], flags: { interval_seconds: "every" } },
});

export const deleteSchedule = defineOperation({
  name: "delete_schedule",
  method: "DELETE",
  path: "/projects/{project}/schedules/{scheduleId}",
  summary: "Delete a schedule (the runs it started stay)",
  params: ScheduleParams,
  response: null,
  errors: ["not_found", "conflict", "forbidden", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["schedules", "delete"], args: ["scheduleId"] },
});
