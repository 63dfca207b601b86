// Operations on automations: read, change, delete and run them.
import { z } from "zod";
import { AutomationKind, checkStepsForKind, Step } from "./automation-format";
import { defineOperation, Description, FilterId, ListQuery, Name, page, PathId, ProjectParams, RUN_FLAGS, RunRequest, Tag } from "./define";
import { Automation, AutomationStatus, Run } from "./records";

const Params = ProjectParams.extend({ automationId: PathId.describe("Automation id (aut_…) or exact name") });
const Tags = z.array(Tag).max(50).describe("Labels to find it by");
const Steps = z.array(Step).min(1).max(500).describe("The steps, in order: request steps for http, browser steps for browser (svc://docs/automations)");
const TimeoutMs = z
  .number()
  .int()
  .min(1000)
  .max(3_600_000)
  .describe("Longest a run may take, in ms (default: the server's runner.default_timeout_ms, 300000 unless configured)");
const Retries = z.number().int().min(0).max(10).describe("Attempts after a failed one before the run fails (default 0)");
const AutomationName = Name.describe("What it checks, in a few words");
const AutomationDescription = Description.describe("More about what it checks, for people");
const Kind = AutomationKind.describe("http (requests and assertions) or browser (a real browser)");

export const listAutomations = defineOperation({
  name: "list_automations",
  method: "GET",
  path: "/projects/{project}/automations",
  summary: "List a project's automations, filtered by feature, group, tag, status, kind or text",
  params: ProjectParams,
  query: ListQuery.extend({
    feature: FilterId.optional().describe("Feature id (fea_…) or exact name"),
    group: FilterId.optional().describe("Group id (grp_…) or exact name"),
    status: AutomationStatus.optional().describe("Only automations with this status"),
    kind: AutomationKind.optional().describe("Only automations of this kind"),
    q: z.string().max(200).optional().describe("Text in the name or description"),
    tag: z.array(Tag).max(50).optional().describe("Tag (repeatable: ?tag=a&tag=b); an automation matches with any of them, ignoring case"),
  }),
  response: page(Automation, "AutomationPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["automations", "list"] },
});

export const createAutomation = defineOperation({
  name: "create_automation",
  method: "POST",
  path: "/projects/{project}/automations",
  summary: "Create an automation (http or browser steps); its name is unique in the project",
  params: ProjectParams,
  body: z
    .strictObject({
      name: AutomationName,
      description: AutomationDescription.optional(),
      kind: Kind,
      steps: Steps,
      feature: z.string().max(200).optional().describe("Feature (id or exact name) to link it to"),
      environment: z.string().max(200).optional().describe("Default environment, name or id"),
      tags: Tags.optional(),
      status: AutomationStatus.optional().describe("Default: active"),
      timeout_ms: TimeoutMs.optional(),
      retries: Retries.optional(),
    })
    .superRefine((b, ctx) => checkStepsForKind(b.kind, b.steps, ctx)),
  response: Automation,
  successStatus: 201,
  errors: ["not_found", "conflict"],
  versioned: true,
  cli: { words: ["automations", "create"] },
});

export const getAutomation = defineOperation({
  name: "get_automation",
  method: "GET",
  path: "/projects/{project}/automations/{automationId}",
  summary: "Read one automation",
  params: Params,
  response: Automation,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  versioned: true,
  cli: { words: ["automations", "show"], args: ["automationId"] },
});

export const updateAutomation = defineOperation({
  name: "update_automation",
  method: "PATCH",
  path: "/projects/{project}/automations/{automationId}",
  summary: "Update one automation (steps, status draft/active/disabled, settings)",
  params: Params,
  body: z.strictObject({
    name: AutomationName.optional(),
    description: AutomationDescription.optional(),
    kind: Kind.optional(),
    steps: Steps.optional(),
    feature: z.string().max(200).nullable().optional().describe("Feature (id or exact name) to link it to; null unlinks it"),
    environment: z.string().max(200).nullable().optional().describe("Default environment (id or exact name); null: none"),
    tags: Tags.optional(),
    status: AutomationStatus.optional().describe("draft (not run by groups), active or disabled"),
    timeout_ms: TimeoutMs.optional(),
    retries: Retries.optional(),
    quarantined: z.boolean().optional().describe("True: it keeps running, but its failures do not fail its group run or the CLI's exit code (reported apart)"),
  }),
  response: Automation,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { idempotent: true, destructive: true },
  versioned: true,
  cli: { words: ["automations", "update"], args: ["automationId"] },
});

export const deleteAutomation = defineOperation({
  name: "delete_automation",
  method: "DELETE",
  path: "/projects/{project}/automations/{automationId}",
  summary: "Delete one automation (its queued or running runs are cancelled; finished runs stay readable)",
  params: Params,
  response: null,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["automations", "delete"], args: ["automationId"] },
});

export const runAutomation = defineOperation({
  name: "run_automation",
  method: "POST",
  path: "/projects/{project}/automations/{automationId}/run",
  summary: "Start a run of the automation",
  params: Params,
  body: RunRequest,
  response: Run,
  successStatus: 202,
  errors: ["not_found", "conflict", "forbidden"],
  startsWork: true,
  cli: { words: ["automations", "run"], args: ["automationId"], flags: RUN_FLAGS, watch: "run" },
});

export const listAutomationRuns = defineOperation({
  name: "list_automation_runs",
  method: "GET",
  path: "/projects/{project}/automations/{automationId}/runs",
  summary: "List runs of the automation, newest first",
  params: Params,
  query: ListQuery,
  response: page(Run, "RunPage"),
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cached: true,
  cli: { words: ["automations", "runs"], args: ["automationId"] },
});
